package lang_test

import (
	"context"
	"fmt"

	"github.com/harmonium-rbm/harmonium/lang"
)

// printer is a minimal lang.Output that prints streams.
type printer struct{}

func (printer) Stream(name, text string) { fmt.Print(text) }
func (printer) Display(data, _, _ map[string]any, _ bool) {
	fmt.Println("display:", data["text/plain"])
}
func (printer) ClearOutput(bool)                   {}
func (printer) Input(string, bool) (string, error) { return "", fmt.Errorf("no input") }

func ExampleSession_Execute() {
	s, err := lang.New(lang.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for _, cell := range []string{
		"import \"fmt\"\nsum := 0\nfor i := range 5 { sum += i }\nfmt.Println(\"sum\", sum)",
		"func double(x int) int { return 2 * x }\ndouble(max(sum, 3))",
		"var xs []int\nxs[1] = 0",
	} {
		res := s.Execute(context.Background(), cell, printer{})
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
	// error: RuntimeError
}

func ExampleIsComplete() {
	fmt.Println(lang.IsComplete("for i := range 3 {"))
	fmt.Println(lang.IsComplete("x := []int{1, 2}"))
	// Output:
	// incomplete
	// complete
}
