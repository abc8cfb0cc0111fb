package lang

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
)

// Rewrites for Go constructs newer than yaegi v0.16.1: new with an
// expression (Go 1.26), errors.AsType (Go 1.26), range over functions
// (Go 1.23), and per-iteration loop variables seen by closures that
// compiled code calls. The helpers they call are goPreamble's.

// goPreamble defines the helpers of these rewrites in the session.
const goPreamble = `
import __hmiter "iter"

func __hmNew[T any](v T) *T { return &v }

func __hmAsType[E error](err error) (E, bool) {
	var t E
	ok := __hmAs(err, &t)
	return t, ok
}

func __hmAs[E any](err error, target *E) bool {
	stack := []error{err}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e == nil {
			continue
		}
		if t, ok := e.(E); ok {
			*target = t
			return true
		}
		if x, ok := e.(interface{ As(interface{}) bool }); ok && x.As(target) {
			return true
		}
		if u, ok := e.(interface{ Unwrap() error }); ok {
			stack = append(stack, u.Unwrap())
		} else if u, ok := e.(interface{ Unwrap() []error }); ok {
			errs := u.Unwrap()
			for i := len(errs) - 1; i >= 0; i-- {
				stack = append(stack, errs[i])
			}
		}
	}
	return false
}
`

// basicTypes are the predeclared types.
var basicTypes = map[string]bool{
	"bool": true, "string": true, "error": true, "any": true, "comparable": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true, "rune": true, "byte": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true,
}

// valueOracle is what the session answers, beyond typeOracle, for the
// rewrites of this file.
type valueOracle interface {
	// isValue reports whether the global name is a variable or constant
	// (and not a type).
	isValue(name string) bool
	// seqArity returns the number of values per iteration (1 or 2) of the
	// global function value, or of the result of the global function, fun,
	// if that is an iterator (iter.Seq, iter.Seq2), and 0 otherwise.
	seqArity(fun string, called bool) int
}

// isValue is valueOracle's.
func (s *Session) isValue(name string) bool {
	if _, isType := s.types[name]; isType {
		return false
	}
	v, ok := s.probe(name)
	return ok && v.IsValid()
}

// seqArity is valueOracle's.
func (s *Session) seqArity(fun string, called bool) int {
	v, ok := s.probe(fun)
	if !ok || !v.IsValid() || v.Kind() != reflect.Func {
		return 0
	}
	t := v.Type()
	if called {
		if t.NumOut() != 1 {
			return 0
		}
		t = t.Out(0)
	}
	return seqTypeArity(t)
}

// seqTypeArity is seqArity for a reflect type.
func seqTypeArity(t reflect.Type) int {
	if t.Kind() != reflect.Func || t.NumIn() != 1 || t.NumOut() != 0 {
		return 0
	}
	y := t.In(0)
	if y.Kind() != reflect.Func || y.NumOut() != 1 || y.Out(0).Kind() != reflect.Bool || y.NumIn() < 1 || y.NumIn() > 2 {
		return 0
	}
	return y.NumIn()
}

// seqTypeExprArity is seqTypeArity for a type written in the source:
// iter.Seq[V], iter.Seq2[K, V] or func(yield func(…) bool).
func seqTypeExprArity(t ast.Expr) int {
	switch x := t.(type) {
	case *ast.IndexExpr:
		if sel, ok := x.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Seq" {
			return 1
		}
	case *ast.IndexListExpr:
		if sel, ok := x.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Seq2" {
			return 2
		}
	case *ast.FuncType:
		if x.Results != nil && len(x.Results.List) > 0 || x.Params == nil || len(x.Params.List) != 1 || len(x.Params.List[0].Names) > 1 {
			return 0
		}
		y, ok := x.Params.List[0].Type.(*ast.FuncType)
		if !ok || y.Results == nil || len(y.Results.List) != 1 {
			return 0
		}
		if id, ok := y.Results.List[0].Type.(*ast.Ident); !ok || id.Name != "bool" {
			return 0
		}
		n := 0
		for _, f := range y.Params.List {
			if len(f.Names) == 0 {
				n++
			}
			n += len(f.Names)
		}
		if n == 1 || n == 2 {
			return n
		}
	}
	return 0
}

// stdIterators are the functions of the standard library returning
// iterators, with the arity of the iterators.
var stdIterators = map[string]int{
	"maps.Keys": 1, "maps.Values": 1, "maps.All": 2,
	"slices.All": 2, "slices.Values": 1, "slices.Backward": 2,
}

// cellIterators returns the names of the functions and methods, and of the
// variables, declared in the cell with an iterator type, with their arity.
func (r *rewriter) cellIterators() (funcs, vars map[string]int) {
	funcs, vars = map[string]int{}, map[string]int{}
	r.cellTypes = map[string]bool{}
	if r.cell == "" {
		return funcs, vars
	}
	f, err := parser.ParseFile(token.NewFileSet(), "cell", r.cell, parser.SkipObjectResolution)
	if err != nil {
		// A cell of statements: parse it as the body of a function.
		f, err = parser.ParseFile(token.NewFileSet(), "cell", chunkPrefix+r.cell+"\n}", parser.SkipObjectResolution)
		if err != nil {
			// Declarations and statements mixed: the rewritten text only.
			f, _ = parser.ParseFile(token.NewFileSet(), "cell", chunkPrefix+r.ed.src+"\n}", parser.SkipObjectResolution)
		}
	}
	if f == nil {
		return funcs, vars
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.TypeSpec:
			r.cellTypes[x.Name.Name] = true
		case *ast.FuncDecl:
			if res := x.Type.Results; res != nil && len(res.List) == 1 && len(res.List[0].Names) <= 1 {
				if a := seqTypeExprArity(res.List[0].Type); a > 0 {
					funcs[x.Name.Name] = a
				}
			}
		case *ast.Field:
			if a := seqTypeExprArity(x.Type); a > 0 {
				for _, id := range x.Names {
					vars[id.Name] = a
				}
			}
		case *ast.ValueSpec:
			a := 0
			if x.Type != nil {
				a = seqTypeExprArity(x.Type)
			}
			for i, id := range x.Names {
				if x.Type == nil && i < len(x.Values) {
					if fl, ok := x.Values[i].(*ast.FuncLit); ok {
						a = seqTypeExprArity(fl.Type)
					}
				}
				if a > 0 {
					vars[id.Name] = a
				}
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE && len(x.Lhs) == len(x.Rhs) {
				for i, l := range x.Lhs {
					id, ok := l.(*ast.Ident)
					if !ok {
						continue
					}
					switch v := x.Rhs[i].(type) {
					case *ast.FuncLit:
						if a := seqTypeExprArity(v.Type); a > 0 {
							vars[id.Name] = a
						}
					case *ast.CallExpr:
						if a := r.callArity(v, funcs); a > 0 {
							vars[id.Name] = a
						}
					}
				}
			}
		}
		return true
	})
	return funcs, vars
}

// callArity is the arity of the iterator a call returns, 0 if it does not
// return one (or it is not known to).
func (r *rewriter) callArity(c *ast.CallExpr, funcs map[string]int) int {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		if a := funcs[f.Name]; a > 0 {
			return a
		}
	case *ast.SelectorExpr:
		if pkg, ok := f.X.(*ast.Ident); ok {
			p := r.oracle.importPath(pkg.Name)
			if p == "" {
				p = pkg.Name
			}
			if a := stdIterators[p+"."+f.Sel.Name]; a > 0 {
				return a
			}
		}
		if a := funcs[f.Sel.Name]; a > 0 { // a method declared in the cell
			return a
		}
	case *ast.IndexExpr: // an instantiated generic function
		if id, ok := f.X.(*ast.Ident); ok {
			return funcs[id.Name]
		}
	}
	if vo, ok := r.oracle.(valueOracle); ok && exprString(c.Fun) != "" {
		return vo.seqArity(exprString(c.Fun), true)
	}
	return 0
}

// seqArity is the arity of the iterator e, 0 if e is not known to be one.
func (r *rewriter) seqArity(e ast.Expr) int {
	if r.iterFuncs == nil {
		r.iterFuncs, r.iterVars = r.cellIterators()
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return r.seqArity(x.X)
	case *ast.FuncLit:
		return seqTypeExprArity(x.Type)
	case *ast.CallExpr:
		return r.callArity(x, r.iterFuncs)
	case *ast.Ident:
		if a := r.iterVars[x.Name]; a > 0 {
			return a
		}
		if _, local := r.locals[x.Name]; local {
			return 0
		}
		if vo, ok := r.oracle.(valueOracle); ok {
			return vo.seqArity(x.Name, false)
		}
	}
	return 0
}

// rangeFunc rewrites a range over an iterator function into a loop pulling
// its values (iter.Pull, a goroutine handing them over): break, continue,
// labels and return keep their meaning, and the iterator is stopped (yield
// returns false) whenever the loop is left. label is the statement's label,
// or nil. It reports whether x was such a range.
func (r *rewriter) rangeFunc(x *ast.RangeStmt, label *ast.LabeledStmt) bool {
	arity := r.seqArity(x.X)
	if arity == 0 {
		return false
	}
	nvars := 0
	if x.Key != nil {
		nvars = 1
	}
	if x.Value != nil {
		nvars = 2
	}
	if nvars > arity {
		r.fail(x.X, "range over %s permits only %d iteration variable(s)", r.raw(x.X), arity)
		return true
	}
	next, stop, ok := r.fresh("Next"), r.fresh("Stop"), r.fresh("OK")
	pull := "__hmiter.Pull"
	if arity == 2 {
		pull = "__hmiter.Pull2"
	}
	lhs := []string{"_", "_", ok}[2-arity:]
	if x.Key != nil {
		lhs[0] = r.raw(x.Key)
	}
	if x.Value != nil {
		lhs[1] = r.raw(x.Value)
	}
	get := strings.Join(lhs, ", ") + " := " + next + "()"
	if x.Tok == token.ASSIGN {
		get = "var " + ok + " bool; " + strings.Join(lhs, ", ") + " = " + next + "()"
	}
	lab := ""
	start := r.off(x.For)
	if label != nil {
		lab = label.Label.Name + ": "
		start = r.off(label.Pos())
	}
	r.ed.replace(start, r.off(x.Body.Lbrace)+1, func() string {
		return fmt.Sprintf("{ %s, %s := %s(%s); %sfor { %s; if !%s { break };", next, stop, pull, r.src(x.X), lab, get, ok)
	})
	r.ed.insert(r.off(x.Body.Rbrace)+1, " ; "+stop+"() }")
	r.exitStops = append(r.exitStops, func() { r.stopOnExit(x.Body, stop, label) })
	return true
}

// stopOnExit stops the iterator before each statement of body that leaves
// the loop other than by its end or an unlabeled break: return, and break,
// continue or goto to a label outside the loop.
func (r *rewriter) stopOnExit(body *ast.BlockStmt, stop string, label *ast.LabeledStmt) {
	inner := map[string]bool{}
	if label != nil {
		inner[label.Label.Name] = true // continue L and break L stay in the loop's statement
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok {
			inner[l.Label.Name] = true
		}
		return true
	})
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			r.stopBefore(x, stop)
		case *ast.BranchStmt:
			if x.Label != nil && !inner[x.Label.Name] {
				r.stopBefore(x, stop)
			}
		}
		return true
	})
}

func (r *rewriter) stopBefore(s ast.Stmt, stop string) {
	r.ed.insert(r.off(s.Pos()), "{ "+stop+"(); ")
	r.ed.insert(r.off(s.End()), " }")
}

// newExpr rewrites new(expr), Go 1.26's pointer to a new variable holding
// expr, to a helper call; new(T) of a type stays.
func (r *rewriter) newExpr(x *ast.CallExpr) {
	id, ok := x.Fun.(*ast.Ident)
	if !ok || id.Name != "new" || len(x.Args) != 1 || !r.isValueExpr(x.Args[0]) {
		return
	}
	if _, local := r.locals["new"]; local {
		return
	}
	r.ed.replace(r.off(id.Pos()), r.off(id.End()), func() string { return "__hmNew" })
}

// isValueExpr reports whether e, the operand of new, is an expression rather
// than a type.
func (r *rewriter) isValueExpr(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit, *ast.CompositeLit, *ast.BinaryExpr, *ast.UnaryExpr, *ast.CallExpr, *ast.FuncLit, *ast.SliceExpr, *ast.TypeAssertExpr:
		return true
	case *ast.IndexExpr: // a[i], or a generic type List[int]
		return r.isValueExpr(x.X)
	case *ast.IndexListExpr:
		return false
	case *ast.ParenExpr:
		return r.isValueExpr(x.X)
	case *ast.StarExpr:
		return r.isValueExpr(x.X)
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && r.oracle.importPath(pkg.Name) != "" {
			return false
		}
		return true
	case *ast.Ident:
		switch x.Name {
		case "true", "false", "nil", "iota":
			return true
		}
		if _, local := r.locals[x.Name]; local {
			return true
		}
		if r.iterFuncs == nil {
			r.iterFuncs, r.iterVars = r.cellIterators()
		}
		if basicTypes[x.Name] || r.cellTypes[x.Name] {
			return false
		}
		if vo, ok := r.oracle.(valueOracle); ok {
			return vo.isValue(x.Name)
		}
	}
	return false
}

// asType rewrites errors.AsType[E](err) (Go 1.26) and errors.As(err, &t)
// to helpers of the session: a generic function in a source package
// "errors" would hide the compiled one, and the compiled errors.As rejects
// pointers to the types of cells ("*target must be interface or implement
// error": yaegi's reflect types of them have no methods).
func (r *rewriter) asType(x *ast.CallExpr) {
	fun, helper := x.Fun, "__hmAs"
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun, helper = ix.X, "__hmAsType"
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != strings.TrimPrefix(helper, "__hm") {
		return
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	if p := r.oracle.importPath(pkg.Name); p != "errors" && !(p == "" && pkg.Name == "errors") {
		return
	}
	r.ed.replace(r.off(sel.Pos()), r.off(sel.End()), func() string { return helper })
}

// closureArgs makes the function literals passed as arguments in a loop
// body capture the current iteration's variables, also when compiled code
// keeps and calls them later (sync.WaitGroup.Go): yaegi shares one slot
// between the iterations otherwise. Each such literal is built by a
// function literal called on the spot, whose own variables copy the loop's
// variables (names) and those the body declared before, when neither the
// body nor a closure assigns them.
func (r *rewriter) closureArgs(body *ast.BlockStmt, names map[string]bool) {
	assigned := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						assigned[id.Name] = true
					}
				}
			}
		case *ast.IncDecStmt:
			if id, ok := x.X.(*ast.Ident); ok {
				assigned[id.Name] = true
			}
		case *ast.UnaryExpr:
			if id, ok := x.X.(*ast.Ident); ok && x.Op == token.AND {
				assigned[id.Name] = true
			}
		}
		return true
	})
	declared := map[string]bool{}
	for n := range names {
		declared[n] = true
	}
	for _, st := range body.List {
		r.copyIntoClosures(st, declared, assigned)
		switch x := st.(type) {
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := x.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, sp := range gd.Specs {
					for _, id := range sp.(*ast.ValueSpec).Names {
						declared[id.Name] = true
					}
				}
			}
		}
	}
}

// copyIntoClosures wraps the function literals passed as arguments in st
// that use variables of declared not in assigned (see closureArgs).
func (r *rewriter) copyIntoClosures(st ast.Stmt, declared, assigned map[string]bool) {
	ast.Inspect(st, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "append" {
			return true // a builtin: the closure stays interpreted
		}
		for _, a := range c.Args {
			lit, ok := a.(*ast.FuncLit)
			if !ok {
				continue
			}
			var copies []string
			seen := map[string]bool{}
			use := func(id *ast.Ident) {
				if declared[id.Name] && !assigned[id.Name] && !seen[id.Name] {
					seen[id.Name] = true
					copies = append(copies, id.Name)
				}
			}
			ast.Inspect(lit.Body, func(m ast.Node) bool {
				switch x := m.(type) {
				case *ast.SelectorExpr:
					ast.Inspect(x.X, func(k ast.Node) bool {
						if id, ok := k.(*ast.Ident); ok {
							use(id)
						}
						return true
					})
					return false
				case *ast.Ident:
					use(x)
				}
				return true
			})
			if len(copies) == 0 {
				continue
			}
			var decl strings.Builder
			for _, v := range copies {
				decl.WriteString(v + " := " + v + "; ")
			}
			r.ed.insert(r.off(lit.Pos()), "func() "+r.raw(lit.Type)+" { "+decl.String()+"return ")
			r.ed.insert(r.off(lit.End()), " }()")
		}
		return true
	})
}

// identNames is the set of the names of the identifiers among es.
func identNames(es ...ast.Expr) map[string]bool {
	set := map[string]bool{}
	for _, e := range es {
		if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
			set[id.Name] = true
		}
	}
	return set
}

// cmpFloats makes the untyped float constants among the arguments of
// cmp.Compare, cmp.Less and cmp.Or float64: yaegi infers no type argument
// from them ("untyped float does not implement cmp.Ordered"), where Go
// gives them the other arguments' type, or float64. (A float32 argument
// beside one is thus not supported.)
func (r *rewriter) cmpFloats(x *ast.CallExpr) {
	sel, ok := x.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	if p := r.oracle.importPath(pkg.Name); p != "cmp" && !(p == "" && pkg.Name == "cmp") {
		return
	}
	for _, a := range x.Args {
		lit := a
		if u, ok := a.(*ast.UnaryExpr); ok && (u.Op == token.SUB || u.Op == token.ADD) {
			lit = u.X
		}
		if b, ok := lit.(*ast.BasicLit); ok && b.Kind == token.FLOAT {
			r.ed.insert(r.off(a.Pos()), "float64(")
			r.ed.insert(r.off(a.End()), ")")
		}
	}
}
