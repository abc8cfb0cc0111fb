package lang

import (
	"strings"
	"testing"
)

func TestHelpQuery(t *testing.T) {
	for _, c := range []struct {
		code   string
		name   string
		detail int
		ok     bool
	}{
		{"rbm.NewChains?", "rbm.NewChains", 0, true},
		{"  f??\n", "f", 1, true},
		{"?x", "x", 0, true},
		{"??a.b", "a.b", 1, true},
		{"?x?", "", 0, false},
		{"x", "", 0, false},
		{"x ? y", "", 0, false},
		{"f(x)?", "", 0, false},
	} {
		name, detail, ok := helpQuery(c.code)
		if name != c.name || detail != c.detail || ok != c.ok {
			t.Errorf("helpQuery(%q) = %q, %d, %v; want %q, %d, %v", c.code, name, detail, ok, c.name, c.detail, c.ok)
		}
	}
}

// TestHelpCells runs `x?` and `x??` cells: the doc of a compiled function,
// the signature then the source of a function declared in a cell.
func TestHelpCells(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"strings\"\n// double doubles.\nfunc double(x int) int {\n\treturn 2 * x // twice\n}")
	for _, c := range []struct {
		code, want, not string
	}{
		{"rbm.NewChains?", "func NewChains(", ""},
		{"double?", "func double(x int) int", "return 2 * x"},
		{"double??", "func double(x int) int {\n\treturn 2 * x // twice\n}", ""},
		{"rbm.NewChains??", "// rbmcore/rbm/gibbs.go:", ""},
		{"rbm.NewChains??", "func NewChains(m *RBM, b int, seed uint64) (*Chains, error) {\n", ""},
		{"strings.Fields??", "its source is not part of the session", ""},
	} {
		rec, res := run(t, s, c.code)
		if res.Err != nil {
			t.Fatalf("%s: %v", c.code, res.Err)
		}
		if len(rec.displays) != 1 {
			t.Fatalf("%s: %d displays, stdout %q", c.code, len(rec.displays), rec.stdout.String())
		}
		text, _ := rec.displays[0]["text/plain"].(string)
		if !strings.Contains(text, c.want) || c.not != "" && strings.Contains(text, c.not) {
			t.Errorf("%s shows %q; want it to contain %q and not %q", c.code, text, c.want, c.not)
		}
	}
	rec, _ := run(t, s, "nowhere?")
	if got := rec.stdout.String(); got != "Object `nowhere` not found.\n" {
		t.Errorf("nowhere? prints %q", got)
	}
}

// TestInspectInCall checks Shift-Tab inside a call's parentheses, also past
// arguments and literals, and after the call is closed.
func TestInspectInCall(t *testing.T) {
	s := sharedSession(t)
	for _, c := range []struct {
		code string
		want string // "" when nothing is expected
	}{
		{"rbm.NewChains(", "func NewChains("},
		{"ch := rbm.NewChains(m, []int{1, 2", "func NewChains("},
		{"display.Show(rbm.NewChains(", "func NewChains("},
		{"display.Show(rbm.NewChains(m), ", "func Show("},
		{"x := (1 + ", ""},
	} {
		data, ok := s.Inspect(c.code, len(c.code), 0)
		text, _ := data["text/plain"].(string)
		if c.want == "" {
			if ok {
				t.Errorf("Inspect(%q) found %q", c.code, text)
			}
			continue
		}
		if !ok || !strings.Contains(text, c.want) {
			t.Errorf("Inspect(%q) = %q, %v; want %q", c.code, text, ok, c.want)
		}
	}
}

// TestCompleteUnexecuted checks that completion sees the imports and
// declarations of the code being completed before it has run.
func TestCompleteUnexecuted(t *testing.T) {
	s := newSession(t)
	for _, c := range []struct {
		code, want string
	}{
		{"import \"math\"\nx := math.Sqr", "Sqrt"},
		{"import (\n\t\"fmt\"\n\tst \"strings\"\n)\nst.ToUp", "ToUpper"},
		{"import m \"math\"\nm.Sqr", "Sqrt"},
		{"func helper() {}\nhel", "helper"},
		{"total, count := 0, 0\ncou", "count"},
		{"type Point struct{}\nPoi", "Point"},
	} {
		got := s.Complete(c.code, len(c.code))
		if !hasString(got.Matches, c.want) {
			t.Errorf("Complete(%q) = %v, want %s among them", c.code, got.Matches, c.want)
		}
	}
}

// TestIsCompleteHelp checks that a console runs help cells at once.
func TestIsCompleteHelp(t *testing.T) {
	for _, code := range []string{"rbm.NewChains?", "f??", "?x"} {
		if got, _ := IsComplete(code); got != "complete" {
			t.Errorf("IsComplete(%q) = %s, want complete", code, got)
		}
	}
}
