package lang_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/harmonium-rbm/harmonium/lang"
)

// printer is a minimal lang.Output that prints streams to w. (While a cell
// runs, os.Stdout is the session's capture pipe, so w is taken before.)
type printer struct{ w io.Writer }

func (p printer) Stream(name, text string) { fmt.Fprint(p.w, text) }
func (p printer) Display(data, _, _ map[string]any, _ bool) {
	fmt.Fprintln(p.w, "display:", data["text/plain"])
}
func (printer) ClearOutput(bool)                   {}
func (printer) Input(string, bool) (string, error) { return "", fmt.Errorf("no input") }

func ExampleSession_Execute() {
	s, err := lang.New(lang.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	out := printer{os.Stdout}
	for _, cell := range []string{
		"import \"fmt\"\nsum := 0\nfor i := range 5 { sum += i }\nfmt.Println(\"sum\", sum)",
		"func double(x int) int { return 2 * x }\ndouble(max(sum, 3))",
		"display.Markdown(\"**bold**\")",
		"var xs []int\nxs[1] = 0",
	} {
		res := s.Execute(context.Background(), cell, out)
		if res.Data != nil {
			fmt.Println("result:", res.Data["text/plain"])
		}
		if res.Err != nil {
			fmt.Println("error:", res.Err.Name)
		}
	}
	// Output:
	// sum 10
	// result: 20
	// display: **bold**
	// error: RuntimeError
}

func ExampleIsComplete() {
	status, indent := lang.IsComplete("for i := range 3 {")
	fmt.Printf("%s %q\n", status, indent)
	status, _ = lang.IsComplete("x := []int{1, 2}")
	fmt.Println(status)
	// Output:
	// incomplete "    "
	// complete
}
