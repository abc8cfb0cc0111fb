package lang

import (
	"fmt"
	"go/ast"
	"go/token"
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
	if goroutineOf > 0 {
		cur, at, site = goroutineOf, -1, nil
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
		outer, _, _ := strings.Cut(name, ".")
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
// reflect's (it indexes slices and arrays through reflect). The index and
// length are not known any more.
var goMessages = map[string]string{
	"reflect: slice index out of range":              "runtime error: index out of range",
	"reflect: array index out of range":              "runtime error: index out of range",
	"reflect: string index out of range":             "runtime error: index out of range",
	"reflect.Value.Slice: slice index out of bounds": "runtime error: slice bounds out of range",
}

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
