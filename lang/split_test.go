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
