package lang

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/traefik/yaegi/interp"
)

// chunk is a group of items evaluated by one call into the interpreter.
type chunk struct {
	kind  itemKind
	items []item
}

// runGo evaluates Go source of a cell: imports first, then type, function
// and constant declarations (unless they use variables the cell's statements
// declare), then statements and the remaining declarations in source order.
func (s *Session) runGo(ctx context.Context, c *cell, src string) *Error {
	src, carried, err := s.prepareTypes(src)
	if err != nil {
		return syntaxError(src, err)
	}
	items, err := splitCell(src)
	if err != nil {
		return syntaxError(src, err)
	}
	if e := s.useOfFailedDecl(src, items); e != nil {
		return e
	}
	// Imports, then the standard-library packages used without one.
	for _, it := range items {
		if it.kind == itemImport {
			if e := s.importItem(ctx, src, it); e != nil {
				return e
			}
		}
	}
	if e := s.autoImports(ctx, src, items); e != nil {
		return e
	}
	// Names declared by top-level statements.
	stmtNames := map[string]bool{}
	for _, it := range items {
		if it.kind == itemStmt {
			for _, n := range definedNames(src[it.start:it.end]) {
				stmtNames[n] = true
			}
		}
	}
	// Declarations using those names stay in place, and so do, transitively,
	// declarations using theirs.
	for changed := true; changed; {
		changed = false
		for _, it := range items {
			if it.kind != itemDecl || !mentions(src[it.start:it.end], stmtNames) {
				continue
			}
			for _, n := range declNames(src[it.start:it.end]) {
				if !stmtNames[n] {
					stmtNames[n], changed = true, true
				}
			}
		}
	}
	var hoisted, deferred []item
	var chunks []chunk
	adjacent := false            // the previous item went to the last chunk
	defined := map[string]bool{} // names declared by the items so far
	for _, it := range items {
		text := src[it.start:it.end]
		switch {
		case it.kind == itemImport || it.kind == itemPackage:
			adjacent = false
		case it.kind == itemDecl && !mentions(text, stmtNames):
			hoisted = append(hoisted, it)
			adjacent = false
		case it.kind == itemDecl && usesLater(src, items, it, stmtNames, defined):
			// A declaration above the statement declaring a name it uses
			// (func main above a package-level var, as a program may have
			// it): after the cell's statements.
			deferred = append(deferred, it)
			adjacent = false
		default:
			for _, n := range append(definedNames(text), declNames(text)...) {
				defined[n] = true
			}
			// A statement chunk is one span of the cell: consecutive statements only.
			if n := len(chunks); n > 0 && adjacent && chunks[n-1].kind == itemStmt && it.kind == itemStmt {
				chunks[n-1].items = append(chunks[n-1].items, it)
			} else {
				chunks = append(chunks, chunk{kind: it.kind, items: []item{it}})
			}
			adjacent = true
		}
	}
	if len(hoisted) > 0 || carried != "" {
		if e := s.evalDecls(ctx, src, hoisted, carried); e != nil {
			return e
		}
	}
	s.commitTypes(src, items)
	var last *item
	if len(items) > 0 && items[len(items)-1].kind == itemStmt {
		last = &items[len(items)-1]
	}
	for i, ch := range chunks {
		if ch.kind == itemDecl {
			if e := s.evalDecls(ctx, src, ch.items, ""); e != nil {
				return e
			}
			continue
		}
		isLast := i == len(chunks)-1 && last != nil
		if e := s.evalStmts(ctx, c, src, ch.items, isLast); e != nil {
			return e
		}
	}
	if len(deferred) > 0 {
		if e := s.evalDecls(ctx, src, deferred, ""); e != nil {
			return e
		}
	}
	if it, ok := declaresMain(src, items); ok {
		return s.runMain(ctx, src, it)
	}
	return nil
}

// usesLater reports whether declaration it uses a name of stmtNames that
// no item before it has declared (not in defined), while no statement after
// it uses the names it declares: it can wait for the end of the cell.
func usesLater(src string, items []item, it item, stmtNames, defined map[string]bool) bool {
	text := src[it.start:it.end]
	own := map[string]bool{}
	for _, n := range declNames(text) {
		own[n] = true
	}
	later := map[string]bool{}
	for n := range stmtNames {
		if !defined[n] && !own[n] {
			later[n] = true
		}
	}
	if !mentions(text, later) {
		return false
	}
	for _, other := range items {
		if other.start > it.start && other.kind == itemStmt && mentions(src[other.start:other.end], own) {
			return false
		}
	}
	return true
}

// definedNames lists the names a top-level statement declares (x := …, var x …).
func definedNames(stmt string) []string {
	_, body, err := parseChunk(stmt)
	if err != nil || len(body.List) == 0 {
		return nil
	}
	var names []string
	switch x := body.List[0].(type) {
	case *ast.AssignStmt:
		if x.Tok == token.DEFINE {
			for _, l := range x.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
					names = append(names, id.Name)
				}
			}
		}
	case *ast.DeclStmt:
		if g, ok := x.Decl.(*ast.GenDecl); ok {
			for _, sp := range g.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					for _, id := range vs.Names {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	return names
}

// declNames lists the names a declaration introduces (functions, types,
// constants; not methods).
func declNames(text string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package main;"+text, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var names []string
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if x.Recv == nil {
				names = append(names, x.Name.Name)
			}
		case *ast.GenDecl:
			for _, sp := range x.Specs {
				switch y := sp.(type) {
				case *ast.TypeSpec:
					names = append(names, y.Name.Name)
				case *ast.ValueSpec:
					for _, id := range y.Names {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	return names
}

// mentions reports whether src uses any identifier of names.
func mentions(src string, names map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	found := false
	forIdents(src, func(_ int, name string, afterDot bool) {
		if !afterDot && names[name] {
			found = true
		}
	})
	return found
}

// forIdents calls f for each identifier token of src with its offset.
func forIdents(src string, f func(off int, name string, afterDot bool)) {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, []byte(src), nil, 0)
	prev := token.ILLEGAL
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			return
		}
		if tok == token.IDENT {
			f(file.Offset(pos), lit, prev == token.PERIOD)
		}
		prev = tok
	}
}

// importItem evaluates the new imports of an import declaration; imports
// already made in the session are skipped (yaegi rejects re-imports).
func (s *Session) importItem(ctx context.Context, src string, it item) *Error {
	text := src[it.start:it.end]
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cell", "package main;"+text, parser.ImportsOnly)
	if err != nil {
		return syntaxError(src, shiftErr(err, it, len("package main;")))
	}
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		name := s.names[p]
		if name == "" {
			name = importName(p)
		}
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name == "_" || name == "." {
			continue
		}
		if s.imports[name] == p {
			continue
		}
		if _, ok := s.exports[p]; !ok {
			line, col := lineCol(src, it.start)
			return &Error{Name: "ImportError", Value: fmt.Sprintf("cell:%d:%d: package %q is not available in Harmonium (only the Go standard library, gonum, gonum/plot, rbmcore and display are compiled in)", line, col, p)}
		}
		line, col := lineCol(src, it.start)
		code := lineDirective(line, col) + fmt.Sprintf("import %s %q", name, p)
		if _, e := s.eval(ctx, code, src); e != nil {
			return e
		}
		s.imports[name] = p
	}
	return nil
}

// importName is the default name of an import path: its last element.
func importName(p string) string {
	p = strings.TrimSuffix(p, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// evalDecls evaluates declarations in one go, each positioned at its place in
// the cell and rewritten like statements; carried is extra source
// re-declaring a redefined type and its methods.
func (s *Session) evalDecls(ctx context.Context, src string, items []item, carried string) *Error {
	build := func(asInt bool) (string, bool, *Error) {
		var sb strings.Builder
		unsure := false
		for _, it := range items {
			text, u, e := s.rewriteDecl(src, it.start, src[it.start:it.end], asInt)
			if e != nil {
				return "", false, e
			}
			unsure = unsure || u
			sb.WriteString(lineDirective(it.line, it.col))
			sb.WriteString(text)
			sb.WriteString("\n")
		}
		if carried != "" {
			text, u, e := s.rewriteDecl(carried, 0, carried, asInt)
			if e != nil {
				return "", false, e
			}
			unsure = unsure || u
			sb.WriteString(lineDirective(1, 1))
			sb.WriteString(text)
		}
		return sb.String(), unsure, nil
	}
	code, unsure, e := build(false)
	if e != nil {
		return e
	}
	prog, e := s.compile(code, src)
	if e != nil && unsure && strings.Contains(e.Value, "nil type") {
		if code, _, e = build(true); e != nil {
			return e
		}
		prog, e = s.compile(code, src)
	}
	if e == nil {
		_, e = s.execute(ctx, prog, src)
	}
	if e == nil {
		for _, it := range items {
			s.recordDecl(src[it.start:it.end])
		}
		s.forgetFailedDecls(src, items)
	} else if e.Name == "CompileError" || e.Name == "SyntaxError" {
		s.recordFailedDecls(s.cellNumber(), src, items, e)
	}
	return e
}

// rewriteDecl applies the statement rewrites inside a declaration (function
// bodies) starting at byte start of src. unsure reports a range over an
// operand of unknown type.
func (s *Session) rewriteDecl(src string, start int, text string, asInt bool) (string, bool, *Error) {
	file, f, err := parseDecl(text)
	if err != nil {
		return "", false, syntaxError(src, shiftDeclErr(err, src, start))
	}
	ed := &editor{src: text, cell: src, base: start}
	markPanics(ed, file, f, len(declPrefix), s.cellNumber(), src, start)
	s.markFaults(ed, file, f, len(declPrefix), s.cellNumber(), src, start)
	r := &rewriter{ed: ed, file: file, root: f, prefix: len(declPrefix), oracle: s, next: &s.counter, rangeAsInt: asInt,
		site: s.guardSite, cell: src, base: start}
	r.rewrite(nil)
	if r.err != nil {
		msg := "cell:" + shiftPos(r.err.Error(), src, start)
		return "", false, &Error{Name: "CompileError", Value: msg, Traceback: withSource(src, "CompileError: "+msg)}
	}
	return r.ed.text(), r.rangeUnsure, nil
}

// recordDecl remembers the names a declaration introduces (for %who and
// completion).
func (s *Session) recordDecl(text string) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package main;"+text, parser.SkipObjectResolution)
	if err != nil {
		return
	}
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if x.Recv == nil {
				s.decls[x.Name.Name] = "func"
				s.keepFuncSource(x.Name.Name, text, x, len("package main;"))
				s.declCell[x.Name.Name] = s.cellNumber()
			}
		case *ast.GenDecl:
			for _, sp := range x.Specs {
				switch y := sp.(type) {
				case *ast.TypeSpec:
					s.decls[y.Name.Name] = "type"
				case *ast.ValueSpec:
					for _, id := range y.Names {
						s.decls[id.Name] = "const"
					}
				}
			}
		}
	}
}

// evalStmts rewrites and evaluates a run of statements. final tells that the
// run ends the cell, so a trailing expression's value is the cell's result.
func (s *Session) evalStmts(ctx context.Context, c *cell, src string, items []item, final bool) *Error {
	for k, it := range items {
		names, ok := multiDefine(src[it.start:it.end])
		if !ok {
			continue
		}
		// `a, b := f()` runs alone, then its new variables are declared
		// again as globals (see multiDefine); the statements around it run
		// as before.
		if k > 0 {
			if e := s.evalStmts(ctx, c, src, items[:k], false); e != nil {
				return e
			}
		}
		before := s.globals()
		if e := s.evalRun(ctx, c, src, []item{it}, final && k == len(items)-1); e != nil {
			return e
		}
		// New variables, and those yaegi gave a new slot instead of
		// assigning them (when it types the value differently, error of
		// a compiled function against error of the interpreter), are
		// declared again; an old slot also gets the value, so that the
		// functions compiled before see it, as after a Go assignment.
		after := s.globals()
		var fresh []string
		for _, n := range names {
			old, ok := before[n]
			v := after[n]
			if ok && (!old.CanAddr() || !v.CanAddr() || old.UnsafeAddr() == v.UnsafeAddr()) {
				continue
			}
			if ok && old.CanSet() && v.IsValid() && v.Type().AssignableTo(old.Type()) {
				old.Set(v)
			}
			fresh = append(fresh, n)
		}
		if e := s.redeclareGlobals(ctx, src, it, fresh); e != nil {
			return e
		}
		if k+1 < len(items) {
			return s.evalStmts(ctx, c, src, items[k+1:], final)
		}
		return nil
	}
	return s.evalRun(ctx, c, src, items, final)
}

// redeclareGlobals declares the variables names, which statement it has
// just declared, again, so that yaegi marks them as globals (see
// multiDefine). Their values pass through temporaries (__hm_0, …): in
// `a := a` the right-hand side would already be the new, zero variable. The
// slots left behind are zeroed so that they keep nothing alive.
func (s *Session) redeclareGlobals(ctx context.Context, src string, it item, names []string) *Error {
	if len(names) == 0 {
		return nil
	}
	tmps := make([]string, len(names))
	for i := range names {
		tmps[i] = fmt.Sprintf("__hm_%d", i)
	}
	pos := "\n;" + lineDirective(it.line, it.col)
	vars, held := strings.Join(names, ", "), strings.Join(tmps, ", ")
	if _, e := s.eval(ctx, pos+held+" := "+vars, src); e != nil {
		return e
	}
	zero := func(names []string) {
		g := s.globals()
		for _, n := range names {
			if v, ok := g[n]; ok && v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
		}
	}
	zero(names)
	if _, e := s.eval(ctx, pos+vars+" := "+held, src); e != nil {
		return e
	}
	zero(tmps)
	return nil
}

// evalRun is evalStmts for a run without the multi-valued declarations
// multiDefine handles.
func (s *Session) evalRun(ctx context.Context, c *cell, src string, items []item, final bool) *Error {
	prog, r, finalStmt, e := s.prepareStmts(c, src, items, final, "", "")
	if e != nil {
		e = s.explainUndefined(src, items, e)
	}
	if e != nil && globalTypeFailure(e) {
		if len(items) > 1 {
			// Nothing of the run has executed: evaluate it statement by
			// statement, so that only the statements yaegi cannot type at
			// the top level take the slower path below.
			for i := range items {
				if e := s.evalStmts(ctx, c, src, items[i:i+1], final && i == len(items)-1); e != nil {
					return e
				}
			}
			return nil
		}
		if names := definedNames(src[items[0].start:items[0].end]); len(names) > 0 {
			return s.evalBoxed(ctx, c, src, items[0], names)
		}
	}
	if e != nil {
		return e
	}
	s.firstAt = int64(items[0].start) + 1
	v, e := s.execute(ctx, prog, src)
	if e != nil {
		return e
	}
	if finalStmt != nil && !r.wrapFinal && !c.hasResult && v.IsValid() && s.showUnknown(finalStmt.X) {
		if v.CanInterface() {
			c.result, c.hasResult = v.Interface(), true
		}
	}
	return nil
}

// multiDefine reports whether the top-level statement stmt declares several
// variables from one multi-valued expression (`a, err := f()`, `var a, b =
// f()`, `v, ok := m[k]`), and lists the variables it declares. yaegi v0.16.1
// does not mark the new variables of such a statement as globals
// (compDefineX leaves their symbols' global flag unset, where `a := e` sets
// it), so a cell function reading one resolves it relative to its caller's
// frame: called from the top level it finds it, called from another function
// it reads that function's frame instead ("reflect: Method index out of
// range", "call of reflect.Value.Method on zero Value", or a wrong value).
// Declaring them again with `a, b := __hm_0, __hm_1` (redeclareGlobals)
// makes them globals of the same types and values.
func multiDefine(stmt string) ([]string, bool) {
	_, body, err := parseChunk(stmt)
	if err != nil || len(body.List) != 1 {
		return nil, false
	}
	multi := false
	switch x := body.List[0].(type) {
	case *ast.AssignStmt:
		multi = x.Tok == token.DEFINE && len(x.Lhs) > 1 && len(x.Rhs) == 1
	case *ast.DeclStmt:
		if g, ok := x.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok && len(vs.Names) > 1 && len(vs.Values) == 1 {
					multi = true
				}
			}
		}
	}
	if !multi {
		return nil, false
	}
	var names []string
	for _, n := range definedNames(stmt) {
		if n != "_" {
			names = append(names, n)
		}
	}
	return names, true
}

// globalTypeFailure reports whether e is yaegi failing to type a variable
// declared by a top-level statement. Its global type analysis, which types
// top-level `x := e` and `var x = e` before compiling them, cannot type some
// expressions the compiler proper handles: indexing a slice or map of a
// compiled type (ts[0] for ts of mapping.All) loops ("constant definition
// loop") or crashes (ts[0] + 1), and so does an undefined name.
func globalTypeFailure(e *Error) bool {
	return e.Name == "CompileError" && (strings.Contains(e.Value, "constant definition loop") || strings.Contains(e.Value, compilerCrash))
}

// evalBoxed evaluates a top-level declaration `a, b := e1, e2` (or var) of
// the variables names that yaegi's global type analysis cannot type (see
// globalTypeFailure): the statement runs in a function literal, where yaegi
// types it, which hands pointers to its variables to a native helper; each
// value is then published as a variable of the helper package, whose type
// yaegi knows, and the globals are declared from those (a := __hm.V7), so
// they get the values and the types of the original statement.
func (s *Session) evalBoxed(ctx context.Context, c *cell, src string, it item, names []string) *Error {
	var boxed []any
	if err := s.in.Use(interp.Exports{hmPath + "/hm": {"Box": reflect.ValueOf(func(ps ...any) { boxed = ps })}}); err != nil {
		return compileError(src, fmt.Errorf("cell:%d:%d: declaring %s: %w", it.line, it.col, strings.Join(names, ", "), err))
	}
	var addrs []string
	for _, n := range names {
		addrs = append(addrs, "&"+n)
	}
	prog, _, _, e := s.prepareStmts(c, src, []item{it}, false, "func() {", "\n__hm.Box("+strings.Join(addrs, ", ")+")\n}()")
	if e != nil {
		return s.explainUndefined(src, []item{it}, e)
	}
	s.firstAt = int64(it.start) + 1
	if _, e := s.execute(ctx, prog, src); e != nil {
		return e
	}
	if len(boxed) != len(names) {
		return compileError(src, fmt.Errorf("cell:%d:%d: declaring %s: the interpreter lost the values", it.line, it.col, strings.Join(names, ", ")))
	}
	holders := map[string]reflect.Value{}
	var decls []string
	for i, n := range names {
		p := reflect.ValueOf(boxed[i])
		if p.Kind() != reflect.Pointer || p.IsNil() {
			return compileError(src, fmt.Errorf("cell:%d:%d: declaring %s: the interpreter lost its value", it.line, it.col, n))
		}
		s.counter++
		key := fmt.Sprintf("V%d", s.counter)
		holders[key] = p.Elem()
		decls = append(decls, fmt.Sprintf("%s := __hm.%s", n, key))
	}
	// The holders keep no reference once copied into the globals.
	defer func() {
		for _, h := range holders {
			h.Set(reflect.Zero(h.Type()))
		}
	}()
	if err := s.in.Use(interp.Exports{hmPath + "/hm": holders}); err != nil {
		return compileError(src, fmt.Errorf("cell:%d:%d: declaring %s: %w", it.line, it.col, strings.Join(names, ", "), err))
	}
	_, e = s.eval(ctx, "\n;"+lineDirective(it.line, it.col)+strings.Join(decls, "; "), src)
	return e
}

// explainUndefined replaces a compile error that yaegi gives for an
// undefined name in some constructs ("constant definition loop", "nil type",
// "incomplete type", a compiler crash) by "undefined: name". (Its global type
// analysis also registers such a name as an incomplete type, hence the
// confusing messages of later cells using it.)
func (s *Session) explainUndefined(src string, items []item, e *Error) *Error {
	if e.Name != "CompileError" || !(globalTypeFailure(e) || strings.Contains(e.Value, "nil type") || strings.Contains(e.Value, "incomplete type")) {
		return e
	}
	start := items[0].start
	name, off, ok := s.undefinedName(src[start:items[len(items)-1].end])
	if !ok {
		return e
	}
	line, col := lineCol(src, start+off)
	return compileError(src, fmt.Errorf("cell:%d:%d: undefined: %s", line, col, name))
}

// undefinedName finds an identifier of statement text that names nothing:
// not a local of the text, a global, a declaration or import of the session,
// nor a predeclared name. off is its offset in text.
func (s *Session) undefinedName(text string) (name string, off int, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", chunkPrefix+text+"\n}", 0)
	if err != nil {
		return "", 0, false
	}
	keys := map[*ast.Ident]bool{} // field names in struct literals
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok {
				keys[id] = true
			}
		}
		return true
	})
	globals := s.globals()
	for _, id := range f.Unresolved {
		n := id.Name
		if keys[id] || types.Universe.Lookup(n) != nil || strings.HasPrefix(n, "__hm") || n == "_" {
			continue
		}
		if _, known := globals[n]; known {
			continue
		}
		if s.imports[n] != "" || s.decls[n] != "" || s.types[n] != nil {
			continue
		}
		return n, fset.Position(id.Pos()).Offset - len(chunkPrefix), true
	}
	return "", 0, false
}

// prepareStmts parses, rewrites and compiles a run of statements; pre and
// post, if not empty, are code around them (on lines of their own).
func (s *Session) prepareStmts(c *cell, src string, items []item, final bool, pre, post string) (*interp.Program, *rewriter, *ast.ExprStmt, *Error) {
	start, end := items[0].start, items[len(items)-1].end
	text := src[start:end]
	file, body, err := parseChunk(text)
	if err != nil {
		return nil, nil, nil, syntaxError(src, shiftChunkErr(err, src, start))
	}
	var finalStmt *ast.ExprStmt
	if final && len(body.List) > 0 {
		finalStmt, _ = body.List[len(body.List)-1].(*ast.ExprStmt)
	}
	build := func(asInt bool) (string, *rewriter, *Error) {
		ed := &editor{src: text, cell: src, base: start}
		markStatements(ed, file, body, start)
		s.markTopFaults(ed, file, body, s.cellNumber(), src, start)
		markPanics(ed, file, body, len(chunkPrefix), s.cellNumber(), src, start)
		parenthesizeCallResults(ed, file, body)
		r := &rewriter{ed: ed, file: file, body: body, oracle: s, next: &s.counter, rangeAsInt: asInt,
			site: s.guardSite, cell: src, base: start}
		if finalStmt != nil {
			r.wrapFinal = s.showable(finalStmt.X)
		}
		r.rewrite(finalStmt)
		if r.err != nil {
			msg := "cell:" + shiftPos(r.err.Error(), src, start)
			return "", nil, &Error{Name: "CompileError", Value: msg, Traceback: withSource(src, "CompileError: "+msg)}
		}
		line, col := lineCol(src, start)
		return "\n;" + pre + lineDirective(line, col) + r.ed.text() + post, r, nil
	}
	code, r, e := build(false)
	if e != nil {
		return nil, nil, nil, e
	}
	prog, e := s.compile(code, src)
	if e != nil && r.rangeUnsure && strings.Contains(e.Value, "nil type") {
		code, r, e = build(true)
		if e != nil {
			return nil, nil, nil, e
		}
		prog, e = s.compile(code, src)
	}
	if e != nil {
		if strings.Contains(e.Value, "nil type") {
			e.Value += " (the interpreter could not type a construct of this cell, often a range over an integer whose type it cannot infer: write `for i := 0; i < n; i++`)"
			e.Traceback = []string{"CompileError: " + e.Value}
		}
		return nil, nil, nil, e
	}
	for _, h := range r.handles {
		s.handles[h] = true
	}
	return prog, r, finalStmt, nil
}

// showable decides, before running, whether the final expression's value is
// worth showing and has exactly one value (so it can be wrapped).
func (s *Session) showable(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return true
	}
	if id, ok := call.Fun.(*ast.Ident); ok {
		switch {
		case noResultBuiltins[id.Name]:
			return false
		case id.Name == "len" || id.Name == "cap" || id.Name == "append" || id.Name == "make" || id.Name == "new" ||
			id.Name == "complex" || id.Name == "real" || id.Name == "imag" || id.Name == "min" || id.Name == "max":
			return true
		}
	}
	if !isPure(call.Fun) {
		return false
	}
	return s.numOut(exprString(call.Fun)) == 1
}

// showUnknown decides after running whether to show the value of a final
// call that was not wrapped: not when the callee is known to return several
// values or none; yes when it is unknown (yaegi gives the first result).
func (s *Session) showUnknown(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	if id, ok := call.Fun.(*ast.Ident); ok && noResultBuiltins[id.Name] {
		return false
	}
	if isPure(call.Fun) && !isConversion(call.Fun) {
		if n := s.numOut(exprString(call.Fun)); n >= 0 {
			return n == 1
		}
	}
	return true
}

func isConversion(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return true
	case *ast.Ident:
		return intTypes[x.Name] || x.Name == "float64" || x.Name == "float32" || x.Name == "string" || x.Name == "bool"
	}
	return false
}

// exprString prints a pure expression.
func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.ParenExpr:
		return "(" + exprString(x.X) + ")"
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	}
	return ""
}

// directivePos finds the position of a line directive (see lineDirective).
var directivePos = regexp.MustCompile(`//line :(\d+:\d+)\n`)

const compilerCrash = "the interpreter failed compiling this cell (a yaegi limitation; try writing the construct differently): "

// compile compiles code, turning compile errors and compiler panics into a
// CompileError.
func (s *Session) compile(code, src string) (prog *interp.Program, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			s.yerr.takeFrames()
			prog, e = nil, crashError(code, src, r)
		}
	}()
	p, err := s.in.Compile(code)
	if err != nil {
		return nil, compileError(src, err)
	}
	return p, nil
}

// crashError is the CompileError of a panic r of yaegi's compiler on code.
// A panic without a position gets that of the code's first line directive
// (the cell line of its first statement or declaration).
func crashError(code, src string, r any) *Error {
	msg := cellPos(fmt.Sprint(r))
	if !strings.HasPrefix(msg, "cell:") {
		msg = compilerCrash + msg
		if m := directivePos.FindStringSubmatch(code); m != nil {
			msg = "cell:" + m[1] + ": " + msg
		}
	}
	return &Error{Name: "CompileError", Value: msg, Traceback: withSource(src, "CompileError: "+msg)}
}

// execute runs a compiled program under ctx (see run).
func (s *Session) execute(ctx context.Context, prog *interp.Program, src string) (v reflect.Value, e *Error) {
	c := s.current()
	n := 0
	if c != nil {
		n = c.n
	}
	s.at.Store(s.firstAt)
	s.firstAt = 0
	s.curMu.Lock()
	s.lastPanic = nil
	s.curMu.Unlock()
	atomic.StoreInt64(s.siteVar, 0)
	x, state, err := s.run(ctx, n, prog)
	if err != nil {
		return reflect.Value{}, &Error{Name: "ExecutionError", Value: err.Error(), Traceback: []string{"ExecutionError: " + err.Error()}}
	}
	switch state {
	case stopped:
		s.yerr.takeFrames()
		return reflect.Value{}, interruptedError(n, false)
	case abandoned:
		if c != nil {
			s.abandon(c, x)
		}
		return reflect.Value{}, interruptedError(n, true)
	}
	if c != nil {
		s.curMu.Lock()
		e := c.limitErr // the guard ended the program's goroutine: stop the cell here
		s.curMu.Unlock()
		if e != nil {
			return reflect.Value{}, e
		}
	}
	if x.err == nil {
		return x.res, nil
	}
	var p interp.Panic
	if errors.As(x.err, &p) {
		e := s.placeFrames(panicError(p.Value, s.yerr.takeFrames(), "panic"), src, 0)
		return reflect.Value{}, s.explainBounds(explainMethodNotFound(e), src)
	}
	return reflect.Value{}, compileError(src, x.err)
}

// eval compiles and runs code.
func (s *Session) eval(ctx context.Context, code, src string) (reflect.Value, *Error) {
	prog, e := s.compile(code, src)
	if e != nil {
		return reflect.Value{}, e
	}
	return s.execute(ctx, prog, src)
}

var posPattern = regexp.MustCompile(`cell:(\d+):(\d+)`)

// withSource appends the cell line a message points at, with a caret.
func withSource(src, msg string) []string {
	tb := []string{msg}
	m := posPattern.FindStringSubmatch(msg)
	if m == nil {
		return tb
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	lines := strings.Split(src, "\n")
	if line >= 1 && line <= len(lines) {
		l := lines[line-1]
		tb = append(tb, fmt.Sprintf("%5d | %s", line, l))
		if col >= 1 && col <= len(l)+1 {
			tb = append(tb, "      | "+strings.Repeat(" ", col-1)+"^")
		}
	}
	return tb
}

func compileError(src string, err error) *Error {
	msg := err.Error()
	if el, ok := err.(scanner.ErrorList); ok && len(el) > 0 {
		msg = el[0].Error()
	}
	msg = cellPos(msg)
	return &Error{Name: "CompileError", Value: msg, Traceback: withSource(src, "CompileError: "+msg)}
}

func syntaxError(src string, err error) *Error {
	msg := err.Error()
	if el, ok := err.(scanner.ErrorList); ok && len(el) > 0 {
		msg = el[0].Error()
	}
	return &Error{Name: "SyntaxError", Value: msg, Traceback: withSource(src, "SyntaxError: "+msg)}
}

// panicError builds the error of a panic from its value and yaegi's frames
// (innermost first), e.g. "cell:3:5: panic: main.f(...)".
func panicError(r any, frames []string, kind string) *Error {
	name := "Panic"
	val := fmt.Sprint(r)
	if _, ok := r.(runtime.Error); ok || strings.HasPrefix(val, "runtime error") || strings.HasPrefix(val, "reflect") {
		name = "RuntimeError"
	}
	if kind == "goroutine panic" {
		name = "GoroutinePanic"
	}
	if le, ok := r.(*LimitError); ok {
		name = le.Name
	}
	if err, ok := r.(error); ok {
		val = err.Error()
	}
	val = goMessage(val)
	if m := assertPos.FindStringSubmatch(val); m != nil {
		// yaegi's failed type assertion, at its position: Go's runtime error.
		name, val = "RuntimeError", m[1]
	}
	tb := []string{fmt.Sprintf("%s: %s", kind, val)}
	for _, f := range frames {
		loc, fn, _ := strings.Cut(cellPos(f), ": panic: ")
		fn = strings.TrimSuffix(fn, "(...)")
		if fn == "main" {
			fn = "cell"
		}
		fn = strings.TrimPrefix(fn, "main.")
		tb = append(tb, fmt.Sprintf("    at %s (%s)", fn, loc))
	}
	return &Error{Name: name, Value: val, Traceback: shortenFrames(tb)}
}

// shortenFrames keeps a traceback of a deep recursion readable: a line
// repeated more than three times in a row is shown three times and counted
// (as Python does), and of more than maxFrameLines lines the first and last
// ones are kept.
func shortenFrames(tb []string) []string {
	const repeats, maxFrameLines, tail = 3, 60, 10
	var out []string
	for i := 0; i < len(tb); {
		j := i
		for j < len(tb) && tb[j] == tb[i] {
			j++
		}
		out = append(out, tb[i:i+min(j-i, repeats)]...)
		if n := j - i - repeats; n > 0 {
			out = append(out, fmt.Sprintf("    [previous line repeated %d more times]", n))
		}
		i = j
	}
	if len(out) > maxFrameLines {
		elided := len(out) - maxFrameLines
		out = append(append(out[:maxFrameLines-tail:maxFrameLines-tail], fmt.Sprintf("    [%d more lines]", elided)), out[len(out)-tail:]...)
	}
	return out
}

// assertPos matches yaegi's panic of a failed type assertion.
var assertPos = regexp.MustCompile(`^\d+:\d+: (interface conversion: .*)$`)

var methodNotFound = regexp.MustCompile(`^(\d+:\d+): method not found: (\w+)$`)

// explainMethodNotFound turns yaegi's "line:col: method not found: M", the
// panic of passing to compiled code a struct value of a type declared in a
// cell whose method M comes from an embedded compiled field (yaegi v0.16.1
// reaches those only through a pointer), into an error saying so.
func explainMethodNotFound(e *Error) *Error {
	m := methodNotFound.FindStringSubmatch(e.Value)
	if m == nil {
		return e
	}
	e.Name = "RuntimeError"
	e.Value = fmt.Sprintf("cell:%s: method %s not found: the interpreter passes a value of a type declared in a cell to compiled code without the methods its embedded compiled fields provide; pass a pointer to it (&v)", m[1], m[2])
	e.Traceback = append([]string{"RuntimeError: " + e.Value}, e.Traceback[1:]...)
	return e
}

// shiftErr moves positions of a parse error in "package main;"+item text to
// cell coordinates.
func shiftErr(err error, it item, prefix int) error {
	el, ok := err.(scanner.ErrorList)
	if !ok || len(el) == 0 {
		return err
	}
	e := el[0]
	line, col := e.Pos.Line, e.Pos.Column
	if line == 1 {
		col = col - prefix + it.col - 1
	}
	line += it.line - 1
	return fmt.Errorf("cell:%d:%d: %s", line, col, e.Msg)
}

// shiftChunkErr maps a parse error of a statement chunk to cell coordinates.
func shiftChunkErr(err error, src string, start int) error {
	el, ok := err.(scanner.ErrorList)
	if !ok || len(el) == 0 {
		return err
	}
	e := el[0]
	off := e.Pos.Offset - len(chunkPrefix) + start
	off = max(0, min(off, len(src)))
	line, col := lineCol(src, off)
	return fmt.Errorf("cell:%d:%d: %s", line, col, e.Msg)
}

// shiftDeclErr maps a parse error of a declaration starting at start.
func shiftDeclErr(err error, src string, start int) error {
	el, ok := err.(scanner.ErrorList)
	if !ok || len(el) == 0 {
		return err
	}
	e := el[0]
	off := max(0, min(e.Pos.Offset-len(declPrefix)+start, len(src)))
	line, col := lineCol(src, off)
	return fmt.Errorf("cell:%d:%d: %s", line, col, e.Msg)
}

// shiftPos maps "line:col: msg" relative to a chunk starting at start.
func shiftPos(msg, src string, start int) string {
	var l, c int
	if _, err := fmt.Sscanf(msg, "%d:%d:", &l, &c); err != nil {
		return msg
	}
	sl, sc := lineCol(src, start)
	if l == 1 {
		c += sc - 1
	}
	rest := msg[strings.Index(msg[strings.Index(msg, ":")+1:], ":")+strings.Index(msg, ":")+2:]
	return fmt.Sprintf("%d:%d:%s", l+sl-1, c, rest)
}
