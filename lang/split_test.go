package lang

import (
	"strings"
	"testing"
)

func TestSplitCell(t *testing.T) {
	src := `import "fmt"
x := 1
func f() int { return x }
func (t T) M() {}
type T struct{ A int }
const c = 2
var v = 3
func() { fmt.Println("lit") }()
fmt.Println(f(),
	c)`
	items, err := splitCell(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind itemKind
		text string
	}{
		{itemImport, `import "fmt"`},
		{itemStmt, "x := 1"},
		{itemDecl, "func f() int { return x }"},
		{itemDecl, "func (t T) M() {}"},
		{itemDecl, "type T struct{ A int }"},
		{itemDecl, "const c = 2"},
		{itemStmt, "var v = 3"},
		{itemStmt, `func() { fmt.Println("lit") }()`},
		{itemStmt, "fmt.Println(f(),\n\tc)"},
	}
	if len(items) != len(want) {
		t.Fatalf("got %d items, want %d: %+v", len(items), len(want), items)
	}
	for i, w := range want {
		got := src[items[i].start:items[i].end]
		if items[i].kind != w.kind || got != w.text {
			t.Errorf("item %d = (%v, %q), want (%v, %q)", i, items[i].kind, got, w.kind, w.text)
		}
	}
	if items[8].line != 9 || items[8].col != 1 {
		t.Errorf("last item at %d:%d, want 9:1", items[8].line, items[8].col)
	}
}

// TestSplitCellControlHeaders checks that the semicolons of a for, if or
// switch header do not cut the statement, also with a function literal in
// the header and an else-if chain, and that the statement after it is an
// item of its own.
func TestSplitCellControlHeaders(t *testing.T) {
	stmts := []string{
		"for i := 1; i < len(x); i++ {\n\ta, b := x[i-1], x[i]\n\tfmt.Println(a, b)\n}",
		"if v := f(); v > 0 {\n\tg()\n} else if w := h(); w {\n}",
		"switch k := key(); k {\ncase 1:\n}",
		"if ok := func() bool { return true }; ok() {\n\tg()\n}",
		"for ; ; {\n\tbreak\n}",
		"L: for i := 0; i < 2; i++ {\n\tcontinue L\n}",
	}
	for _, stmt := range stmts {
		src := stmt + "\ny := 2"
		items, err := splitCell(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if len(items) != 2 || src[items[0].start:items[0].end] != stmt || src[items[1].start:items[1].end] != "y := 2" {
			var got []string
			for _, it := range items {
				got = append(got, src[it.start:it.end])
			}
			t.Errorf("%q split into %q, want the statement and \"y := 2\"", src, got)
		}
	}
}

func TestSplitCellSyntaxError(t *testing.T) {
	if _, err := splitCell("x := \"unterminated\n"); err == nil || !strings.Contains(err.Error(), "1:6") {
		t.Fatalf("want an error at 1:6, got %v", err)
	}
}

func TestIsComplete(t *testing.T) {
	for _, c := range []struct{ code, status string }{
		{"x := 1", "complete"},
		{"for i := range 3 {", "incomplete"},
		{"f(1,\n", "incomplete"},
		{"xs := []int{\n1,", "incomplete"},
		{"x := 1 +", "incomplete"},
		{"s := `raw", "incomplete"},
		{"}", "invalid"},
		{"%timeit x", "complete"},
		{"", "complete"},
		{"func f() {\n}\n", "complete"},
	} {
		if got, _ := IsComplete(c.code); got != c.status {
			t.Errorf("IsComplete(%q) = %s, want %s", c.code, got, c.status)
		}
	}
	if _, indent := IsComplete("if x {\n\tfor {"); indent != "        " {
		t.Errorf("indent for depth 2 = %q", indent)
	}
}
