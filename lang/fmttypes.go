package lang

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
)

// yaegi v0.16.1 represents a struct type declared in a cell by an unnamed
// reflect struct type whose unexported fields carry an "X" prefix, so Go's
// fmt prints %T of a point as `struct { Xx int; Xy int }` and %+v as
// {Xx:1 Xy:2}. The session replaces fmt's formatting functions by wrappers
// that print %T, %+v and %#v of the cell's struct types as Go does
// (main.point, {x:1 y:2}, main.point{x:1, y:2}), from a registry of those
// types kept up to date as cells declare them.
//
// Not covered: named non-struct types (yaegi gives `type celsius float64`
// the reflect type float64, indistinguishable from it) and values held in a
// field of a compiled type (printed by fmt itself).

// cellType is a struct type declared in a cell; the zero value is none.
type cellType struct {
	name   string   // "main.point"
	fields []string // the declared field names, in order
}

// cellTypes finds the cells' struct types among reflect types by their
// field names (yaegi's are the declared ones, unexported ones prefixed by
// "X"): looking types up in the interpreter would compile code, which
// would run a cell's main again. Goroutines of earlier cells may format
// while a cell registers types, hence the lock.
type cellTypes struct {
	mu       sync.Mutex
	declared []cellType                // in declaration order
	byType   map[reflect.Type]cellType // found so far; name "" if none matches
}

// noteTypes registers the struct types of the session and those a cell
// about to run declares (cell, name to declaration; these win when two types
// have the same fields). prepareTypes calls it before a cell runs (its main
// may print its types), commitTypes after.
func (s *Session) noteTypes(cell map[string]string) {
	var declared []cellType
	add := func(user, decl string) {
		if fields := declFields(decl); fields != nil {
			declared = append(declared, cellType{name: "main." + user, fields: fields})
		}
	}
	for _, user := range sortedKeys(cell) {
		add(user, cell[user])
	}
	for _, user := range sortedKeys(s.types) {
		add(user, s.types[user].decl)
	}
	c := &s.cellTypes
	c.mu.Lock()
	c.declared, c.byType = declared, map[reflect.Type]cellType{}
	c.mu.Unlock()
}

// lookup returns the cell type t is, if any. c.mu is held.
func (c *cellTypes) lookup(t reflect.Type) (cellType, bool) {
	if t.Kind() != reflect.Struct || t.Name() != "" || t.NumField() == 0 {
		return cellType{}, false
	}
	ct, ok := c.byType[t]
	if !ok {
		if c.byType == nil {
			c.byType = map[reflect.Type]cellType{}
		}
		for _, d := range c.declared {
			if d.matches(t) {
				ct = d
				break
			}
		}
		c.byType[t] = ct
	}
	return ct, ct.name != ""
}

// matches reports whether the reflect type t has ct's fields.
func (ct cellType) matches(t reflect.Type) bool {
	if len(ct.fields) != t.NumField() {
		return false
	}
	for i, f := range ct.fields {
		if n := t.Field(i).Name; n != f && n != "X"+f {
			return false
		}
	}
	return true
}

// declFields returns the field names of the struct type declaration decl
// ("type T struct{…}"), an embedded field by its type's name.
func declFields(decl string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package main;"+decl, parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return nil
	}
	gd, ok := f.Decls[0].(*ast.GenDecl)
	if !ok || len(gd.Specs) != 1 {
		return nil
	}
	st, ok := gd.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType)
	if !ok {
		return nil
	}
	var names []string
	for _, fl := range st.Fields.List {
		if len(fl.Names) == 0 {
			t := fl.Type
			if star, ok := t.(*ast.StarExpr); ok {
				t = star.X
			}
			if sel, ok := t.(*ast.SelectorExpr); ok {
				t = sel.Sel
			}
			if id, ok := t.(*ast.Ident); ok {
				names = append(names, id.Name)
			} else {
				return nil
			}
		}
		for _, id := range fl.Names {
			names = append(names, id.Name)
		}
	}
	return names
}

// typeName is Go's name of t (as %T prints it), with the cells' types named.
func (c *cellTypes) typeName(t reflect.Type) (string, bool) {
	if ct, ok := c.lookup(t); ok {
		return ct.name, true
	}
	var elem string
	var ok bool
	switch t.Kind() {
	case reflect.Pointer:
		elem, ok = c.typeName(t.Elem())
		return "*" + elem, ok
	case reflect.Slice:
		elem, ok = c.typeName(t.Elem())
		return "[]" + elem, ok
	case reflect.Array:
		elem, ok = c.typeName(t.Elem())
		return fmt.Sprintf("[%d]%s", t.Len(), elem), ok
	case reflect.Map:
		k, okk := c.typeName(t.Key())
		elem, ok = c.typeName(t.Elem())
		return "map[" + k + "]" + elem, ok || okk
	}
	return t.String(), false
}

// format returns the text of v under verb 'v' with the flag '+' or '#' if v
// is, or points to, a value of a cell's struct type.
func (c *cellTypes) format(v reflect.Value, sharp bool) (string, bool) {
	if !v.IsValid() {
		return "", false
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		if _, ok := c.lookup(v.Type().Elem()); ok {
			s, _ := c.format(v.Elem(), sharp)
			return "&" + s, true
		}
		return "", false
	}
	ct, ok := c.lookup(v.Type())
	if !ok {
		return "", false
	}
	var sb strings.Builder
	if sharp {
		sb.WriteString(ct.name)
	}
	sb.WriteByte('{')
	for i := 0; i < v.NumField(); i++ {
		if i > 0 {
			if sharp {
				sb.WriteString(", ")
			} else {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(ct.fields[i] + ":")
		f := v.Field(i)
		if s, ok := c.format(f, sharp); ok && f.Kind() != reflect.Pointer {
			sb.WriteString(s)
			continue
		}
		verb := "%+v"
		if sharp {
			verb = "%#v"
		}
		if f.CanInterface() {
			fmt.Fprintf(&sb, verb, f.Interface())
		} else {
			fmt.Fprintf(&sb, verb, f)
		}
	}
	sb.WriteByte('}')
	return sb.String(), true
}

// rewrite returns format and args with the %T, %+v and %#v verbs of the
// cells' types replaced by %s of their text. A format with explicit argument
// indexes is left alone.
func (c *cellTypes) rewrite(format string, args []any) (string, []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.declared) == 0 || strings.IndexByte(format, '%') < 0 || strings.Contains(format, "%[") {
		return format, args
	}
	var out strings.Builder
	var changed bool
	newArgs := append([]any(nil), args...)
	arg := 0
	for i := 0; i < len(format); i++ {
		ch := format[i]
		out.WriteByte(ch)
		if ch != '%' {
			continue
		}
		start := i + 1
		j := start
		plus, sharp := false, false
		for j < len(format) && strings.IndexByte("+-# 0", format[j]) >= 0 {
			plus = plus || format[j] == '+'
			sharp = sharp || format[j] == '#'
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.' || format[j] == '*') {
			if format[j] == '*' {
				arg++
			}
			j++
		}
		if j >= len(format) {
			out.WriteString(format[start:])
			break
		}
		verb := format[j]
		flags := format[start:j]
		i = j
		if verb == '%' {
			out.WriteString(flags + "%")
			continue
		}
		if arg >= len(args) {
			out.WriteString(flags + string(verb))
			continue
		}
		a := args[arg]
		arg++
		switch {
		case verb == 'T' && a != nil:
			if name, ok := c.typeName(reflect.TypeOf(unwrapValue(a))); ok {
				newArgs[arg-1], changed = name, true
				out.WriteString(strings.NewReplacer("+", "", "#", "").Replace(flags) + "s")
				continue
			}
		case verb == 'v' && (plus || sharp):
			if s, ok := c.format(reflect.ValueOf(unwrapValue(a)), sharp); ok {
				newArgs[arg-1], changed = s, true
				out.WriteString(strings.NewReplacer("+", "", "#", "").Replace(flags) + "s")
				continue
			}
		}
		out.WriteString(flags + string(verb))
	}
	if !changed {
		return format, args
	}
	return out.String(), newArgs
}

// unwrapValue returns the value of a cell's type that yaegi wrapped to pass
// it to fmt as a fmt.Stringer or fmt.Formatter (its wrappers hold it in
// their first field, IValue).
func unwrapValue(a any) any {
	v := reflect.ValueOf(a)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct && v.NumField() > 0 && v.Type().Field(0).Name == "IValue" && v.Field(0).CanInterface() {
		if inner := v.Field(0).Interface(); inner != nil {
			return inner
		}
	}
	return a
}

// wrapFmt replaces fmt's formatting functions in the interpreter by ones
// that name the cells' types (see cellTypes.rewrite). They call the
// functions they replace, which yaegi bound to the session's output.
func (s *Session) wrapFmt() error {
	p := s.in.Symbols("fmt")["fmt"]
	if p == nil {
		return fmt.Errorf("wrapping fmt: the interpreter has no package fmt")
	}
	printf := p["Printf"].Interface().(func(string, ...any) (int, error))
	c := &s.cellTypes
	wrapped := map[string]reflect.Value{
		"Printf": reflect.ValueOf(func(format string, a ...any) (int, error) {
			format, a = c.rewrite(format, a)
			return printf(format, a...)
		}),
		"Sprintf": reflect.ValueOf(func(format string, a ...any) string {
			format, a = c.rewrite(format, a)
			return fmt.Sprintf(format, a...)
		}),
		"Fprintf": reflect.ValueOf(func(w io.Writer, format string, a ...any) (int, error) {
			format, a = c.rewrite(format, a)
			return fmt.Fprintf(w, format, a...)
		}),
		"Errorf": reflect.ValueOf(func(format string, a ...any) error {
			format, a = c.rewrite(format, a)
			return fmt.Errorf(format, a...)
		}),
	}
	// yaegi passes a cell's value to fmt as a fmt.Stringer or fmt.Formatter
	// when it has the methods: the wrappers need the same mapping.
	mt := []reflect.Type{
		reflect.TypeOf((*fmt.Formatter)(nil)).Elem(),
		reflect.TypeOf((*fmt.Stringer)(nil)).Elem(),
	}
	mapTypes := map[reflect.Value][]reflect.Type{}
	for name, f := range wrapped {
		p[name] = f
		mapTypes[f] = mt
	}
	if err := s.in.Use(interp.Exports{".": {"MapTypes": reflect.ValueOf(mapTypes)}}); err != nil {
		return fmt.Errorf("wrapping fmt: %w", err)
	}
	return nil
}
