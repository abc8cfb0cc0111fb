package lang

import (
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Go's words for an index or slice out of range name the values: "index
// out of range [5] with length 3". yaegi indexes through reflect, whose
// panics do not, so the values are recovered after the panic: when it
// happened in a simple top-level statement of the cell (an assignment, an
// expression, a declaration; not a loop, where the names may be the loop's
// own), its index and slice expressions whose operands are free of side
// effects (names, selectors, constants, arithmetic, len and cap of those)
// are evaluated again, and the first one out of range gives the message.
// Anything else keeps the message without the values.

// cellFrame matches the innermost frame when it is the cell's own code.
var cellFrame = regexp.MustCompile(`^    at cell \d+ \(line (\d+), column (\d+)\)$`)

// explainBounds puts the index and length into e, the error of a runtime
// index or slice panic of cell source src, where they can be recovered.
func (s *Session) explainBounds(e *Error, src string) *Error {
	if e.Name != "RuntimeError" || (e.Value != boundsIndex && e.Value != boundsSlice) {
		return e
	}
	stmt := s.failedStmt(e, src)
	if stmt == nil {
		return e
	}
	msg := ""
	ast.Inspect(stmt, func(node ast.Node) bool {
		if msg != "" {
			return false
		}
		switch x := node.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IndexExpr:
			if e.Value == boundsIndex && pureExpr(x.X) && pureExpr(x.Index) {
				msg = s.indexMessage(x)
			}
		case *ast.SliceExpr:
			if e.Value == boundsSlice && !x.Slice3 && pureExpr(x.X) && (x.Low == nil || pureExpr(x.Low)) && (x.High == nil || pureExpr(x.High)) {
				msg = s.sliceMessage(x)
			}
		}
		return true
	})
	if msg == "" {
		return e
	}
	old := e.Value
	e.Value = "runtime error: " + msg
	for i, l := range e.Traceback {
		if strings.HasSuffix(l, ": "+old) {
			e.Traceback[i] = strings.TrimSuffix(l, old) + e.Value
		}
	}
	return e
}

// failedStmt is the simple top-level statement of src where error e
// happened, if its innermost frame is the cell's own code.
func (s *Session) failedStmt(e *Error, src string) ast.Stmt {
	var m []string
	for _, l := range e.Traceback {
		if strings.HasPrefix(l, "    at ") {
			m = cellFrame.FindStringSubmatch(l)
			break
		}
	}
	if m == nil {
		return nil
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	off := offsetOf(src, line, col)
	items, err := splitCell(src)
	if off < 0 || err != nil {
		return nil
	}
	for _, it := range items {
		if it.kind != itemStmt || off < it.start || off >= it.end {
			continue
		}
		_, body, err := parseChunk(src[it.start:it.end])
		if err != nil || len(body.List) != 1 {
			return nil
		}
		switch st := body.List[0].(type) {
		case *ast.AssignStmt, *ast.ExprStmt, *ast.IncDecStmt, *ast.DeclStmt, *ast.SendStmt:
			return st
		}
		return nil
	}
	return nil
}

// offsetOf is the byte offset of line:col (1-based) in src, or -1.
func offsetOf(src string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	if off+col-1 > len(src) {
		return -1
	}
	return off + col - 1
}

// pureExpr reports whether evaluating e again cannot change anything: no
// calls but len and cap, no receives, no function literals.
func pureExpr(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident, *ast.BasicLit:
		return true
	case *ast.SelectorExpr:
		return pureExpr(x.X)
	case *ast.ParenExpr:
		return pureExpr(x.X)
	case *ast.StarExpr:
		return pureExpr(x.X)
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && pureExpr(x.X)
	case *ast.BinaryExpr:
		return pureExpr(x.X) && pureExpr(x.Y)
	case *ast.IndexExpr:
		return pureExpr(x.X) && pureExpr(x.Index)
	case *ast.CallExpr:
		id, ok := x.Fun.(*ast.Ident)
		return ok && (id.Name == "len" || id.Name == "cap") && len(x.Args) == 1 && pureExpr(x.Args[0])
	}
	return false
}

// evalPure evaluates a pure expression of the cell's globals.
func (s *Session) evalPure(e ast.Expr) (v reflect.Value, ok bool) {
	var sb strings.Builder
	if err := printer.Fprint(&sb, token.NewFileSet(), e); err != nil {
		return reflect.Value{}, false
	}
	defer func() {
		if r := recover(); r != nil {
			v, ok = reflect.Value{}, false
		}
		s.yerr.takeFrames() // a failed evaluation's frames are no part of the cell's error
	}()
	v, err := s.in.Eval(inCell(sb.String()))
	if err != nil || !v.IsValid() {
		return reflect.Value{}, false
	}
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	return v, true
}

// sequence evaluates the operand of an index or slice expression: its
// length and capacity, and whether it is a slice (a string or array is
// bounded by its length in Go's messages).
func (s *Session) sequence(e ast.Expr) (length, capacity int, isSlice, ok bool) {
	v, ok := s.evalPure(e)
	if !ok {
		return 0, 0, false, false
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Array {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice:
		return v.Len(), v.Cap(), true, true
	case reflect.Array, reflect.String:
		return v.Len(), v.Len(), false, true
	}
	return 0, 0, false, false
}

// intValue evaluates a pure integer expression.
func (s *Session) intValue(e ast.Expr) (int64, bool) {
	v, ok := s.evalPure(e)
	if !ok || !v.CanInt() && !v.CanUint() {
		return 0, false
	}
	if v.CanUint() {
		return int64(v.Uint()), true
	}
	return v.Int(), true
}

// indexMessage is Go's message for x out of range, or "" if it is not (or
// its values cannot be had).
func (s *Session) indexMessage(x *ast.IndexExpr) string {
	n, _, _, ok := s.sequence(x.X)
	if !ok {
		return ""
	}
	i, ok := s.intValue(x.Index)
	switch {
	case !ok:
		return ""
	case i < 0:
		return fmt.Sprintf("index out of range [%d]", i)
	case i >= int64(n):
		return fmt.Sprintf("index out of range [%d] with length %d", i, n)
	}
	return ""
}

// sliceMessage is Go's message for the bounds of x out of range, or "".
func (s *Session) sliceMessage(x *ast.SliceExpr) string {
	n, c, isSlice, ok := s.sequence(x.X)
	if !ok {
		return ""
	}
	lo, hi := int64(0), int64(n)
	if x.Low != nil {
		if lo, ok = s.intValue(x.Low); !ok {
			return ""
		}
	}
	if x.High != nil {
		if hi, ok = s.intValue(x.High); !ok {
			return ""
		}
	}
	limit, what := int64(n), "length"
	if isSlice {
		limit, what = int64(c), "capacity"
	}
	switch {
	case hi < 0:
		return fmt.Sprintf("slice bounds out of range [:%d]", hi)
	case hi > limit:
		return fmt.Sprintf("slice bounds out of range [:%d] with %s %d", hi, what, limit)
	case lo < 0:
		return fmt.Sprintf("slice bounds out of range [%d:]", lo)
	case lo > hi:
		return fmt.Sprintf("slice bounds out of range [%d:%d]", lo, hi)
	}
	return ""
}
