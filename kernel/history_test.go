package kernel

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestHistoryPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "history.jsonl")
	h1, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	h1.Append(1, "a := 1")
	h1.Append(2, "a++")
	h2, err := OpenHistory(path) // a restarted kernel
	if err != nil {
		t.Fatal(err)
	}
	if h1.Session() != 1 || h2.Session() != 2 {
		t.Fatalf("sessions %d, %d; want 1, 2", h1.Session(), h2.Session())
	}
	h2.Append(1, "fmt.Println(a)")
	want := []HistoryEntry{{Session: 1, Line: 1, Source: "a := 1"}, {Session: 1, Line: 2, Source: "a++"}}
	if got := h2.Range(-1, 1, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("Range(-1) = %v", got)
	}
	if got := h2.Range(1, 2, 3); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("Range(1, 2, 3) = %v", got)
	}
	if got := h2.Range(0, 0, 0); len(got) != 1 || got[0].Source != "fmt.Println(a)" {
		t.Errorf("Range(0) = %v", got)
	}
	if got := h2.Tail(2); len(got) != 2 || got[0].Source != "a++" || got[1].Session != 2 {
		t.Errorf("Tail(2) = %v", got)
	}
	// A corrupt line is skipped, not fatal.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n")
	f.Close()
	h3, err := OpenHistory(path)
	if err != nil || h3.Session() != 3 || len(h3.Tail(0)) != 3 {
		t.Errorf("after a corrupt line: session %d, %d entries, %v", h3.Session(), len(h3.Tail(0)), err)
	}
}

func TestHistorySearch(t *testing.T) {
	h, _ := OpenHistory("")
	for i, s := range []string{"x := 1", "fmt.Println(x)", "x := 1", "y := 2\nx := 3"} {
		h.Append(i+1, s)
	}
	lines := func(es []HistoryEntry) []int {
		var l []int
		for _, e := range es {
			l = append(l, e.Line)
		}
		return l
	}
	for _, tc := range []struct {
		pattern string
		n       int
		unique  bool
		want    []int
	}{
		{"x := ?", 0, false, []int{1, 3}},
		{"*x*", 0, false, []int{1, 2, 3, 4}},
		{"*x*", 2, false, []int{3, 4}},
		{"x*", 0, true, []int{3}},
		{"", 0, true, []int{2, 3, 4}},
		{"*3", 0, false, []int{4}},
		{"nothing", 0, false, nil},
	} {
		if got := lines(h.Search(tc.pattern, tc.n, tc.unique)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Search(%q, %d, %v) = %v, want %v", tc.pattern, tc.n, tc.unique, got, tc.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"", "", true}, {"", "a", false}, {"*", "", true}, {"*", "any/thing\n", true},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false},
		{"*é", "café", true}, {"ca?é", "cafxé", false}, {"**a", "ba", true}, {"a*", "b", false},
	} {
		if got := globMatch([]rune(tc.p), []rune(tc.s)); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}
