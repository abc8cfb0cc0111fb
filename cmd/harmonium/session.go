package main

import (
	"context"
	"unicode/utf8"

	"github.com/harmonium-rbm/harmonium/kernel"
	"github.com/harmonium-rbm/harmonium/lang"
)

// newExecutor makes the executor process's executor: a lang session adapted
// to kernel.Executor. If the session cannot start, every cell reports why.
func newExecutor() kernel.Executor {
	s, err := lang.New(lang.Options{})
	return &executor{s: s, err: err}
}

// executor adapts a *lang.Session to kernel.Executor (lang never imports
// kernel): it converts results and errors, evaluates user_expressions and
// translates cursor positions between code points (wire) and bytes (lang).
type executor struct {
	s   *lang.Session
	err error
}

func execError(e *lang.Error) *kernel.ExecError {
	if e == nil {
		return nil
	}
	return &kernel.ExecError{Name: e.Name, Value: e.Value, Traceback: e.Traceback}
}

// Execute implements kernel.Executor. kernel.Output has lang.Output's methods.
func (x *executor) Execute(ctx context.Context, code string, opts kernel.ExecOptions, out kernel.Output) kernel.ExecResult {
	if x.err != nil {
		return kernel.ExecResult{Err: &kernel.ExecError{Name: "KernelError", Value: x.err.Error(), Traceback: []string{"KernelError: " + x.err.Error()}}}
	}
	res := x.s.Execute(ctx, code, out)
	r := kernel.ExecResult{Data: res.Data, Metadata: res.Metadata, Err: execError(res.Err)}
	if len(opts.UserExpressions) > 0 {
		r.UserExpressions = map[string]any{}
		for name, expr := range opts.UserExpressions {
			v := x.s.Evaluate(ctx, expr)
			if v.Err != nil {
				r.UserExpressions[name] = map[string]any{"status": "error", "ename": v.Err.Name, "evalue": v.Err.Value, "traceback": v.Err.Traceback}
				continue
			}
			data := v.Data
			if data == nil {
				data = map[string]any{"text/plain": ""}
			}
			r.UserExpressions[name] = map[string]any{"status": "ok", "data": data, "metadata": map[string]any{}}
		}
	}
	return r
}

// Complete implements kernel.Executor.
func (x *executor) Complete(code string, cursor int) kernel.Completion {
	if x.err != nil {
		return kernel.Completion{Start: cursor, End: cursor}
	}
	c := x.s.Complete(code, byteOffset(code, cursor))
	var types []any
	start, end := runeOffset(code, c.Start), runeOffset(code, c.End)
	for i, m := range c.Matches {
		types = append(types, map[string]any{"start": start, "end": end, "text": m, "type": c.Types[i]})
	}
	matches := c.Matches
	if matches == nil {
		matches = []string{}
	}
	return kernel.Completion{Matches: matches, Start: start, End: end, Metadata: map[string]any{"_jupyter_types_experimental": types}}
}

// Inspect implements kernel.Executor.
func (x *executor) Inspect(code string, cursor, detailLevel int) (map[string]any, bool) {
	if x.err != nil {
		return nil, false
	}
	return x.s.Inspect(code, byteOffset(code, cursor), detailLevel)
}

// IsComplete implements kernel.Executor.
func (x *executor) IsComplete(code string) (string, string) { return lang.IsComplete(code) }

// byteOffset converts a position in code points to a byte offset.
func byteOffset(s string, cp int) int {
	i := 0
	for n := 0; n < cp && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// runeOffset converts a byte offset to a position in code points.
func runeOffset(s string, b int) int { return utf8.RuneCountInString(s[:min(b, len(s))]) }
