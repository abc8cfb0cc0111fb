package lang

import (
	"strconv"
	"strings"
	"testing"
)

// TestWholeProgram runs a program pasted as one cell: main runs once, after
// the package-level var declared below it and the methods exist, never
// again when later cells compile; main() in a later cell runs it once more.
func TestWholeProgram(t *testing.T) {
	s := newSession(t)
	rec, _ := mustRun(t, s, `// Program enums.
package main

import "fmt"

type State int

const (
	Idle State = iota
	Busy
)

func main() {
	fmt.Println("main:", Idle, Busy, len(names))
}

var names = map[State]string{Idle: "idle", Busy: "busy"}

func (s State) String() string { return names[s] }`)
	if got, want := rec.stdout.String(), "main: idle busy 2\n"; got != want {
		t.Errorf("the program printed %q, want %q (main once, after the var and the method)", got, want)
	}
	for _, cell := range []string{"x := 1 + 1", "func helper() int { return 3 }", "type U struct{}"} {
		if rec, _ := mustRun(t, s, cell); rec.stdout.Len() != 0 {
			t.Errorf("compiling %q printed %q: main ran again", cell, rec.stdout.String())
		}
	}
	if rec, _ := mustRun(t, s, "main()"); rec.stdout.String() != "main: idle busy 2\n" {
		t.Errorf("main() printed %q, want main's output once", rec.stdout.String())
	}
	if rec, _ := mustRun(t, s, "%who"); !strings.Contains(rec.stdout.String(), "main") || strings.Contains(rec.stdout.String(), mainName) {
		t.Errorf("%%who lists %q, want main under its own name", rec.stdout.String())
	}
}

// TestFailedDeclarationIsUndefined checks that using a function, type or
// constant whose declaration failed is an error naming the failure, and
// that declaring it again successfully makes it usable.
func TestFailedDeclarationIsUndefined(t *testing.T) {
	s := newSession(t)
	rec, res := run(t, s, "func f() int {\n\treturn undefinedThing\n}")
	if res.Err == nil {
		t.Fatalf("the failing declaration succeeded (stdout %q)", rec.stdout.String())
	}
	failedCell := s.cellNumber()
	for _, cell := range []string{"f()", "y := f() + 1", "func g() int { return f() }"} {
		_, res := run(t, s, cell)
		if res.Err == nil {
			t.Errorf("%q ran silently after f's declaration failed", cell)
			continue
		}
		for _, want := range []string{"undefined: f", "cell " + strconv.Itoa(failedCell) + " failed", "undefinedThing"} {
			if !strings.Contains(res.Err.Value, want) {
				t.Errorf("%q: error %q does not contain %q", cell, res.Err.Value, want)
			}
		}
	}
	// A cell declaring its own f is not concerned, and redeclaring f fixes it.
	mustRun(t, s, "func f() int { return 4 }")
	if _, res := mustRun(t, s, "f() + 1"); plain(res) != "5" {
		t.Errorf("after redeclaring f, f() + 1 = %q, want 5", plain(res))
	}
}

// TestAutoImport checks that standard-library packages are imported when a
// cell uses them without importing them, and not when the name is a
// variable of the session.
func TestAutoImport(t *testing.T) {
	s := newSession(t)
	rec, _ := mustRun(t, s, `fmt.Println("hello", strings.ToUpper("go"))`)
	if rec.stdout.String() != "hello GO\n" {
		t.Errorf("stdout %q, want %q", rec.stdout.String(), "hello GO\n")
	}
	if _, res := mustRun(t, s, "math.Sqrt(16)"); plain(res) != "4" {
		t.Errorf("math.Sqrt(16) = %q, want 4", plain(res))
	}
	mustRun(t, s, "func sorted(xs []int) []int { sort.Ints(xs); return xs }")
	if _, res := mustRun(t, s, "sorted([]int{3, 1, 2})"); plain(res) != "[1 2 3]" {
		t.Errorf("sort in a function: %q, want [1 2 3]", plain(res))
	}
	// A variable named like a package is not replaced by an import.
	mustRun(t, s, "type box struct{ N int }\nbytes := box{N: 7}")
	if _, res := mustRun(t, s, "bytes.N"); plain(res) != "7" {
		t.Errorf("bytes.N with a variable bytes = %q, want 7", plain(res))
	}
	// A package used only inside a three-clause loop (the header's
	// semicolons once cut the loop, hiding the use from the import scan).
	rec, _ = mustRun(t, s, "for i := 1; i < 3; i++ {\n\tfmt.Print(strconv.Itoa(i))\n}")
	if rec.stdout.String() != "12" {
		t.Errorf("strconv in a for loop printed %q, want 12", rec.stdout.String())
	}
	if _, res := run(t, s, "nosuchpkg.F()"); res.Err == nil || !strings.Contains(res.Err.Value, "undefined: nosuchpkg") {
		t.Errorf("an unknown package: error %+v, want undefined: nosuchpkg", res.Err)
	}
}

// TestRangeVariableAssigned checks that assigning a range variable in a
// top-level loop of a cell does not move the iteration (yaegi iterates on
// the variable itself; the rewrite gives the body its own copy).
func TestRangeVariableAssigned(t *testing.T) {
	s := newSession(t)
	rec, _ := mustRun(t, s, "xs := []int{10, 20, 30, 40}\nfor i, x := range xs[1:] {\n\ti++\n\tfmt.Print(i, x, \" \")\n}\nfor k := range 3 {\n\tk *= 2\n\tfmt.Print(k, \" \")\n}")
	if want := "1 20 2 30 3 40 0 2 4 "; rec.stdout.String() != want {
		t.Errorf("printed %q, want %q", rec.stdout.String(), want)
	}
}

// TestTimeitKeepsNamesLocal checks that %timeit does not define the names
// its code declares.
func TestTimeitKeepsNamesLocal(t *testing.T) {
	s := newSession(t)
	rec, _ := mustRun(t, s, "%timeit -n 3 -r 2 leaked := 3\n_ = 0")
	if !strings.Contains(rec.stdout.String(), "per loop") {
		t.Errorf("%%timeit printed %q, want a timing", rec.stdout.String())
	}
	if _, res := run(t, s, "leaked"); res.Err == nil || !strings.Contains(res.Err.Value, "undefined: leaked") {
		t.Errorf("after %%timeit leaked := 3: error %+v, want undefined: leaked", res.Err)
	}
}

// TestRuntimeErrorPositions checks that runtime errors carry Go's message
// and the line of the cell where they happened, also through a function
// declared in an earlier cell, and that the error of a cell's last
// expression points at its column.
func TestRuntimeErrorPositions(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "func h(i int) int {\n\tpanic(\"boom\")\n}")
	hCell := s.cellNumber()
	for _, c := range []struct{ cell, msg, at string }{
		{"fmt.Println(1)\nfmt.Println(2)\nh(1)", "boom", "line 3, column 1"},
		{"xs := []int{1, 2, 3}\nk := 5\n_ = k\nxs[k] = 1", "index out of range", "line 4, column 1"},
		{"a := 1\nb := 0\n\n\n\nfmt.Println(a / b)", "integer divide by zero", "line 6, column 1"},
		{"var m map[string]int\nm[\"a\"] = 1", "assignment to entry in nil map", "line 2, column 1"},
	} {
		_, res := run(t, s, c.cell)
		if res.Err == nil {
			t.Errorf("%q ran without error", c.cell)
			continue
		}
		tb := strings.Join(res.Err.Traceback, "\n")
		if !strings.Contains(res.Err.Value, c.msg) {
			t.Errorf("%q: error %q, want Go's %q", c.cell, res.Err.Value, c.msg)
		}
		if want := "at cell " + strconv.Itoa(s.cellNumber()) + " (" + c.at + ")"; !strings.Contains(tb, want) {
			t.Errorf("%q: traceback\n%s\nwant %q", c.cell, tb, want)
		}
	}
	_, res := run(t, s, "h(2)")
	if want := "at h (cell " + strconv.Itoa(hCell) + ", line 2, column 2)"; res.Err == nil || !strings.Contains(strings.Join(res.Err.Traceback, "\n"), want) {
		t.Errorf("panic in a function of an earlier cell: %+v, want a frame %q", res.Err, want)
	}
	// The last expression is wrapped to capture its value: its errors keep
	// the cell's columns.
	_, res = run(t, s, "x := 1\nx + \"a\"")
	if res.Err == nil || !strings.HasPrefix(res.Err.Value, "cell:2:1") && !strings.HasPrefix(res.Err.Value, "cell:2:5") {
		t.Errorf("error of the last expression: %+v, want it at line 2, column 1 or 5", res.Err)
	}
}

// TestRedefinedTypeNames checks that errors name a redefined type as the
// cell does, with the cell's source line and column.
func TestRedefinedTypeNames(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "type T struct{ A int }")
	mustRun(t, s, "type T struct{ B int }\nt := T{}")
	_, res := run(t, s, "var u T = 3")
	if res.Err == nil {
		t.Fatal("var u T = 3 compiled")
	}
	tb := strings.Join(res.Err.Traceback, "\n")
	if strings.Contains(res.Err.Value+tb, "T__") || !strings.Contains(res.Err.Value, "main.T") {
		t.Errorf("error %q\n%s\nnames the internal type, want main.T", res.Err.Value, tb)
	}
	if got := s.userName(s.renames["T"]); got != "T" {
		t.Errorf("userName(%q) = %q, want T", s.renames["T"], got)
	}
	if !strings.HasPrefix(res.Err.Value, "cell:1:11") || !strings.Contains(tb, "1 | var u T = 3\n      |           ^") {
		t.Errorf("error %q\n%s\nwant it at the cell's column 11 under the cell's own line", res.Err.Value, tb)
	}
}

// TestPanicCallPositions checks that a panic call is placed at its own
// line, in a loop of the cell and in a function with several panics.
func TestPanicCallPositions(t *testing.T) {
	s := newSession(t)
	_, res := run(t, s, "for i := 0; i < 3; i++ {\n\tif i == 2 {\n\t\tpanic(\"in loop\")\n\t}\n}")
	if want := "line 3, column 3"; res.Err == nil || !strings.Contains(strings.Join(res.Err.Traceback, "\n"), want) {
		t.Errorf("panic in a loop: %+v, want %q", res.Err, want)
	}
	mustRun(t, s, "func check(n int) {\n\tif n < 0 {\n\t\tpanic(\"negative\")\n\t}\n\tif n > 9 {\n\t\tpanic(\"too big\")\n\t}\n}")
	declared := s.cellNumber()
	_, res = run(t, s, "check(1)\ncheck(12)")
	if want := "at check (cell " + strconv.Itoa(declared) + ", line 6, column 3)"; res.Err == nil || !strings.Contains(strings.Join(res.Err.Traceback, "\n"), want) {
		t.Errorf("second panic of a function: %+v, want %q", res.Err, want)
	}
}
