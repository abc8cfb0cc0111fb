package lang

import (
	"errors"
	"testing"
)

// lineOutput answers input requests with its lines in turn, then fails as a
// front end that does not accept input does; it records the prompts and the
// stdout delivered before each request.
type lineOutput struct {
	recorder
	lines   []string
	asked   int
	before  []string // stdout delivered when each request came
	refused bool
}

func (o *lineOutput) Input(prompt string, _ bool) (string, error) {
	o.mu.Lock()
	o.before = append(o.before, o.stdout.String())
	o.mu.Unlock()
	if o.refused || o.asked == len(o.lines) {
		return "", errors.New("stdin not allowed")
	}
	o.asked++
	return o.lines[o.asked-1], nil
}

// TestStdinReaders checks that every usual way of reading os.Stdin asks the
// front end, after the prompt text has been delivered, and that the readers
// share the lines (what bufio buffered is not asked twice).
func TestStdinReaders(t *testing.T) {
	s := sharedSession(t)
	for _, c := range []struct {
		name, code string
		lines      []string
		want       string
		prompt     string // stdout delivered before the first request
	}{
		{"bufio.Reader", "import (\"bufio\"; \"fmt\"; \"os\")\nfmt.Print(\"Name: \")\nr := bufio.NewReader(os.Stdin)\nline, err := r.ReadString('\\n')\nfmt.Printf(\"%q %v\\n\", line, err)",
			[]string{"Ada"}, "Name: \"Ada\\n\" <nil>\n", "Name: "},
		{"bufio.Scanner", "import (\"bufio\"; \"fmt\"; \"os\")\nfmt.Print(\"Two lines: \")\nsc := bufio.NewScanner(os.Stdin)\nfor i := 0; i < 2 && sc.Scan(); i++ {\n\tfmt.Println(\"got\", sc.Text())\n}",
			[]string{"a", "b"}, "Two lines: got a\ngot b\n", "Two lines: "},
		{"fmt.Scanln", "import \"fmt\"\nvar n, m int\nfmt.Print(\"n m? \")\nk, err := fmt.Scanln(&n, &m)\nfmt.Println(k, err, n+m)",
			[]string{"3 4"}, "n m? 2 <nil> 7\n", "n m? "},
		{"fmt.Fscan", "import (\"fmt\"; \"os\")\nvar x float64\nfmt.Fscan(os.Stdin, &x)\nfmt.Println(2 * x)",
			[]string{"1.25"}, "2.5\n", ""},
		{"io.ReadAll", "import (\"fmt\"; \"io\"; \"os\")\nb, err := io.ReadAll(os.Stdin)\nfmt.Printf(\"%q %v\\n\", b, err)",
			[]string{"x", "y"}, "\"x\\ny\\n\" <nil>\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := &lineOutput{lines: c.lines}
			res := s.Execute(t.Context(), c.code, out)
			if res.Err != nil {
				t.Fatalf("error %v", res.Err)
			}
			if got := out.stdout.String(); got != c.want {
				t.Errorf("stdout %q, want %q", got, c.want)
			}
			if out.asked != len(c.lines) {
				t.Errorf("asked %d lines, want %d", out.asked, len(c.lines))
			}
			if len(out.before) == 0 || out.before[0] != c.prompt {
				t.Errorf("stdout delivered before each request %q, want %q first", out.before, c.prompt)
			}
		})
	}
}

// TestStdinStat checks that os.Stdin looks like a terminal to a program
// that asks, and keeps the other *os.File methods programs call.
func TestStdinStat(t *testing.T) {
	s := sharedSession(t)
	out := &lineOutput{}
	res := s.Execute(t.Context(), "import (\"fmt\"; \"os\")\nfi, err := os.Stdin.Stat()\nfmt.Println(err, fi.Mode()&os.ModeCharDevice != 0, fi.IsDir(), os.Stdin.Name(), os.Stdin.Close())", out)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got, want := out.stdout.String(), "<nil> true false /dev/stdin <nil>\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

// TestStdinRefused checks EOF when the front end does not accept input.
func TestStdinRefused(t *testing.T) {
	s := sharedSession(t)
	out := &lineOutput{refused: true}
	res := s.Execute(t.Context(), "import (\"bufio\"; \"fmt\"; \"os\")\nline, err := bufio.NewReader(os.Stdin).ReadString('\\n')\nfmt.Printf(\"%q %v\\n\", line, err)", out)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got, want := out.stdout.String(), "\"\" EOF\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}
