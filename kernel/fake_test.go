package kernel

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// fakeExecutor interprets a tiny command language so that the protocol can be
// tested without the real Go interpreter. Each cell is one command:
//
//	print TEXT        stream TEXT to stdout      eprint TEXT  to stderr
//	value TEXT        execute_result text/plain TEXT
//	display           display_data (text/html) with display_id "d1", then update it
//	clear             clear_output(wait=false)
//	fail              an error result (slowfail: after 200 ms)
//	loop              block until interrupted
//	input PROMPT      read a line (password if PROMPT starts with "pw")
//	ask TEXT          print TEXT ("|" for a newline) on stdout, then read a line with no prompt
//	panic             panic inside the executor
//	nan               an execute_result JSON cannot encode
type fakeExecutor struct{}

func (fakeExecutor) Execute(ctx context.Context, code string, opts ExecOptions, out Output) ExecResult {
	cmd, arg, _ := strings.Cut(code, " ")
	var res ExecResult
	switch cmd {
	case "print":
		out.Stream("stdout", arg)
	case "many": // N lines on stdout, then one on stderr
		n, _ := strconv.Atoi(arg)
		for i := 0; i < n; i++ {
			out.Stream("stdout", fmt.Sprintf("line %d\n", i))
		}
		out.Stream("stderr", "done\n")
	case "mixed": // stream, display, stream, clear, stream
		out.Stream("stdout", "a")
		out.Display(map[string]any{"text/plain": "d"}, nil, nil, false)
		out.Stream("stdout", "b")
		out.ClearOutput(true)
		out.Stream("stdout", "c")
	case "eprint":
		out.Stream("stderr", arg)
	case "value":
		res.Data = map[string]any{"text/plain": arg}
	case "display":
		tr := map[string]any{"display_id": "d1"}
		out.Display(map[string]any{"text/html": "<b>1</b>"}, nil, tr, false)
		out.Display(map[string]any{"text/html": "<b>2</b>"}, nil, tr, true)
	case "clear":
		out.ClearOutput(false)
	case "slowfail":
		time.Sleep(200 * time.Millisecond)
		fallthrough
	case "fail":
		res.Err = &ExecError{Name: "RuntimeError", Value: "boom", Traceback: []string{"cell:1:1: boom"}}
	case "loop":
		select {
		case <-ctx.Done():
			res.Err = &ExecError{Name: "Interrupted", Value: "interrupted"}
		case <-time.After(time.Minute):
		}
	case "input":
		s, err := out.Input(arg, strings.HasPrefix(arg, "pw"))
		if err != nil {
			res.Err = &ExecError{Name: "InputError", Value: err.Error()}
			break
		}
		out.Stream("stdout", "got "+s)
	case "ask":
		out.Stream("stdout", strings.ReplaceAll(arg, "|", "\n"))
		s, err := out.Input("", false)
		if err != nil {
			res.Err = &ExecError{Name: "InputError", Value: err.Error()}
			break
		}
		out.Stream("stdout", "got "+s)
	case "panic":
		panic("fake executor panics")
	case "nan":
		res.Data = map[string]any{"text/plain": math.NaN()}
	case "count":
		res.Data = map[string]any{"text/plain": fmt.Sprint(opts.ExecutionCount)}
	}
	if len(opts.UserExpressions) > 0 {
		res.UserExpressions = map[string]any{}
		for name, expr := range opts.UserExpressions {
			res.UserExpressions[name] = map[string]any{"status": "ok",
				"data": map[string]any{"text/plain": strings.ToUpper(expr)}, "metadata": map[string]any{}}
		}
	}
	return res
}

func (fakeExecutor) Complete(code string, cursor int) Completion {
	r := []rune(code)
	start := cursor
	for start > 0 && r[start-1] != '.' && r[start-1] != ' ' {
		start--
	}
	prefix := string(r[start:cursor])
	var m []string
	for _, c := range []string{"Println", "Printf", "Sprint"} {
		if strings.HasPrefix(c, prefix) {
			m = append(m, c)
		}
	}
	return Completion{Matches: m, Start: start, End: cursor}
}

func (fakeExecutor) Inspect(code string, cursor, detailLevel int) (map[string]any, bool) {
	if !strings.Contains(code, "fmt") {
		return nil, false
	}
	return map[string]any{"text/plain": fmt.Sprintf("package fmt (detail %d)", detailLevel)}, true
}

func (fakeExecutor) IsComplete(code string) (string, string) {
	switch d := strings.Count(code, "{") - strings.Count(code, "}"); {
	case d > 0:
		return "incomplete", "\t"
	case d < 0:
		return "invalid", ""
	}
	return "complete", ""
}
