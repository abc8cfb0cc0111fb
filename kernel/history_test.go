package kernel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
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

// A huge cell is stored truncated, at a character boundary, with a note.
func TestHistoryTruncatesLongCells(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	long := "x" + strings.Repeat("é", maxHistorySource) // 2 bytes a character: the cut falls inside one
	if err := h.Append(1, long); err != nil {
		t.Fatal(err)
	}
	h.Append(2, "after")
	h2, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	es := h2.Range(1, 1, 0)
	if len(es) != 2 || es[1].Source != "after" {
		t.Fatalf("entries after a huge cell: %d, want 2", len(es))
	}
	src := es[0].Source
	body, note, _ := strings.Cut(src, "\n[history:")
	if !utf8.ValidString(src) || !strings.HasPrefix(long, body) || len(body) != maxHistorySource-1 {
		t.Errorf("stored %d bytes of the cell (valid UTF-8 %v), want its first %d", len(body), utf8.ValidString(src), maxHistorySource-1)
	}
	if want := fmt.Sprintf(" this cell had %d bytes", len(long)); !strings.Contains(note, want) {
		t.Errorf("note %q does not say %q", note, want)
	}
}

// Lines too long to read, corrupt lines and a last line cut short are
// skipped; the entries around them load, and the file stays usable.
func TestHistorySkipsUnreadableLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	huge, _ := json.Marshal(HistoryEntry{Session: 9, Line: 1, Source: strings.Repeat("y", maxHistoryLine)})
	content := `{"session":1,"line":1,"source":"a := 1"}` + "\n" + string(huge) + "\n{not json\n\n" +
		`{"session":2,"line":1,"source":"b := 2"}` + "\n" + `{"session":2,"line":2,"sou`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Session() != 3 || h.Skipped() != 3 {
		t.Errorf("session %d, %d lines skipped; want 3, 3 (the 9 was in the unreadable line)", h.Session(), h.Skipped())
	}
	got := h.Tail(0)
	want := []HistoryEntry{{Session: 1, Line: 1, Source: "a := 1"}, {Session: 2, Line: 1, Source: "b := 2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	h.Append(1, "c := 3")
	h2, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if es := h2.Range(3, 1, 0); len(es) != 1 || es[0].Source != "c := 3" || h2.Skipped() != 3 {
		t.Errorf("after appending past the cut line: session 3 has %v, %d lines skipped; want c := 3, 3", es, h2.Skipped())
	}
}
