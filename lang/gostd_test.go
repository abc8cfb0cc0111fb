package lang

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// sortOrdered's reflection path (element types without a compiled
// instantiation) must order as slices.Sort does, NaN first.
func TestSortOrderedByReflection(t *testing.T) {
	type level float64
	ls := []level{3, level(math.NaN()), -1, 2, -1}
	sortOrdered(ls)
	want := []level{level(math.NaN()), -1, -1, 2, 3}
	if !math.IsNaN(float64(ls[0])) || !slices.Equal(ls[1:], want[1:]) {
		t.Errorf("sortOrdered(%v): got %v", []level{3, level(math.NaN()), -1, 2, -1}, ls)
	}
	is := []int16{5, -3, 9, 0}
	sortOrdered(is)
	if !slices.Equal(is, []int16{-3, 0, 5, 9}) {
		t.Errorf("sortOrdered of int16: got %v", is)
	}
	ss := []uint32{7, 1, 4}
	sortOrdered(ss)
	if !slices.Equal(ss, []uint32{1, 4, 7}) {
		t.Errorf("sortOrdered of uint32: got %v", ss)
	}
}

// What a cell gets for constructs that are not supported: an error naming
// the construct, not a wrong result.
func TestGoConstructErrors(t *testing.T) {
	s := newSession(t)
	_, res := run(t, s, "import \"slices\"\nfor i, v := range slices.Values([]int{1}) {\n\tprintln(i, v)\n}")
	if res.Err == nil || !strings.Contains(res.Err.Value, "permits only 1 iteration variable") {
		t.Fatalf("two variables over an iter.Seq: got %+v", res.Err)
	}
}

// The constructs across cells, where the rewriter learns what a name is
// from the session: a function returning an iterator or an iterator
// variable declared in an earlier cell, new of a session variable and of a
// session type, %T of a type of an earlier cell.
func TestGoConstructsAcrossCells(t *testing.T) {
	runSteps(t, []step{
		{"import (\n\t\"fmt\"\n\t\"iter\"\n)\nfunc count(n int) iter.Seq[int] {\n\treturn func(yield func(int) bool) {\n\t\tfor i := 0; i < n; i++ {\n\t\t\tif !yield(i) {\n\t\t\t\treturn\n\t\t\t}\n\t\t}\n\t}\n}", ""},
		{"for x := range count(3) {\n\tfmt.Println(x)\n}", "0\n1\n2\n"},
		{"seq := count(5)", ""},
		{"for x := range seq {\n\tif x == 2 {\n\t\tbreak\n\t}\n\tfmt.Print(x, \" \")\n}\nfmt.Println()", "0 1 \n"},
		{"v := 7\ntype pair struct{ a, b int }", ""},
		{"p := new(v)\n*p = 8\nq := new(pair)\nfmt.Println(v, *p, *q)", "7 8 {0 0}\n"},
		{"fmt.Printf(\"%T %+v\\n\", q, pair{1, 2})", "*main.pair {a:1 b:2}\n"},
		// A redefined type is still main.pair (internally pair__N).
		{"type pair struct{ a, b, c int }", ""},
		{"fmt.Printf(\"%T %+v\\n\", pair{1, 2, 3}, pair{1, 2, 3})", "main.pair {a:1 b:2 c:3}\n"},
		// A loop at the top level of a cell, its closure run by compiled code.
		{"import (\n\t\"sort\"\n\t\"sync\"\n)\nvar wg sync.WaitGroup\nvar mu sync.Mutex\ngot := []int{}\nfor i := 1; i <= 4; i++ {\n\twg.Go(func() {\n\t\tmu.Lock()\n\t\tgot = append(got, i*10)\n\t\tmu.Unlock()\n\t})\n}\nwg.Wait()\nsort.Ints(got)\nfmt.Println(got)", "[10 20 30 40]\n"},
	})
}

// The rewrites leave alone what they must not change: a variable a closure
// given to compiled code increments is shared, not copied; new of a generic
// type stays new.
func TestGoRewritesKeepMeaning(t *testing.T) {
	runSteps(t, []step{
		{"import (\n\t\"fmt\"\n\t\"sync\"\n)\nfunc total() int {\n\tvar wg sync.WaitGroup\n\tvar mu sync.Mutex\n\tsum := 0\n\tfor i := range 4 {\n\t\tn := 0\n\t\twg.Go(func() {\n\t\t\tmu.Lock()\n\t\t\tn++\n\t\t\tsum += i + n\n\t\t\tmu.Unlock()\n\t\t})\n\t\twg.Wait()\n\t\tsum += n * 100\n\t}\n\treturn sum\n}\nfmt.Println(total())", "410\n"},
		{"type box[T any] struct{ v T }\nb := new(box[int])\nb.v = 3\nfmt.Println(b.v)", "3\n"},
	})
}
