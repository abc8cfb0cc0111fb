package lang

import (
	"fmt"
	"strings"
	"testing"
)

// runtimeErrorCase is a cell failing at run time: its error's exact
// message, and the exact frames its traceback must hold (%d is the number
// of the cell run, %[2]d that of the cell declaring the functions).
type runtimeErrorCase struct {
	cell, msg string
	frames    []string
}

// checkRuntimeErrors runs each case in s and compares message and frames.
func checkRuntimeErrors(t *testing.T, s *Session, declared int, cases []runtimeErrorCase) {
	t.Helper()
	for _, c := range cases {
		_, res := run(t, s, c.cell)
		if res.Err == nil {
			t.Errorf("%q ran without error", c.cell)
			continue
		}
		tb := strings.Join(res.Err.Traceback, "\n")
		if res.Err.Name != "RuntimeError" || res.Err.Value != c.msg {
			t.Errorf("%q: %s %q, want RuntimeError %q", c.cell, res.Err.Name, res.Err.Value, c.msg)
		}
		if !strings.HasPrefix(tb, "panic: "+c.msg+"\n") {
			t.Errorf("%q: traceback\n%s\ndoes not start with the message %q", c.cell, tb, c.msg)
		}
		for _, f := range c.frames {
			if want := "    at " + fmt.Sprintf(f, s.cellNumber(), declared); !strings.Contains(tb+"\n", want+"\n") {
				t.Errorf("%q: traceback\n%s\nwant the frame %q", c.cell, tb, want)
			}
		}
	}
}

// TestRuntimeErrorValues checks that index and slice errors of a cell's
// statements carry Go's message with the values, at the statement's line
// and column, and that they keep the message without the values where
// those cannot be had without running code twice.
func TestRuntimeErrorValues(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "xs := []int{1, 2, 3}\nk := 5\nvar arr [4]int\nstr := \"abc\"")
	checkRuntimeErrors(t, s, 0, []runtimeErrorCase{
		{"k := 5\nxs[k] = 1", "runtime error: index out of range [5] with length 3", []string{"cell %[1]d (line 2, column 1)"}},
		{"xs[k*2] = 1", "runtime error: index out of range [10] with length 3", []string{"cell %[1]d (line 1, column 1)"}},
		{"i := 1\nfmt.Println(0)\n  xs[i+2] = 0", "runtime error: index out of range [3] with length 3", []string{"cell %[1]d (line 3, column 3)"}},
		{"j := -1\ny := xs[j]\n_ = y", "runtime error: index out of range [-1]", []string{"cell %[1]d (line 2, column 1)"}},
		{"i := 4\narr[i] = 1", "runtime error: index out of range [4] with length 4", []string{"cell %[1]d (line 2, column 1)"}},
		{"fmt.Println(str[k])", "runtime error: index out of range [5] with length 3", []string{"cell %[1]d (line 1, column 1)"}},
		{"hi := 7\nys := xs[1:hi]\n_ = ys", "runtime error: slice bounds out of range [:7] with capacity 3", []string{"cell %[1]d (line 2, column 1)"}},
		{"lo := 2\nfmt.Println(xs[lo:1])", "runtime error: slice bounds out of range [2:1]", []string{"cell %[1]d (line 2, column 1)"}},
		{"fmt.Println(str[:k])", "runtime error: slice bounds out of range [:5] with length 3", []string{"cell %[1]d (line 1, column 1)"}},
		// A loop's variables are its own: not evaluated again.
		{"for i := 0; i <= len(xs); i++ {\n\txs[i] = 0\n}", "runtime error: index out of range", []string{"cell %[1]d (line 2, column 2)", "cell %[1]d (line 1, column 1)"}},
		{"fmt.Println(0)\nfor _, x := range []int{1, 2, 3} {\n\tfmt.Print(x)\n\tfmt.Print(10 / (x - 2))\n}", "runtime error: integer divide by zero", []string{"cell %[1]d (line 4, column 2)", "cell %[1]d (line 2, column 1)"}},
		// A call is not made twice.
		{"calls := 0\nnext := func() int { calls++; return calls + 4 }\nxs[next()] = 1", "runtime error: index out of range", []string{"cell %[1]d (line 3, column 1)"}},
	})
	if rec, _ := mustRun(t, s, "fmt.Println(calls)"); rec.stdout.String() != "1\n" {
		t.Errorf("the failing call ran %q times, want once", rec.stdout.String())
	}
}

// TestRuntimeErrorsInFunctions checks that runtime errors other than panic
// calls in functions declared in an earlier cell are placed at the
// statement that failed (at its loop when two statements of a loop calling
// nothing can fail in the same way), in the declaring cell's lines, with
// the caller's frame at the cell's statement.
func TestRuntimeErrorsInFunctions(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `func div(a, b int) int {
	fmt.Print("")
	return a / b
}
func set(xs []int, k int) {
	n := len(xs)
	_ = n
	xs[k] = n
}
func put(m map[string]int) {
	fmt.Print("")
	m["a"] = 1
}
func sum(xs []int, n int) int {
	s := 0
	for i := 0; i <= n; i++ {
		s += xs[i]
	}
	return s
}
func two(xs, ys []int) int {
	s := 0
	for i := range xs {
		s += xs[i]
		s += ys[i]
	}
	return s
}
func deref(p *int) int {
	fmt.Print("")
	return *p
}
func apply(xs []int) {
	f := func(i int) {
		fmt.Print("")
		xs[i] = 0
	}
	fmt.Print("")
	f(9)
}
type P struct{ X int }
func field(p *P) int {
	fmt.Print("")
	return p.X
}
func store(p *P) {
	fmt.Print("")
	p.X = 1
}
func assert(v any) int {
	fmt.Print("")
	return v.(int)
}
func mix(xs []int, d int) int {
	s := 0
	for i := range xs {
		s += xs[i]
		s += 100 / d
	}
	return s
}`)
	declared := s.cellNumber()
	checkRuntimeErrors(t, s, declared, []runtimeErrorCase{
		{"div(1, 0)", "runtime error: integer divide by zero", []string{"div (cell %[2]d, line 3, column 2)", "cell %[1]d (line 1, column 1)"}},
		{"fmt.Println(1)\nset([]int{1}, 3)", "runtime error: index out of range", []string{"set (cell %[2]d, line 8, column 2)", "cell %[1]d (line 2, column 1)"}},
		{"put(nil)", "assignment to entry in nil map", []string{"put (cell %[2]d, line 12, column 2)"}},
		{"sum([]int{1, 2}, 2)", "runtime error: index out of range", []string{"sum (cell %[2]d, line 17, column 3)"}},
		// Two statements of a loop calling nothing can fail so: the loop.
		{"two([]int{1, 2}, []int{1})", "runtime error: index out of range", []string{"two (cell %[2]d, line 23, column 2)"}},
		// Of those, one can divide by zero.
		{"mix([]int{1}, 0)", "runtime error: integer divide by zero", []string{"mix (cell %[2]d, line 58, column 3)"}},
		{"deref(nil)", "runtime error: invalid memory address or nil pointer dereference", []string{"deref (cell %[2]d, line 31, column 2)"}},
		{"apply([]int{1})", "runtime error: index out of range", []string{"apply.func (cell %[2]d, line 36, column 3)"}},
		{"field(nil)", "runtime error: invalid memory address or nil pointer dereference", []string{"field (cell %[2]d, line 44, column 2)"}},
		{"store(nil)", "runtime error: invalid memory address or nil pointer dereference", []string{"store (cell %[2]d, line 48, column 2)"}},
		{"assert(\"a\")", "interface conversion: interface {} is string, not int", []string{"assert (cell %[2]d, line 52, column 2)"}},
	})
}
