package lang

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"strconv"
	"strings"
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

// faultSite is a statement of a function declared in a cell that can fail
// at run time: an index, slice, division, dereference or type assertion.
type faultSite struct {
	fn              string // the declared function or method it is in
	cell, line, col int
}

// markFaults makes the statements of the functions declared in root (a
// declaration's file, whose text starts prefix bytes into file, at offset
// base of the source of cell n) that can fail at run time record where they
// are in __hmSite, an interpreted global: yaegi places the frame of a
// runtime error at the start of its function. Only such statements are
// marked (one assignment each), and a loop or other statement that calls
// nothing and holds a single one is marked once, before it, for that one:
// nothing else can change the marker while it runs, so a tight loop over a
// slice costs no more than before.
func (s *Session) markFaults(ed *editor, file *token.File, root *ast.File, prefix, n int, cell string, base int) {
	for _, d := range root.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		var mark func(list []ast.Stmt)
		descend := func(st ast.Node) {
			ast.Inspect(st, func(node ast.Node) bool {
				switch x := node.(type) {
				case *ast.BlockStmt:
					if node != st {
						mark(x.List)
						return false
					}
				case *ast.CaseClause:
					mark(x.Body)
					return false
				case *ast.CommClause:
					mark(x.Body)
					return false
				}
				return true
			})
		}
		mark = func(list []ast.Stmt) {
			for _, st := range list {
				switch st.(type) {
				case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
					descend(st)
					continue
				}
				sites := faultingStmts(st, s.imports)
				if len(sites) == 0 {
					descend(st)
					continue
				}
				at := sites[0]
				if len(sites) > 1 || callsCode(st) {
					descend(st)
					if at != st {
						continue
					}
				} else {
					ast.Inspect(st, func(node ast.Node) bool {
						if lit, ok := node.(*ast.FuncLit); ok {
							mark(lit.Body.List)
							return false
						}
						return true
					})
				}
				off := file.Offset(st.Pos()) - prefix
				line, col := lineCol(cell, base+file.Offset(at.Pos())-prefix)
				s.sites = append(s.sites, faultSite{frameName(fd), n, line, col})
				ed.insert(off, fmt.Sprintf("__hmSite = %d; ", len(s.sites)))
			}
		}
		mark(fd.Body.List)
	}
}

// marked reports whether msg is an error of the operations markFaults
// marks: for others the last marked statement is not where they happened.
func marked(msg string) bool {
	for _, m := range []string{boundsIndex, boundsSlice, nilDeref, "runtime error: integer divide by zero", "assignment to entry in nil map", "interface conversion: "} {
		if strings.HasPrefix(msg, m) {
			return true
		}
	}
	return false
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
		case ast.Stmt:
			if canFault(x, pkgs) {
				out = append(out, x)
			}
		}
		return true
	})
	return out
}

// canFault reports whether the expressions of st itself (not of the blocks
// it holds) can fail at run time: index, slice, division, dereference (also
// of a field's pointer), type assertion.
func canFault(st ast.Stmt, pkgs map[string]string) bool {
	if a, ok := st.(*ast.AssignStmt); ok && (a.Tok == token.QUO_ASSIGN || a.Tok == token.REM_ASSIGN) {
		return true
	}
	found := false
	ast.Inspect(st, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.BlockStmt, *ast.FuncLit, *ast.CaseClause, *ast.CommClause:
			return node == st
		case *ast.IndexExpr, *ast.SliceExpr, *ast.StarExpr, *ast.TypeAssertExpr:
			found = true
		case *ast.BinaryExpr:
			found = found || x.Op == token.QUO || x.Op == token.REM
		case *ast.SelectorExpr:
			id, isIdent := x.X.(*ast.Ident)
			found = !isIdent || pkgs[id.Name] == ""
		}
		return !found
	})
	return found
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
// cell starts (see markStatements).
func (s *Session) stmtAt(off int) { s.at.Store(int64(off) + 1) }

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
	if k := *s.siteVar; k > 0 && k <= len(s.sites) {
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
		if innermost && fault != nil && marked(e.Value) && fault.fn == outer {
			// A runtime error in a function of a cell, at its last marked
			// statement (see markFaults).
			e.Traceback[i] = fmt.Sprintf("    at %s (cell %d, line %d, column %d)", userFuncName(name), fault.cell, fault.line, fault.col)
			innermost = false
			continue
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
