package lang

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// scriptSeparator starts a new cell in a script.
var scriptSeparator = regexp.MustCompile(`(?m)^// ?%%.*$`)

// ScriptCells cuts a Go script into cells at its `// %%` lines, keeping
// line numbers: each cell is padded with the newlines before it, so errors
// name lines of the script. Blank cells are dropped.
func ScriptCells(src string) []string {
	var cells []string
	prev := 0
	for _, loc := range scriptSeparator.FindAllStringIndex(src, -1) {
		cells = append(cells, src[prev:loc[0]])
		prev = loc[1]
	}
	cells = append(cells, src[prev:])
	var out []string
	line := 0
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			out = append(out, strings.Repeat("\n", line)+c)
		}
		line += strings.Count(c, "\n")
	}
	return out
}

// RunScript runs a script's cells (see ScriptCells) in a new session, in
// order, stopping at the first that fails, whose error it returns (its
// traceback goes to stderr). Printed output goes to stdout and stderr, and
// displayed values as text to stdout. path names the script in messages.
func RunScript(ctx context.Context, path string, src []byte, stdout, stderr io.Writer) error {
	s, err := New(Options{Terminal: true})
	if err != nil {
		return fmt.Errorf("starting the interpreter: %w", err)
	}
	defer s.Close()
	o := textOutput{stdout: stdout, stderr: stderr}
	for i, cell := range ScriptCells(string(src)) {
		res := s.Execute(ctx, cell, o)
		if res.Data != nil {
			o.Display(res.Data, nil, nil, false)
		}
		if res.Err != nil {
			fmt.Fprintln(stderr, strings.Join(res.Err.Traceback, "\n"))
			return fmt.Errorf("%s: cell %d: %w", path, i+1, res.Err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: cell %d: %w", path, i+1, err)
		}
	}
	return nil
}

// textOutput writes a script's output as text.
type textOutput struct{ stdout, stderr io.Writer }

func (o textOutput) Stream(name, text string) {
	if name == "stderr" {
		fmt.Fprint(o.stderr, text)
		return
	}
	fmt.Fprint(o.stdout, text)
}

func (o textOutput) Display(data, _, _ map[string]any, _ bool) {
	if t, ok := data["text/plain"].(string); ok {
		fmt.Fprintln(o.stdout, t)
	}
}

func (o textOutput) ClearOutput(bool) {}

func (o textOutput) Input(string, bool) (string, error) {
	return "", errors.New("a script cannot read input")
}
