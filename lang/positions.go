package lang

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
)

// Positions of runtime panics in cell terms. yaegi reports the frames of a
// panic (innermost first) on its error stream, each at a position of the
// frame's function; for the top-level statements of a cell that is where
// the program starts, whichever statement panicked. So each top-level
// statement after the first of a run records where it starts (__hm.At, a
// native call per top-level statement, none inside loops or functions),
// and the frame of the cell's own code is placed there. Frames of functions
// are named with the cell that declared them: "at f (cell 3, line 2,
// column 5)".

// markStatements makes every top-level statement but the first of a chunk
// record its offset in the cell (src[start:…] is the chunk's text, file and
// body its parse). It must run before the rewrite's own edits, so that the
// marker precedes what they insert at the statement's start.
func markStatements(ed *editor, file *token.File, body *ast.BlockStmt, start int) {
	for i, st := range body.List {
		if i == 0 {
			continue
		}
		off := file.Offset(st.Pos()) - len(chunkPrefix)
		ed.insert(off, fmt.Sprintf("__hm.At(%d); ", start+off))
	}
}

// markPanics makes every statement calling the panic builtin in root (a
// chunk's body or a declaration's file, whose text starts prefix bytes
// into file, at offset base of cell n's source cell) record where it is
// just before it panics: yaegi places the frame of a panic at the first
// node of its function doing the same kind of operation, which for panic
// calls is often another one. It costs nothing until the panic.
func markPanics(ed *editor, file *token.File, root ast.Node, prefix, n int, cell string, base int) {
	ast.Inspect(root, func(node ast.Node) bool {
		st, ok := node.(*ast.ExprStmt)
		if !ok {
			return true
		}
		call, ok := st.X.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, isIdent := call.Fun.(*ast.Ident); !isIdent || id.Name != "panic" {
			return true
		}
		off := file.Offset(st.Pos()) - prefix
		line, col := lineCol(cell, base+off)
		ed.insert(off, fmt.Sprintf("__hm.PanicAt(%d, %d, %d); ", n, line, col))
		return true
	})
}

// faultKind is a set of the kinds of runtime errors a statement can have.
type faultKind uint8

const (
	faultIndex  faultKind = 1 << iota // an index out of range, or a store into a nil map
	faultSlice                        // slice bounds out of range
	faultDiv                          // integer division by zero
	faultDeref                        // a nil pointer dereferenced, also for a field
	faultAssert                       // a failed type assertion
)

// faultOf is the kind of the runtime error with message msg, or 0 for the
// errors markFaults does not mark.
func faultOf(msg string) faultKind {
	for _, k := range []struct {
		prefix string
		kind   faultKind
	}{
		{boundsIndex, faultIndex}, {"assignment to entry in nil map", faultIndex}, {boundsSlice, faultSlice},
		{"runtime error: integer divide by zero", faultDiv}, {nilDeref, faultDeref}, {"interface conversion: ", faultAssert},
	} {
		if strings.HasPrefix(msg, k.prefix) {
			return k.kind
		}
	}
	return 0
}

// faultStmt is a statement that can fail at run time, with how.
type faultStmt struct {
	kinds     faultKind
	line, col int
}

// faultSite is a marked region of a function declared in cell: one
// statement that can fail at run time, or a statement calling nothing that
// holds several (a loop), the error's kind then telling which one failed.
type faultSite struct {
	fn              string // the declared function or method it is in, as its frames name it
	cell, line, col int    // the marked statement
	stmts           []faultStmt
}

// place returns the position of the runtime error with message msg at
// site: the statement of its kind if there is exactly one, the marked
// statement (a loop) if there are several; ok is false if none can have
// the error.
func (f *faultSite) place(msg string) (line, col int, ok bool) {
	kind := faultOf(msg)
	n := 0
	for _, st := range f.stmts {
		if st.kinds&kind != 0 {
			line, col = st.line, st.col
			n++
		}
	}
	if n > 1 {
		line, col = f.line, f.col
	}
	return line, col, kind != 0 && n > 0
}

// markFaults makes the statements of the functions declared in root (a
// declaration's file, whose text starts prefix bytes into file, at offset
// base of the source of cell n) that can fail at run time record where they
// are in __hmSite, an interpreted global (see markFormat): yaegi places
// the frame of a runtime error at the start of its function. Only such statements are
// marked (one assignment each), and a loop or other statement that calls
// nothing and holds several is marked once, before it: nothing else can
// change the marker while it runs, so a tight loop costs no more than
// before, and the kind of the error tells its statement (when the loop
// holds one statement that can fail so).
func (s *Session) markFaults(ed *editor, file *token.File, root *ast.File, prefix, n int, cell string, base int) {
	for _, d := range root.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			s.markFaultList(ed, file, frameName(fd), fd.Body.List, prefix, n, cell, base)
		}
	}
}

// markTopFaults marks (see markFaults) the compound statements of a chunk
// of cell n (body, whose text starts at offset start of the cell): they run
// in a function literal (see rewriter.rewrite), whose frames are the cell's
// code, and whose statements yaegi places all at the compound statement's.
func (s *Session) markTopFaults(ed *editor, file *token.File, body *ast.BlockStmt, n int, cell string, start int) {
	var compound []ast.Stmt
	for _, st := range body.List {
		switch st.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.BlockStmt, *ast.LabeledStmt:
			compound = append(compound, st)
		}
	}
	s.markFaultList(ed, file, "func", compound, len(chunkPrefix), n, cell, start)
}

// markFaultList marks the statements of list, in function fn (as its
// frames name it), and those nested in them (see markFaults).
func (s *Session) markFaultList(ed *editor, file *token.File, fn string, list []ast.Stmt, prefix, n int, cell string, base int) {
	site := func(at ast.Stmt, stmts []ast.Stmt) {
		f := faultSite{fn: fn, cell: n}
		f.line, f.col = lineCol(cell, base+file.Offset(at.Pos())-prefix)
		for _, st := range stmts {
			line, col := lineCol(cell, base+file.Offset(st.Pos())-prefix)
			f.stmts = append(f.stmts, faultStmt{canFault(st, s.imports), line, col})
		}
		s.sites = append(s.sites, f)
		ed.insert(file.Offset(at.Pos())-prefix, fmt.Sprintf(markFormat, len(s.sites)))
	}
	var mark func(list []ast.Stmt)
	descend := func(st ast.Node, litsOnly bool) {
		ast.Inspect(st, func(node ast.Node) bool {
			switch x := node.(type) {
			case *ast.FuncLit:
				mark(x.Body.List)
				return false
			case *ast.BlockStmt:
				if node != st && !litsOnly {
					mark(x.List)
					return false
				}
			case *ast.CaseClause:
				if !litsOnly {
					mark(x.Body)
					return false
				}
			case *ast.CommClause:
				if !litsOnly {
					mark(x.Body)
					return false
				}
			}
			return true
		})
	}
	mark = func(list []ast.Stmt) {
		for _, st := range list {
			switch st.(type) {
			case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
				descend(st, false)
				continue
			}
			stmts := faultingStmts(st, s.imports)
			switch {
			case len(stmts) == 0:
				descend(st, false)
			case !callsCode(st):
				site(st, stmts)
				descend(st, true)
			default:
				if stmts[0] == st {
					site(st, stmts[:1])
				}
				descend(st, false)
			}
		}
	}
	mark(list)
}

// frameName is the name yaegi gives the frames of function declaration fd.
func frameName(fd *ast.FuncDecl) string {
	if fd.Recv == nil && fd.Name.Name == "main" {
		return mainName
	}
	return fd.Name.Name
}

// faultingStmts lists the statements in st (st included, function literals
// excluded) whose own expressions, outside nested blocks, can fail at run
// time; pkgs are the imported package names (whose selectors cannot).
func faultingStmts(st ast.Stmt, pkgs map[string]string) []ast.Stmt {
	var out []ast.Stmt
	ast.Inspect(st, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
			// Their statements are the sites, not they.
		case ast.Stmt:
			if canFault(x, pkgs) != 0 {
				out = append(out, x)
			}
		}
		return true
	})
	return out
}

// canFault returns the kinds of runtime errors the expressions of st
// itself (not of the blocks it holds) can have: index, slice, division,
// dereference (also of a field's pointer: a selector of a value, not of a
// package of pkgs), type assertion.
func canFault(st ast.Stmt, pkgs map[string]string) faultKind {
	var kinds faultKind
	if a, ok := st.(*ast.AssignStmt); ok && (a.Tok == token.QUO_ASSIGN || a.Tok == token.REM_ASSIGN) {
		kinds |= faultDiv
	}
	ast.Inspect(st, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.BlockStmt, *ast.FuncLit, *ast.CaseClause, *ast.CommClause:
			return node == st
		case *ast.IndexExpr:
			kinds |= faultIndex
		case *ast.SliceExpr:
			kinds |= faultSlice
		case *ast.StarExpr:
			kinds |= faultDeref
		case *ast.TypeAssertExpr:
			kinds |= faultAssert
		case *ast.BinaryExpr:
			if x.Op == token.QUO || x.Op == token.REM {
				kinds |= faultDiv
			}
		case *ast.SelectorExpr:
			if id, isIdent := x.X.(*ast.Ident); !isIdent || pkgs[id.Name] == "" {
				kinds |= faultDeref
			}
		}
		return true
	})
	return kinds
}

// callsCode reports whether st may run other code of the program while it
// runs: a call other than a builtin or a conversion. (A range over a
// function calls it too; the marks of another function are told apart when
// the error is placed.)
func callsCode(st ast.Stmt) bool {
	found := false
	ast.Inspect(st, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			id, isIdent := x.Fun.(*ast.Ident)
			found = found || !isConversion(x.Fun) && !(isIdent && types.Universe.Lookup(id.Name) != nil)
		}
		return !found
	})
	return found
}

// panicSite is where the last panic call of the running cell's program was.
type panicSite struct{ cell, line, col int }

// panicAt records the site of a panic call about to panic (see markPanics).
func (s *Session) panicAt(cell, line, col int) {
	s.curMu.Lock()
	s.lastPanic = &panicSite{cell, line, col}
	s.curMu.Unlock()
}

// stmtAt records that the top-level statement at offset off of the running
// cell starts (see markStatements). It runs on the program's goroutine.
func (s *Session) stmtAt(off int) {
	s.at.Store(int64(off) + 1)
	atomic.StoreInt64(s.siteVar, 0) // the marks of earlier statements are not this one's
}

// framePos matches a frame line of panicError: "    at NAME (cell:L:C)".
var framePos = regexp.MustCompile(`^    at (\S+) \(cell:(\d+):(\d+)\)$`)

// placeFrames rewrites the frames of a panic's traceback in cell terms: the
// cell's own frame at the top-level statement that ran (src is the cell's
// source), functions with the cell that declared them.
//
// For the panic of a goroutine started by cell n (n > 0; src is then
// unknown), the frames of the cell's code are that cell's, at the
// positions yaegi gives.
func (s *Session) placeFrames(e *Error, src string, goroutineOf int) *Error {
	cur := s.cellNumber()
	at := int(s.at.Load()) - 1
	s.curMu.Lock()
	site := s.lastPanic
	s.curMu.Unlock()
	var fault *faultSite
	if k := int(atomic.LoadInt64(s.siteVar)); k > 0 && k <= len(s.sites) {
		fault = &s.sites[k-1]
	}
	if goroutineOf > 0 {
		cur, at, site, fault = goroutineOf, -1, nil, nil
	}
	innermost := true
	for i, l := range e.Traceback {
		m := framePos.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		name := m[1]
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		if innermost && site != nil && e.Name == "Panic" {
			// The panic call recorded where it was.
			e.Traceback[i] = fmt.Sprintf("    at %s (cell %d, line %d, column %d)", userFuncName(name), site.cell, site.line, site.col)
			if name == "cell" || name == "func" {
				e.Traceback[i] = fmt.Sprintf("    at cell %d (line %d, column %d)", site.cell, site.line, site.col)
			}
			innermost = false
			continue
		}
		outer, _, _ := strings.Cut(name, ".")
		if innermost && fault != nil && fault.fn == outer {
			// A runtime error in a function of a cell, at its last marked
			// statement (see markFaults).
			if fl, fc, ok := fault.place(e.Value); ok {
				e.Traceback[i] = fmt.Sprintf("    at %s (cell %d, line %d, column %d)", userFuncName(name), fault.cell, fl, fc)
				if name == "func" { // a compound statement of the cell (see markTopFaults)
					e.Traceback[i] = fmt.Sprintf("    at cell %d (line %d, column %d)", fault.cell, fl, fc)
				}
				innermost = false
				continue
			}
		}
		innermost = false
		if goroutineOf > 0 && (name == "func" || strings.HasPrefix(name, "func.")) {
			e.Traceback[i] = fmt.Sprintf("    at goroutine (cell %d, line %d, column %d)", cur, line, col)
			continue
		}
		if name == "cell" || name == "func" { // the cell's code, or a compound statement's literal (see rewrite)
			if at >= 0 && at <= len(src) {
				line, col = lineCol(src, at)
			}
			e.Traceback[i] = fmt.Sprintf("    at cell %d (line %d, column %d)", cur, line, col)
			continue
		}
		name = userFuncName(name)
		if n, ok := s.declCell[outer]; ok {
			e.Traceback[i] = fmt.Sprintf("    at %s (cell %d, line %d, column %d)", name, n, line, col)
		} else {
			e.Traceback[i] = fmt.Sprintf("    at %s (cell %d, line %d, column %d)", name, cur, line, col)
		}
	}
	return e
}

// goMessages are Go's own words for the runtime errors yaegi reports in
// reflect's (it indexes, slices and stores through pointers with reflect).
// The index and length are not known any more (see explainBounds).
var goMessages = map[string]string{
	"reflect: slice index out of range":                     boundsIndex,
	"reflect: array index out of range":                     boundsIndex,
	"reflect: string index out of range":                    boundsIndex,
	"reflect.Value.Slice: slice index out of bounds":        boundsSlice,
	"reflect.Value.Slice: string slice index out of bounds": boundsSlice,
	"reflect.Value.Slice3: slice index out of bounds":       boundsSlice,
	"reflect: call of reflect.Value.Set on zero Value":      nilDeref, // storing through a nil pointer
	"reflect: call of reflect.Value.Field on zero Value":    nilDeref, // a field of a nil pointer
}

// Go's messages without the values, which explainBounds adds where it can.
const (
	boundsIndex = "runtime error: index out of range"
	boundsSlice = "runtime error: slice bounds out of range"
	nilDeref    = "runtime error: invalid memory address or nil pointer dereference"
)

// goMessage returns Go's message for a runtime error yaegi words as reflect.
func goMessage(msg string) string {
	if m, ok := goMessages[msg]; ok {
		return m
	}
	return msg
}

// userFuncName is a frame's function name as the cell wrote it.
func userFuncName(name string) string {
	if outer, rest, _ := strings.Cut(name, "."); outer == mainName {
		return strings.TrimSuffix("main."+rest, ".")
	}
	return name
}

// mark stores marker k in __hmSite atomically; race-detector builds mark
// statements with it (see markFormat).
func (s *Session) mark(k int) { atomic.StoreInt64(s.siteVar, int64(k)) }
