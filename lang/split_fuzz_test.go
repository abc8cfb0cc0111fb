package lang

import "testing"

// FuzzSplitCell: the cell splitter never panics, and the items it returns
// are in order, do not overlap, lie inside the cell and carry the line and
// column of their start.
func FuzzSplitCell(f *testing.F) {
	for _, s := range []string{
		"import \"fmt\"\nx := 1\nfunc f() int { return x }\nfunc (t T) M() {}\ntype T struct{ A int }\n",
		"const c = 2\nvar v = 3\nfunc() { fmt.Println(\"lit\") }()\nfmt.Println(f(),\n\tc)",
		"package main\n\nfunc main() {}\n",
		"x := `raw\nstring` /* comment\n */ ; y := 'c'",
		"for i := 0; i < 3; i++ { if i > 1 { break } }",
		"}}} ((( ]]",
		"\"unterminated",
		"x := 1 // trailing",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		items, err := splitCell(src)
		if err != nil {
			return
		}
		prev := 0
		for k, it := range items {
			if it.start < prev || it.end < it.start || it.end > len(src) {
				t.Fatalf("item %d spans [%d, %d) after %d in a cell of %d bytes", k, it.start, it.end, prev, len(src))
			}
			if line, col := lineCol(src, it.start); line != it.line || col != it.col {
				t.Fatalf("item %d at offset %d: position %d:%d, want %d:%d", k, it.start, it.line, it.col, line, col)
			}
			prev = it.end
		}
	})
}
