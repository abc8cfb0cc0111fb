package lang

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
)

// This file rewrites statements so that Go 1.22+ code runs on yaegi v0.16.1:
// range over integers, the min/max/clear builtins, per-iteration loop
// variables and goroutines whose panics are reported instead of killing the
// process. Rewrites are textual edits at AST positions, so line numbers stay
// those of the cell (hoisted code is inserted on the statement's own line).

// chunkPrefix wraps statements into a function so go/parser accepts them.
const chunkPrefix = "package main; func _() {"

// tri is a three-valued answer of the integer-type inference.
type tri int

const (
	unknown tri = iota
	yes
	no
)

// typeOracle answers questions about the session the rewriter cannot settle
// from the cell's text alone.
type typeOracle interface {
	// intKind reports whether the pure expression expr (no calls) evaluates
	// to an integer in the session's global scope.
	intKind(expr string) tri
	// numOut returns the number of results of the function named by the pure
	// expression fun (e.g. "fmt.Println", "f", "m.Energy"), or -1 if unknown.
	numOut(fun string) int
	// isHandle reports whether name holds a *display.Handle.
	isHandle(name string) bool
	// importPath returns the path of the package imported as name, or "".
	importPath(name string) string
}

// rewriter rewrites one chunk of consecutive top-level statements, or one
// top-level declaration.
type rewriter struct {
	ed     *editor
	file   *token.File
	body   *ast.BlockStmt // the statements of a chunk; nil for a declaration
	root   ast.Node       // what to rewrite (body, or the declaration's file)
	prefix int            // length of the text parsed before ed.src
	oracle typeOracle
	next   *int // session-wide counter for fresh names

	// rangeAsInt forces range statements of unknown type to be treated as
	// ranges over integers (second attempt after yaegi failed on them).
	rangeAsInt  bool
	rangeUnsure bool // some range statement had an operand of unknown type

	// site registers a function for the depth guard (see guards.site) and
	// returns its index; nil leaves functions unguarded. cell and base place
	// the text in the cell: ed.src is cell[base:…].
	site func(name string, line int) int
	cell string
	base int

	wrapFinal bool     // wrap the final expression statement to capture its value
	handles   []string // variables assigned a *display.Handle in this chunk
	locals    map[string]tri
	// iterFuncs and iterVars are the functions and variables the cell
	// declares with an iterator type (see cellIterators), found lazily.
	iterFuncs, iterVars map[string]int
	cellTypes           map[string]bool // the types the cell declares
	exitStops           []func()        // see rangeFunc
	err                 error
}

// parseChunk parses statement text. Offsets of the returned nodes, minus
// len(chunkPrefix), are offsets in text.
func parseChunk(text string) (*token.File, *ast.BlockStmt, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cell", chunkPrefix+text+"\n}", parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	var file *token.File
	fset.Iterate(func(tf *token.File) bool { file = tf; return false })
	return file, f.Decls[0].(*ast.FuncDecl).Body, nil
}

func (r *rewriter) off(p token.Pos) int { return r.file.Offset(p) - r.prefix }

// declPrefix makes a declaration a file go/parser accepts.
const declPrefix = "package main;"

// parseDecl parses declaration text; offsets minus len(declPrefix) are
// offsets in text.
func parseDecl(text string) (*token.File, *ast.File, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cell", declPrefix+text, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	var file *token.File
	fset.Iterate(func(tf *token.File) bool { file = tf; return false })
	return file, f, nil
}

func (r *rewriter) src(n ast.Node) string { return r.ed.span(r.off(n.Pos()), r.off(n.End())) }

// raw is the untouched source text of n.
func (r *rewriter) raw(n ast.Node) string { return r.ed.src[r.off(n.Pos()):r.off(n.End())] }

func (r *rewriter) fresh(prefix string) string {
	*r.next++
	return fmt.Sprintf("__hm%s%d", prefix, *r.next)
}

func (r *rewriter) fail(n ast.Node, format string, args ...any) {
	if r.err == nil {
		line, col := lineCol(r.ed.src, r.off(n.Pos()))
		r.err = fmt.Errorf("%d:%d: %s", line, col, fmt.Sprintf(format, args...))
	}
}

// rewrite collects all edits of the chunk. final, if not nil, is the cell's
// final expression statement, whose value is to be captured.
func (r *rewriter) rewrite(final *ast.ExprStmt) {
	if r.root == nil {
		r.root, r.prefix = r.body, len(chunkPrefix)
	}
	r.locals = map[string]tri{}
	r.collectLocals()
	blockStmts := map[ast.Stmt]bool{}
	ast.Inspect(r.root, func(n ast.Node) bool {
		switch b := n.(type) {
		case *ast.BlockStmt:
			for _, s := range b.List {
				if _, isCase := s.(*ast.CaseClause); !isCase {
					if _, isComm := s.(*ast.CommClause); !isComm {
						blockStmts[s] = true
					}
				}
			}
		case *ast.CaseClause:
			for _, s := range b.Body {
				blockStmts[s] = true
			}
		case *ast.CommClause:
			for _, s := range b.Body {
				blockStmts[s] = true
			}
		}
		return true
	})

	var stack []ast.Node
	var minmax []minmaxCall
	var tuples [][2]ast.Stmt // an assignment and the statement it is part of
	ast.Inspect(r.root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		stack = append(stack, n)
		switch x := n.(type) {
		case *ast.RangeStmt:
			var label *ast.LabeledStmt
			if len(stack) > 1 {
				label, _ = stack[len(stack)-2].(*ast.LabeledStmt)
			}
			if !r.rangeFunc(x, label) {
				r.rangeStmt(x)
			}
			if x.Tok == token.DEFINE {
				r.closureArgs(x.Body, identNames(x.Key, x.Value))
			}
		case *ast.ForStmt:
			if as, ok := x.Init.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
				r.perIteration(x.Body, as.Lhs, []ast.Node{x.Init, x.Cond, x.Post}, forNeedsCopy)
				r.closureArgs(x.Body, identNames(as.Lhs...))
			} else {
				r.closureArgs(x.Body, nil)
			}
		case *ast.GoStmt:
			r.goStmt(x)
		case *ast.AssignStmt:
			if len(x.Lhs) > 1 && len(x.Lhs) == len(x.Rhs) {
				r.parallelValues(x.Rhs)
			}
			if x.Tok == token.ASSIGN && len(x.Lhs) > 1 && len(x.Lhs) == len(x.Rhs) && blockStmts[x] {
				r.nilValues(x)
			}
			if isTuple(x) && blockStmts[x] {
				tuples = append(tuples, [2]ast.Stmt{x, x})
			}
			for i, rhs := range x.Rhs {
				if i < len(x.Lhs) && isDisplayCall(rhs) {
					if id, ok := x.Lhs[i].(*ast.Ident); ok {
						r.handles = append(r.handles, id.Name)
					}
				}
			}
		case *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt:
			if as, ok := initStmt(x.(ast.Stmt)).(*ast.AssignStmt); ok && isTuple(as) {
				tuples = append(tuples, [2]ast.Stmt{as, x.(ast.Stmt)})
			}
		case *ast.ValueSpec:
			if len(x.Names) > 1 && len(x.Names) == len(x.Values) {
				r.parallelValues(x.Values)
			}
		case *ast.CallExpr:
			r.call(x, stack, blockStmts, &minmax)
			r.newExpr(x)
			r.asType(x)
			r.cmpFloats(x)
		case *ast.FuncLit:
			r.nameParams(x.Type)
			r.guardDepth("a function literal", x.Body)
		case *ast.FuncDecl:
			r.nameParams(x.Type)
			name := x.Name.Name
			if x.Recv != nil && len(x.Recv.List) == 1 {
				base := recvBase(x.Recv.List[0].Type)
				if base == "" {
					base = "?"
				}
				name = base + "." + name
			}
			r.guardDepth(name, x.Body)
		}
		return true
	})
	// Inner loops first, so an inner iterator stops before an outer one.
	for i := len(r.exitStops) - 1; i >= 0; i-- {
		r.exitStops[i]()
	}
	// yaegi makes every variable declared anywhere in top-level statements a
	// global (a loop's `i` included), so compound statements at the top
	// level run in a function literal, where scoping is right.
	var top []ast.Stmt
	if r.body != nil {
		top = r.body.List
	}
	var compound []ast.Stmt
	for _, st := range top {
		switch st.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.BlockStmt, *ast.LabeledStmt:
			r.ed.insert(r.off(st.Pos()), "func() { ")
			compound = append(compound, st)
		}
	}
	// Innermost calls first, so an outer min/max embeds the inner's temporary.
	for i := len(minmax) - 1; i >= 0; i-- {
		r.minmax(minmax[i])
	}
	// After min/max, whose hoisted computations must precede the
	// temporaries; innermost first, as each embeds its rewritten operand.
	for i := len(tuples) - 1; i >= 0; i-- {
		r.tupleToElements(tuples[i][0].(*ast.AssignStmt), tuples[i][1])
	}
	// After the blocks of tupleToElements ending at the same place.
	for _, st := range compound {
		r.ed.insert(r.off(st.End()), " }()")
	}
	if final != nil && r.wrapFinal {
		r.ed.insert(r.off(final.X.Pos()), "__hmResult(")
		r.ed.insert(r.off(final.X.End()), ")")
	}
}

// parallelValues parenthesises the calls, composite literals and receives
// among the values of a parallel assignment or declaration (a, b = 1, f()).
// yaegi v0.16.1 lets such a value be stored straight into its destination
// and then skips the whole statement's assignment, so the other variables
// kept their old values (a, b := 1, []int{2} left a at 0); a parenthesised
// value is computed into its own slot and assigned with the others.
func (r *rewriter) parallelValues(values []ast.Expr) {
	for _, v := range values {
		switch x := v.(type) {
		case *ast.CallExpr, *ast.CompositeLit:
		case *ast.UnaryExpr:
			if x.Op != token.ARROW {
				continue
			}
		default:
			continue
		}
		r.ed.insert(r.off(v.Pos()), "(")
		r.ed.insert(r.off(v.End()), ")")
	}
}

// nilValues moves the untyped nils out of a parallel assignment:
// `a, err = 5, nil` becomes `a = 5; err = nil`, which yaegi v0.16.1 runs
// (the parallel assignment panicked with "reflect: New(nil)"). The nils are
// assigned last, which changes nothing as long as the destinations are
// distinct and their operands (s[i], p.f) pure and not assigned here.
func (r *rewriter) nilValues(x *ast.AssignStmt) {
	if _, shadowed := r.locals["nil"]; shadowed {
		return
	}
	assigned := map[string]bool{}
	for _, l := range x.Lhs {
		if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
			assigned[id.Name] = true
		}
	}
	seen := map[string]bool{}
	hasNil := false
	for i, l := range x.Lhs {
		text := r.raw(l)
		if seen[text] || !isPure(l) {
			return
		}
		if text != "_" {
			seen[text] = true
		}
		if _, ok := l.(*ast.Ident); !ok && mentions(text, assigned) {
			return
		}
		if v, ok := x.Rhs[i].(*ast.Ident); ok && v.Name == "nil" {
			hasNil = true
		}
	}
	if !hasNil {
		return
	}
	r.ed.replace(r.off(x.Pos()), r.off(x.End()), func() string {
		var lhs, rhs, nils []string
		for i, l := range x.Lhs {
			if v, ok := x.Rhs[i].(*ast.Ident); ok && v.Name == "nil" {
				nils = append(nils, r.src(l)+" = nil")
			} else {
				lhs, rhs = append(lhs, r.src(l)), append(rhs, r.src(x.Rhs[i]))
			}
		}
		var stmts []string
		if len(lhs) > 0 {
			stmts = append(stmts, strings.Join(lhs, ", ")+" = "+strings.Join(rhs, ", "))
		}
		return strings.Join(append(stmts, nils...), "; ")
	})
}

// initStmt returns the init statement of an if or switch statement.
func initStmt(s ast.Stmt) ast.Stmt {
	switch x := s.(type) {
	case *ast.IfStmt:
		return x.Init
	case *ast.SwitchStmt:
		return x.Init
	case *ast.TypeSwitchStmt:
		return x.Init
	}
	return nil
}

// isTuple reports whether x assigns the several values of one operand
// (a call, comma-ok index, type assertion or receive) to existing variables.
func isTuple(x *ast.AssignStmt) bool {
	return x.Tok == token.ASSIGN && len(x.Lhs) > 1 && len(x.Rhs) == 1
}

// tupleToElements rewrites `m[k], err = f()` (see isTuple) with an index
// expression on the left into `{ t1, t2 := f(); m[k], err = t1, t2 }`.
// yaegi v0.16.1 stores such values straight into the frame slots of the
// destinations, and the slot of a map element is a copy, so the map was left
// unchanged. stmt is x itself or the if or switch statement x initialises
// (`if m[k], err = f(); err != nil {…}`), before which the temporaries are
// declared, in a block, or in a function literal for an assignment at the
// top level of a cell, where a block's variables would be globals. (An
// index operand with side effects now runs after the right-hand side, not
// before it.)
//
// A cell's `a, b = f()` is rewritten so too: yaegi stores the results of a
// compiled call into the variables in the call's own step, so a program
// abandoned inside the call (see interrupt.go) would still assign the
// cell's variables when it returns; into temporaries, the assignment is a
// step of its own, which the stopped program never takes.
func (r *rewriter) tupleToElements(x *ast.AssignStmt, stmt ast.Stmt) {
	_, rewrite := ast.Unparen(x.Rhs[0]).(*ast.CallExpr)
	rewrite = rewrite && r.body != nil
	for _, l := range x.Lhs {
		if _, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
			rewrite = true
		}
	}
	if !rewrite {
		return
	}
	open, closing := "{ ", " }"
	if r.body != nil {
		for _, st := range r.body.List {
			switch {
			case st == x:
				open, closing = "func() { ", " }()"
			case st == stmt:
				// Already in the function literal of a top-level compound
				// statement, whose end the block's would cross.
				open, closing = "", ""
			}
		}
	}
	temps := make([]string, len(x.Lhs))
	for i := range temps {
		temps[i] = r.fresh("V")
	}
	rhs := x.Rhs[0]
	value := r.src(rhs) // now: the replacement below is part of the span
	r.ed.insert(r.off(stmt.Pos()), open+strings.Join(temps, ", ")+" := "+value+"; ")
	r.ed.replace(r.off(rhs.Pos()), r.off(rhs.End()), func() string { return strings.Join(temps, ", ") })
	if closing != "" {
		r.ed.insert(r.off(stmt.End()), closing)
	}
}

// nameParams names the unnamed parameters of a function literal or
// declaration `_`. yaegi v0.16.1 gives an unnamed parameter no frame slot
// but stores the argument as if it had one, over the function's first local
// (func(train.Update) { for i := range g {…} } panicked with "reflect.Set:
// value of type train.Update is not assignable to type int";
// traefik/yaegi#1667).
func (r *rewriter) nameParams(ft *ast.FuncType) {
	if ft.Params == nil {
		return
	}
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			r.ed.insert(r.off(f.Type.Pos()), "_ ")
		}
	}
}

// isDisplayCall reports whether e calls a display function returning a Handle.
func isDisplayCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "display" && sel.Sel.Name != "Clear" && sel.Sel.Name != "NewProgress"
}

// collectLocals records what is known about the integer-ness of the names the
// chunk declares, in source order (a flat approximation of scopes).
func (r *rewriter) collectLocals() {
	ast.Inspect(r.root, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE && len(x.Lhs) == len(x.Rhs) {
				for i, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						r.locals[id.Name] = r.isInt(x.Rhs[i])
					}
				}
			} else if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						r.locals[id.Name] = unknown
					}
				}
			}
		case *ast.ValueSpec:
			k := unknown
			if x.Type != nil {
				k = typeIsInt(x.Type)
			}
			for i, id := range x.Names {
				kk := k
				if x.Type == nil && i < len(x.Values) {
					kk = r.isInt(x.Values[i])
				}
				r.locals[id.Name] = kk
			}
		case *ast.Field:
			for _, id := range x.Names {
				r.locals[id.Name] = typeIsInt(x.Type)
			}
		case *ast.RangeStmt:
			if id, ok := x.Key.(*ast.Ident); ok && x.Tok == token.DEFINE {
				if r.isInt(x.X) == yes {
					r.locals[id.Name] = yes
				} else {
					r.locals[id.Name] = unknown
				}
			}
			if id, ok := x.Value.(*ast.Ident); ok && x.Tok == token.DEFINE {
				r.locals[id.Name] = unknown
			}
		}
		return true
	})
}

var intTypes = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true, "rune": true, "byte": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
}

func typeIsInt(t ast.Expr) tri {
	if id, ok := t.(*ast.Ident); ok && intTypes[id.Name] {
		return yes
	}
	return no
}

// isInt infers whether e has an integer type.
func (r *rewriter) isInt(e ast.Expr) tri {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT || x.Kind == token.CHAR {
			return yes
		}
		return no
	case *ast.ParenExpr:
		return r.isInt(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.SUB || x.Op == token.ADD || x.Op == token.XOR {
			return r.isInt(x.X)
		}
		return no
	case *ast.BinaryExpr:
		switch x.Op {
		case token.SHL, token.SHR:
			return r.isInt(x.X)
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR, token.AND_NOT:
			a, b := r.isInt(x.X), r.isInt(x.Y)
			if a == no || b == no {
				return no
			}
			if a == yes || b == yes {
				return yes
			}
			return unknown
		}
		return no
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok {
			if id.Name == "len" || id.Name == "cap" || intTypes[id.Name] {
				return yes
			}
			if id.Name == "float64" || id.Name == "float32" || id.Name == "string" {
				return no
			}
		}
		return unknown
	case *ast.Ident:
		if k, ok := r.locals[x.Name]; ok {
			return k
		}
		return r.oracle.intKind(x.Name)
	case *ast.SelectorExpr, *ast.IndexExpr:
		if root := rootIdent(x); root != nil {
			if _, local := r.locals[root.Name]; !local && isPure(x) {
				return r.oracle.intKind(r.raw(x))
			}
		}
		return unknown
	}
	return unknown
}

// rootIdent returns the identifier at the root of a selector/index chain.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// isPure reports whether evaluating e cannot have side effects (no calls,
// receives or function literals).
func isPure(e ast.Expr) bool {
	pure := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr, *ast.FuncLit, *ast.CompositeLit:
			pure = false
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				pure = false
			}
		}
		return pure
	})
	return pure
}

// isSimple reports whether e can be repeated in generated code without
// changing behaviour or cost: identifiers, literals, selectors of those.
func isSimple(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident, *ast.BasicLit:
		return true
	case *ast.SelectorExpr:
		return isSimple(x.X)
	case *ast.ParenExpr:
		return isSimple(x.X)
	case *ast.UnaryExpr:
		return x.Op == token.SUB && isSimple(x.X)
	}
	return false
}

// rangeStmt rewrites `for k := range n` over an integer n into a
// three-clause loop, and gives range variables per-iteration semantics.
func (r *rewriter) rangeStmt(x *ast.RangeStmt) {
	var keys []ast.Expr
	if x.Tok == token.DEFINE {
		keys = []ast.Expr{x.Key, x.Value}
	}
	k := r.isInt(x.X)
	if k == unknown {
		r.rangeUnsure = true
		if r.rangeAsInt {
			k = yes
		}
	}
	if k != yes {
		r.perIteration(x.Body, keys, []ast.Node{x.Key, x.Value}, rangeNeedsCopy)
		return
	}
	key := ""
	if id, ok := x.Key.(*ast.Ident); ok && id.Name != "_" {
		key = id.Name
	}
	define := x.Tok == token.DEFINE || key == ""
	simple := isSimple(x.X)
	headStart := r.off(x.For) + len("for")
	headEnd := r.off(x.Body.Lbrace)
	n := r.fresh("N")
	kk := key
	if kk == "" {
		kk = r.fresh("K")
	} else if define && rangeNeedsCopy(loopVarUse(x.Body, map[string]bool{key: true})) {
		kk = r.fresh("L")
		r.ed.insert(r.off(x.Body.Lbrace)+1, " "+key+" := "+kk+";")
	}
	r.ed.replace(headStart, headEnd, func() string {
		xs := r.src(x.X)
		switch {
		case define && simple:
			return fmt.Sprintf(" %s := %s - %s; %s < %s; %s++ ", kk, xs, xs, kk, xs, kk)
		case define:
			return fmt.Sprintf(" %s, %s := 0, int(%s); %s < %s; %s++ ", kk, n, xs, kk, n, kk)
		case simple:
			return fmt.Sprintf(" %s = %s - %s; %s < %s; %s++ ", kk, xs, xs, kk, xs, kk)
		default:
			return fmt.Sprintf(" %s = 0; %s < int(%s); %s++ ", kk, kk, xs, kk)
		}
	})
}

// perIteration gives the loop variables vars Go 1.22 per-iteration semantics
// when needsCopy says the body's use of them requires it: the loop's own
// variables get fresh names in the loop header (nodes of header) and the body
// starts by declaring the user's names from them. (A self-referencing
// `i := i` would not do: yaegi binds both sides to one variable in top-level
// statements.)
func (r *rewriter) perIteration(body *ast.BlockStmt, vars []ast.Expr, header []ast.Node, needsCopy func(captures, assigns bool) bool) {
	set := map[string]bool{}
	for _, v := range vars {
		if id, ok := v.(*ast.Ident); ok && id.Name != "_" {
			set[id.Name] = true
		}
	}
	if len(set) == 0 || !needsCopy(loopVarUse(body, set)) {
		return
	}
	fresh := map[string]string{}
	var names, news []string
	for _, n := range sortedKeys(set) {
		fresh[n] = r.fresh("L")
		names = append(names, n)
		news = append(news, fresh[n])
	}
	for _, h := range header {
		if h == nil || reflect.ValueOf(h).IsNil() {
			continue
		}
		ast.Inspect(h, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(x.X, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok && fresh[id.Name] != "" {
						to := fresh[id.Name]
						r.ed.replace(r.off(id.Pos()), r.off(id.End()), func() string { return to })
					}
					return true
				})
				return false
			case *ast.FuncLit:
				return false
			case *ast.Ident:
				if to := fresh[x.Name]; to != "" {
					r.ed.replace(r.off(x.Pos()), r.off(x.End()), func() string { return to })
				}
			}
			return true
		})
	}
	r.ed.insert(r.off(body.Lbrace)+1, " "+strings.Join(names, ", ")+" := "+strings.Join(news, ", ")+";")
}

// forNeedsCopy says when a three-clause loop's variables need a copy per
// iteration: when the body captures them (closure, goroutine, defer,
// address-of) without assigning them. A body that assigns them keeps the
// shared variable, because the assignment must reach the loop's condition
// and post statement.
func forNeedsCopy(captures, assigns bool) bool { return captures && !assigns }

// rangeNeedsCopy says when a range loop's variables need a copy per
// iteration: when the body captures them, or assigns them, since in Go an
// assignment to a range variable does not move the iteration, while yaegi
// iterates on the variable itself (k++ in the body would skip elements).
func rangeNeedsCopy(captures, assigns bool) bool { return captures || assigns }

// loopVarUse reports whether a loop body captures one of the loop variables
// set (closure, goroutine, defer, address-of) and whether it assigns one.
func loopVarUse(body *ast.BlockStmt, set map[string]bool) (captures, assigns bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit, *ast.GoStmt, *ast.DeferStmt:
			captures = true
		case *ast.UnaryExpr:
			if id, ok := x.X.(*ast.Ident); ok && x.Op == token.AND && set[id.Name] {
				captures = true
			}
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok && set[id.Name] {
						assigns = true
					}
				}
			}
		case *ast.IncDecStmt:
			if id, ok := x.X.(*ast.Ident); ok && set[id.Name] {
				assigns = true
			}
		}
		return true
	})
	return captures, assigns
}

var noResultBuiltins = map[string]bool{"print": true, "println": true, "panic": true, "delete": true, "close": true, "clear": true, "copy": true}

// goStmt wraps `go f(args)` so that a panic in the goroutine is recovered and
// reported as an error of the cell. f and args are evaluated at the go
// statement, as in Go.
func (r *rewriter) goStmt(x *ast.GoStmt) {
	call := x.Call
	r.ed.replace(r.off(x.Pos()), r.off(x.End()), func() string {
		var pre []string
		fun := r.src(call.Fun)
		_, isLit := call.Fun.(*ast.FuncLit)
		id, isIdent := call.Fun.(*ast.Ident)
		if !isLit && !(isIdent && (noResultBuiltins[id.Name] || id.Name == "append")) {
			f := r.fresh("F")
			pre = append(pre, f+" := "+fun)
			fun = f
		}
		var args []string
		for _, a := range call.Args {
			if _, lit := a.(*ast.BasicLit); lit {
				args = append(args, r.src(a))
				continue
			}
			t := r.fresh("A")
			pre = append(pre, t+" := "+r.src(a))
			args = append(args, t)
		}
		ell := ""
		if call.Ellipsis.IsValid() {
			ell = "..."
		}
		// __hm.Cell() is evaluated by the go statement itself: the cell
		// running it, also for go statements in functions declared earlier.
		body := fmt.Sprintf("go __hmGo(__hm.Cell(), func() { %s(%s%s) })", fun, strings.Join(args, ", "), ell)
		if len(pre) == 0 {
			return body
		}
		return "{ " + strings.Join(pre, "; ") + "; " + body + " }"
	})
}

// minmaxCall is a call of the min or max builtin and the statement before
// which its computation is hoisted.
type minmaxCall struct {
	call  *ast.CallExpr
	isMax bool
	stmt  ast.Stmt // nil if it cannot be hoisted
	why   string
}

func (r *rewriter) call(x *ast.CallExpr, stack []ast.Node, blockStmts map[ast.Stmt]bool, mm *[]minmaxCall) {
	switch fun := x.Fun.(type) {
	case *ast.Ident:
		switch fun.Name {
		case "make":
			if _, shadowed := r.locals["make"]; !shadowed {
				r.checkMake(x)
			}
		case "clear":
			if _, shadowed := r.locals["clear"]; !shadowed && len(x.Args) == 1 {
				r.ed.replace(r.off(fun.Pos()), r.off(fun.End()), func() string { return "__hm.Clear" })
			}
		case "min", "max":
			if _, shadowed := r.locals[fun.Name]; shadowed || len(x.Args) == 0 {
				return
			}
			c := minmaxCall{call: x, isMax: fun.Name == "max"}
			// Find the statement to hoist before: the nearest ancestor that
			// is an element of a block, unless we pass a for loop's
			// condition or post statement on the way.
			for i := len(stack) - 2; i >= 0; i-- {
				if f, ok := stack[i].(*ast.ForStmt); ok && i+1 < len(stack) && (stack[i+1] == f.Cond || stack[i+1] == f.Post) {
					c.why = "in a for loop's condition or post statement"
					break
				}
				if s, ok := stack[i].(ast.Stmt); ok && blockStmts[s] {
					c.stmt = s
					break
				}
			}
			*mm = append(*mm, c)
		}
	case *ast.SelectorExpr:
		id, ok := fun.X.(*ast.Ident)
		if !ok {
			return
		}
		// context.Background() and context.TODO() in a cell mean "no
		// particular context": use the cell's, so the call can be interrupted.
		if id.Name == "context" && len(x.Args) == 0 && (fun.Sel.Name == "Background" || fun.Sel.Name == "TODO") && r.oracle.importPath(id.Name) == "context" {
			r.ed.replace(r.off(x.Pos()), r.off(x.End()), func() string { return "ctx" })
			return
		}
		// time.Sleep ignores contexts: a cell's sleep is one the interrupt ends.
		if fun.Sel.Name == "Sleep" && r.oracle.importPath(id.Name) == "time" {
			r.ed.replace(r.off(fun.Pos()), r.off(fun.End()), func() string { return "__hm.Sleep" })
		}
		if _, local := r.locals[id.Name]; !local && id.Name != "display" && r.oracle.importPath(id.Name) != "" {
			if h := unnamedInterfaceArgs[r.oracle.importPath(id.Name)+"."+fun.Sel.Name]; h != "" && len(x.Args) == 1 {
				r.ed.insert(r.off(x.Args[0].Pos()), "__hm."+h+"(")
				r.ed.insert(r.off(x.Args[0].End()), ")")
			}
			r.addressEmbedding(x.Args)
		}
		if len(x.Args) != 1 {
			return
		}
		if (id.Name == "display" && (fun.Sel.Name == "Show")) || (fun.Sel.Name == "Update" && r.isHandle(id.Name)) {
			r.ed.insert(r.off(x.Args[0].Pos()), "__hmRich(")
			r.ed.insert(r.off(x.Args[0].End()), ")")
		}
	}
}

// addressEmbedding passes struct literals with embedded fields, among the
// arguments of a call of a compiled function, by address. yaegi v0.16.1
// finds the methods such a struct gets from an embedded compiled type
// (plotter.XYs's Len) only through a pointer, so
// plotter.NewYErrorBars(struct{ plotter.XYs; plotter.YErrors }{…}) failed
// with "method not found: Len". The literal is a temporary, so the callee
// sees the same values and methods.
func (r *rewriter) addressEmbedding(args []ast.Expr) {
	for _, a := range args {
		lit, ok := a.(*ast.CompositeLit)
		if !ok {
			continue
		}
		st, ok := lit.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 {
				r.ed.insert(r.off(a.Pos()), "&")
				break
			}
		}
	}
}

// isHandle reports whether name holds a *display.Handle, assigned earlier in
// the session or in this chunk.
func (r *rewriter) isHandle(name string) bool {
	for _, h := range r.handles {
		if h == name {
			return true
		}
	}
	return r.oracle.isHandle(name)
}

// constValue evaluates e if it is a numeric or string literal (possibly
// negated or parenthesised).
func constValue(e ast.Expr) (constant.Value, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		v := constant.MakeFromLiteral(x.Value, x.Kind, 0)
		return v, v.Kind() != constant.Unknown
	case *ast.ParenExpr:
		return constValue(x.X)
	case *ast.UnaryExpr:
		if v, ok := constValue(x.X); ok && (x.Op == token.SUB || x.Op == token.ADD) {
			return constant.UnaryOp(x.Op, v, 0), true
		}
	}
	return nil, false
}

// minmax rewrites one min/max call: constant arguments fold, otherwise the
// computation is hoisted into a temporary before the enclosing statement.
func (r *rewriter) minmax(c minmaxCall) {
	op := token.LSS
	name := "min"
	if c.isMax {
		op, name = token.GTR, "max"
	}
	// All constant: fold to the chosen argument's own text, keeping the
	// untyped constant kind (+ 0.0 makes an integer constant a float one).
	var best constant.Value
	bestArg := -1
	allConst, isFloat := true, false
	for i, a := range c.call.Args {
		v, ok := constValue(a)
		if !ok {
			allConst = false
			break
		}
		if v.Kind() == constant.Float {
			isFloat = true
		}
		if best == nil || constant.Compare(v, op, best) {
			best, bestArg = v, i
		}
	}
	if allConst {
		arg := c.call.Args[bestArg]
		r.ed.replace(r.off(c.call.Pos()), r.off(c.call.End()), func() string {
			if isFloat && best.Kind() == constant.Int {
				return "(" + r.src(arg) + " + 0.0)"
			}
			return "(" + r.src(arg) + ")"
		})
		return
	}
	if c.stmt == nil {
		why := c.why
		if why == "" {
			why = "outside a statement"
		}
		r.fail(c.call, "%s with non-constant arguments %s is not supported by the interpreter: assign it to a variable first", name, why)
		return
	}
	t := r.fresh("T")
	first := -1
	for i, a := range c.call.Args {
		if _, ok := constValue(a); !ok {
			first = i
			break
		}
	}
	r.ed.replace(r.off(c.stmt.Pos()), r.off(c.stmt.Pos()), func() string {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s := %s; ", t, r.src(c.call.Args[first]))
		for i, a := range c.call.Args {
			if i == first {
				continue
			}
			// No parentheses around operands: yaegi v0.16.1 miscompiles
			// `(x) < t || (x) != (x)`.
			as := r.src(a)
			if _, isConst := constValue(a); isConst {
				fmt.Fprintf(&sb, "if %s %s %s { %s = %s }; ", as, op, t, t, as)
				continue
			}
			if !isSimple(a) {
				tmp := r.fresh("A")
				fmt.Fprintf(&sb, "%s := %s; ", tmp, as)
				as = tmp
			}
			// a != a catches NaN, which min and max propagate.
			fmt.Fprintf(&sb, "if %s %s %s || %s != %s { %s = %s }; ", as, op, t, as, as, t, as)
		}
		return sb.String()
	})
	r.ed.replace(r.off(c.call.Pos()), r.off(c.call.End()), func() string { return t })
}

// guardDepth puts the depth guard at the top of a function body:
// `defer __hm.Leave(__hm.Enter(site))`. Line directives place it at the
// function's first statement (yaegi reports a frame of a panic at its
// function's first statement) and give the rest of the line its own
// position again (one-line functions keep their error positions).
//
// Functions that call only builtins, conversions to basic types and
// functions of imported packages (sigmoid calling math.Exp) cannot be part of
// a recursion through cell code and stay unguarded: the guard costs two
// compiled calls and a defer per call, which would double the time of such
// small helpers. A recursion whose every function only passes the others as
// values to compiled code escapes the guard; the supervisor still catches
// the runtime's stack overflow.
func (r *rewriter) guardDepth(name string, body *ast.BlockStmt) {
	if r.site == nil || body == nil || !r.callsCellCode(body) {
		return
	}
	at := r.off(body.Lbrace) + 1
	line, col := lineCol(r.cell, r.base+at)
	firstLine, firstCol := lineCol(r.cell, r.base+r.off(body.List[0].Pos()))
	site := r.site(name, line)
	r.ed.insert(at, fmt.Sprintf("defer /*line :%d:%d*/__hm.Leave(__hm.Enter(%d)); /*line :%d:%d*/", firstLine, firstCol, site, line, col))
}

// callsCellCode reports whether body calls anything but builtins,
// conversions to predeclared types and functions of imported packages.
func (r *rewriter) callsCellCode(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		switch fun := call.Fun.(type) {
		case *ast.Ident:
			if _, local := r.locals[fun.Name]; local || !predeclared[fun.Name] {
				found = true
			}
		case *ast.SelectorExpr:
			id, ok := fun.X.(*ast.Ident)
			if !ok {
				found = true // x.y.f(), f().g()
			} else if _, local := r.locals[id.Name]; local || r.oracle.importPath(id.Name) == "" {
				found = true
			}
		case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StarExpr:
			// a conversion
		case *ast.ParenExpr:
			found = true // (f)(x), (*T)(p): rare enough to guard
		default:
			found = true // f()(x), a[i](x), func(){…}()
		}
		return !found
	})
	return found
}

// predeclared lists the builtin functions and the predeclared types (as
// conversions), which never call cell code.
var predeclared = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true,
	"delete": true, "imag": true, "len": true, "make": true, "max": true, "min": true, "new": true,
	"panic": true, "print": true, "println": true, "real": true, "recover": true,
	"bool": true, "byte": true, "complex64": true, "complex128": true, "error": true, "float32": true,
	"float64": true, "int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"rune": true, "string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true, "any": true,
}

// smallMake is the largest constant size make is left alone with.
const smallMake = 1 << 16

// checkMake routes the sizes of make(T, …) through __hm.MakeSize, which
// fails with an OutOfMemory error when the allocation cannot fit, instead of
// the runtime's fatal error. Small constant sizes are left alone.
func (r *rewriter) checkMake(x *ast.CallExpr) {
	if r.site == nil || len(x.Args) < 2 {
		return
	}
	typ := r.raw(x.Args[0])
	for _, a := range x.Args[1:] {
		if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.INT {
			if v, err := strconv.ParseInt(lit.Value, 0, 64); err == nil && v <= smallMake {
				continue
			}
		}
		r.ed.insert(r.off(a.Pos()), "__hm.MakeSize((*"+typ+")(nil), ")
		r.ed.insert(r.off(a.End()), ")")
	}
}
