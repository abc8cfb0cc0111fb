package lang

import (
	"fmt"
	"go/constant"
	"reflect"
	"strings"

	"github.com/harmonium-rbm/harmonium/stdlib"
)

// Inspect describes the name at cursor (a byte offset) or, as IPython does,
// the function whose call's parentheses are open at cursor
// (`rbm.NewChains(|`): for compiled functions, types, methods and constants
// their signature and Go doc comment (extracted at build time), for cell
// variables their type and a summary, for cell functions and types their
// signature, or their whole source at detail level 1 and above. found is
// false if nothing is known.
func (s *Session) Inspect(code string, cursor, detail int) (data map[string]any, found bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cursor = max(0, min(cursor, len(code)))
	if call := enclosingCall(code, cursor); call != "" {
		if text := s.describe(call, detail); text != "" {
			return map[string]any{"text/plain": text}, true
		}
	}
	start := cursor
	for start > 0 && (isIdentByte(code[start-1]) || code[start-1] == '.') {
		start--
	}
	end := cursor
	for end < len(code) && isIdentByte(code[end]) {
		end++
	}
	expr := strings.Trim(code[start:end], ".")
	if expr == "" {
		return nil, false
	}
	text := s.describe(expr, detail)
	if text == "" {
		return nil, false
	}
	return map[string]any{"text/plain": text}, true
}

// describe is the inspection text of expr; detail 1 asks for source where
// there is some (functions and types declared in cells).
func (s *Session) describe(expr string, detail int) string {
	parts := strings.Split(expr, ".")
	// Package member, or method of a package type: pkg.Name[.Method].
	if p, ok := s.imports[parts[0]]; ok {
		if len(parts) == 1 {
			d, _ := stdlib.Doc(p)
			return strings.TrimSpace("package " + parts[0] + " (" + p + ")\n\n" + strings.TrimPrefix(d, "package "+s.names[p]+" // import \""+p+"\"\n\n"))
		}
		key := p + "." + strings.Join(parts[1:], ".")
		d, hasDoc := stdlib.Doc(key)
		sig := ""
		if v, ok := s.exports[p][parts[1]]; ok && len(parts) == 2 {
			sig = signature(parts[0]+"."+parts[1], v)
		}
		text := sig
		if hasDoc {
			text = strings.TrimSpace(d)
		}
		if text == "" || detail == 0 {
			return text
		}
		if src, ok := stdlib.Source(key); ok {
			return text + "\n\n" + src
		}
		return text + "\n\n(compiled Go in package " + p + ": its source is not part of the session)"
	}
	// A function declared in a cell: its signature, or its source.
	if src, ok := s.sources[expr]; ok && s.decls[expr] == "func" {
		if detail > 0 {
			return src + "\n"
		}
		return firstLine(src) + "\n\n(declared in a cell; " + expr + "?? shows its source)"
	}
	// A variable (or a field/method chain on one).
	if v, ok := s.probe(expr); ok && v.IsValid() {
		var sb strings.Builder
		typ := typeName(v)
		if name := s.cellTypeOf(derefIface(v)); name != "" {
			typ = name + " (declared in a cell)"
		}
		fmt.Fprintf(&sb, "%s: %s\n", expr, typ)
		if v.Kind() == reflect.Func {
			return sb.String()
		}
		if v.CanInterface() {
			fmt.Fprintf(&sb, "value: %s\n", summary(v))
		}
		if d := typeDoc(v); d != "" {
			sb.WriteString("\n" + d)
		}
		return sb.String()
	}
	// A type or function declared in a cell.
	if rec, ok := s.types[expr]; ok {
		var sb strings.Builder
		sb.WriteString(rec.decl + "\n")
		for _, m := range sortedKeys(rec.methods) {
			if detail > 0 {
				sb.WriteString("\n" + rec.methods[m] + "\n")
			} else {
				sb.WriteString("\n" + firstLine(rec.methods[m]))
			}
		}
		return sb.String()
	}
	if k, ok := s.decls[expr]; ok {
		return expr + ": " + k + " declared in a cell"
	}
	return ""
}

func derefIface(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

// typeDoc returns the doc of the compiled type of v.
func typeDoc(v reflect.Value) string {
	t := derefIface(v).Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "" || t.Name() == "" {
		return ""
	}
	d, _ := stdlib.Doc(t.PkgPath() + "." + t.Name())
	return strings.TrimSpace(d)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(strings.TrimSpace(l), "{")
}

// signature describes a compiled package symbol without a doc entry.
func signature(name string, v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	if c, ok := v.Interface().(constant.Value); ok {
		return "const " + name + " = " + c.ExactString()
	}
	switch {
	case v.Kind() == reflect.Func:
		return name + ": " + v.Type().String()
	case v.Kind() == reflect.Pointer && v.IsNil():
		return "type " + name + " " + v.Type().Elem().Kind().String()
	}
	return "var " + name + " " + v.Type().String()
}
