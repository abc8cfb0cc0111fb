package lang

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strings"
)

// yaegi v0.16.1 silently keeps the first definition of a type and of its
// methods. To let cells redefine them, a redefined type gets a fresh internal
// name (T__7) in that cell and all later ones; if only methods are redefined,
// the type and its other methods are re-declared under the fresh name.

// typeRec is what the session remembers of a type declared in a cell.
type typeRec struct {
	internal string            // current name in the interpreter
	decl     string            // "type T ..." source, with internal names
	methods  map[string]string // method name -> source
}

// declInfo lists the types and methods declared by a cell's declarations.
type declInfo struct {
	types   map[string]string   // type name -> "type ..." source
	methods map[string][]method // receiver base type -> methods
}

type method struct{ name, src string }

func parseDecls(src string, items []item) declInfo {
	info := declInfo{types: map[string]string{}, methods: map[string][]method{}}
	for _, it := range items {
		if it.kind != itemDecl {
			continue
		}
		text := src[it.start:it.end]
		const pre = "package main;"
		f, err := parser.ParseFile(token.NewFileSet(), "", pre+text, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.GenDecl:
				if x.Tok != token.TYPE {
					continue
				}
				for _, sp := range x.Specs {
					ts := sp.(*ast.TypeSpec)
					a, b := int(ts.Pos())-1-len(pre), int(ts.End())-1-len(pre)
					info.types[ts.Name.Name] = "type " + text[a:b]
				}
			case *ast.FuncDecl:
				if x.Recv == nil || len(x.Recv.List) == 0 {
					continue
				}
				if base := recvBase(x.Recv.List[0].Type); base != "" {
					info.methods[base] = append(info.methods[base], method{x.Name.Name, text})
				}
			}
		}
	}
	return info
}

// recvBase returns T for receivers T, *T, T[P] and *T[P].
func recvBase(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// pendingTypes are the renames decided for the running cell, committed when
// it succeeds.
type pendingTypes struct {
	renames map[string]string // user name -> new internal name
	carried map[string]bool   // types re-declared from earlier cells
}

// renameIdents replaces identifiers (not selectors) by their mapping.
func renameIdents(src string, m map[string]string) string {
	if len(m) == 0 {
		return src
	}
	var sb strings.Builder
	last := 0
	forIdents(src, func(off int, name string, afterDot bool) {
		if to, ok := m[name]; ok && !afterDot {
			sb.WriteString(src[last:off])
			sb.WriteString(to)
			last = off + len(name)
		}
	})
	sb.WriteString(src[last:])
	return sb.String()
}

// prepareTypes applies the session's type renames to src and decides new
// ones for types the cell redefines. It returns the renamed source and the
// source of earlier declarations to re-declare with it.
func (s *Session) prepareTypes(src string) (string, string, error) {
	s.pending = pendingTypes{renames: map[string]string{}, carried: map[string]bool{}}
	items, err := splitCell(src)
	if err != nil {
		return src, "", nil // reported by the caller's own split
	}
	info := parseDecls(src, items)
	s.noteTypes(info.types)
	redefined := map[string]bool{}
	for t := range info.types {
		if _, ok := s.types[t]; ok {
			redefined[t] = true
		}
	}
	for t, ms := range info.methods {
		rec, ok := s.types[t]
		if !ok || info.types[t] != "" {
			continue
		}
		for _, m := range ms {
			if _, dup := rec.methods[m.name]; dup {
				redefined[t] = true
				s.pending.carried[t] = true
			}
		}
	}
	all := map[string]string{}
	for k, v := range s.renames {
		all[k] = v
	}
	if _, ok := declaresMain(src, items); ok {
		all["main"] = mainName
		s.pending.renames["main"] = mainName
	}
	for _, t := range sortedKeys(redefined) {
		s.counter++
		all[t] = fmt.Sprintf("%s__%d", t, s.counter)
		s.pending.renames[t] = all[t]
	}
	out := renameIdents(src, all)
	var carried strings.Builder
	for _, t := range sortedKeys(s.pending.carried) {
		rec := s.types[t]
		m := map[string]string{rec.internal: all[t]}
		carried.WriteString(renameIdents(rec.decl, m) + "\n")
		redone := map[string]bool{}
		for _, mm := range info.methods[t] {
			redone[mm.name] = true
		}
		for _, name := range sortedKeys(rec.methods) {
			if !redone[name] {
				carried.WriteString(renameIdents(rec.methods[name], m) + "\n")
			}
		}
	}
	return out, carried.String(), nil
}

// commitTypes records the types and methods of a successful cell (src is
// the renamed source).
func (s *Session) commitTypes(src string, items []item) {
	for k, v := range s.pending.renames {
		s.renames[k] = v
	}
	user := map[string]string{} // internal -> user name
	for k, v := range s.renames {
		user[v] = k
	}
	name := func(internal string) string {
		if u, ok := user[internal]; ok {
			return u
		}
		return internal
	}
	info := parseDecls(src, items)
	for t, decl := range info.types {
		s.types[name(t)] = &typeRec{internal: t, decl: decl, methods: map[string]string{}}
	}
	for t := range s.pending.carried {
		old := s.types[t]
		rec := &typeRec{internal: s.renames[t], decl: renameIdents(old.decl, map[string]string{old.internal: s.renames[t]}), methods: map[string]string{}}
		for n, m := range old.methods {
			rec.methods[n] = renameIdents(m, map[string]string{old.internal: s.renames[t]})
		}
		s.types[t] = rec
	}
	for t, ms := range info.methods {
		if rec, ok := s.types[name(t)]; ok {
			for _, m := range ms {
				rec.methods[m.name] = m.src
			}
		}
	}
	s.pending = pendingTypes{}
	s.noteTypes(nil)
}

// globals returns the interpreter's global variables and constants. yaegi's
// Globals panics when a compile declared variables that no execution has yet
// allocated (a cell that failed between the two); running an empty program
// allocates them.
//
// While an abandoned cell's program still runs (see interrupt.go), the
// interpreter is not touched and there are no globals to see.
func (s *Session) globals() map[string]reflect.Value {
	if s.busy() {
		return map[string]reflect.Value{}
	}
	for attempt := 0; attempt < 2; attempt++ {
		g, ok := func() (g map[string]reflect.Value, ok bool) {
			defer func() {
				if recover() != nil {
					ok = false
				}
			}()
			return s.in.Globals(), true
		}()
		if ok {
			return g
		}
		if prog, err := s.in.Compile(inCell("")); err == nil {
			s.in.Execute(prog)
		}
	}
	return map[string]reflect.Value{}
}

// intKind implements typeOracle.
func (s *Session) intKind(expr string) tri {
	if !strings.ContainsAny(expr, ".[") {
		if v, ok := s.globals()[expr]; ok {
			return kindIsInt(v)
		}
		if _, ok := s.decls[expr]; ok {
			return no
		}
		return unknown
	}
	if pkg, sym, ok := strings.Cut(expr, "."); ok && !strings.ContainsAny(sym, ".[") {
		if p, isPkg := s.imports[pkg]; isPkg {
			if v, ok := s.exports[p][sym]; ok {
				return kindIsInt(v)
			}
			return unknown
		}
	}
	if v, ok := s.probe(expr); ok {
		return kindIsInt(v)
	}
	return unknown
}

func kindIsInt(v reflect.Value) tri {
	if !v.IsValid() {
		return unknown
	}
	if v.CanInterface() {
		if c, ok := v.Interface().(constant.Value); ok {
			if c.Kind() == constant.Int {
				return yes
			}
			return no
		}
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return yes
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return unknown
		}
		return kindIsInt(v.Elem())
	}
	return no
}

// numOut implements typeOracle.
func (s *Session) numOut(fun string) int {
	if fun == "" {
		return -1
	}
	if pkg, sym, ok := strings.Cut(fun, "."); ok && !strings.Contains(sym, ".") {
		if p, isPkg := s.imports[pkg]; isPkg {
			if v, ok := s.exports[p][sym]; ok && v.Kind() == reflect.Func {
				return v.Type().NumOut()
			}
			if ok {
				return 1 // a type: conversion
			}
			return -1
		}
	}
	if s.decls[fun] == "type" {
		return 1
	}
	if _, ok := s.types[fun]; ok {
		return 1
	}
	v, ok := s.probe(fun)
	if !ok || !v.IsValid() || v.Kind() != reflect.Func {
		return -1
	}
	return v.Type().NumOut()
}

// importPath implements typeOracle.
func (s *Session) importPath(name string) string { return s.imports[name] }

// isHandle implements typeOracle.
func (s *Session) isHandle(name string) bool { return s.handles[name] }

// probe evaluates a side-effect-free expression in the global scope. It runs
// on a goroutine of its own: should the expression call a runaway recursion,
// the depth guard ends that goroutine (runtime.Goexit), not the caller's.
//
// It fails while an abandoned cell's program still runs: executing anything
// would let that program go on (see interrupt.go).
func (s *Session) probe(expr string) (v reflect.Value, ok bool) {
	if s.busy() {
		return reflect.Value{}, false
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, ok = s.probeHere(expr)
	}()
	<-done
	return v, ok
}

func (s *Session) probeHere(expr string) (v reflect.Value, ok bool) {
	defer func() {
		if recover() != nil {
			v, ok = reflect.Value{}, false
		}
		s.yerr.takeFrames()
	}()
	prog, err := s.in.Compile(inCell(expr))
	if err != nil {
		return reflect.Value{}, false
	}
	v, err = s.in.Execute(prog)
	return v, err == nil
}

// userNames lists the names cells declared: variables, constants, functions
// and types (without the session's own helpers).
func (s *Session) userNames() []string {
	set := map[string]bool{}
	for n := range s.globals() {
		set[n] = true
	}
	for n := range s.decls {
		set[n] = true
	}
	user := map[string]string{}
	for k, v := range s.renames {
		user[v] = k
	}
	var names []string
	for n := range set {
		if u, ok := user[n]; ok {
			n = u
		} else if strings.Contains(n, "__") || n == "ctx" || n == "_" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return dedup(names)
}

func dedup(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
