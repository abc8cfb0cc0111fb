package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/kernel"
)

// TestMain lets the test binary act as `harmonium executor` with a scripted
// executor (no interpreter to load), so that the supervisor is tested with
// real processes, pipes and runtime faults.
func TestMain(m *testing.M) {
	if os.Getenv("HARMONIUM_TEST_EXECUTOR") != "" {
		w := &frameWriter{w: os.NewFile(frameFD, "frames")}
		w.send(frame{Op: opReady})
		if err := serveExecutor(&scriptedExecutor{}, os.NewFile(requestFD, "requests"), w); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// scriptedExecutor runs "cells" that are commands of the test.
type scriptedExecutor struct{ count int }

func (x *scriptedExecutor) Execute(ctx context.Context, code string, _ kernel.ExecOptions, out kernel.Output) kernel.ExecResult {
	text := func(s string) kernel.ExecResult {
		return kernel.ExecResult{Data: map[string]any{"text/plain": s}}
	}
	switch code {
	case "count": // state that a reset loses
		x.count++
		return text(fmt.Sprint(x.count))
	case "print":
		out.Stream("stdout", "hi\n")
		out.Display(map[string]any{"text/plain": "shown"}, map[string]any{"width": 640}, map[string]any{"display_id": "d"}, false)
		return text("printed")
	case "input":
		v, err := out.Input("name? ", false)
		if err != nil {
			return kernel.ExecResult{Err: &kernel.ExecError{Name: "InputError", Value: err.Error()}}
		}
		return text(v)
	case "sleep":
		<-ctx.Done()
		return kernel.ExecResult{Err: &kernel.ExecError{Name: "Interrupted", Value: "interrupted"}}
	case "maps": // a fault no recover can catch
		m := map[int]int{}
		for range 4 {
			go func() {
				for j := 0; ; j++ {
					m[j%64] = j
				}
			}()
		}
		time.Sleep(time.Minute)
	case "panic later": // dies between cells
		go func() {
			time.Sleep(100 * time.Millisecond)
			panic("boom")
		}()
		return text("ok")
	}
	return kernel.ExecResult{Err: &kernel.ExecError{Name: "Unknown", Value: code}}
}

func (x *scriptedExecutor) Complete(code string, cursor int) kernel.Completion {
	return kernel.Completion{Matches: []string{code + "!"}, Start: 0, End: cursor}
}

func (x *scriptedExecutor) Inspect(code string, _, _ int) (map[string]any, bool) {
	return map[string]any{"text/plain": "doc of " + code}, code != ""
}

func (x *scriptedExecutor) IsComplete(string) (string, string) { return "unknown", "" }

// recordingOutput keeps what a cell sent.
type recordingOutput struct {
	mu      sync.Mutex
	streams strings.Builder
	display []map[string]any
	meta    []map[string]any
}

func (o *recordingOutput) Stream(name, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.streams.WriteString(name + ":" + text)
}

func (o *recordingOutput) Display(data, metadata, _ map[string]any, _ bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.display = append(o.display, data)
	o.meta = append(o.meta, metadata)
}

func (o *recordingOutput) ClearOutput(bool) {}

func (o *recordingOutput) Input(prompt string, _ bool) (string, error) {
	if prompt != "name? " {
		return "", errors.New("unexpected prompt " + prompt)
	}
	return "Ada", nil
}

func (o *recordingOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.streams.String()
}

func TestSupervisor(t *testing.T) {
	t.Setenv("HARMONIUM_TEST_EXECUTOR", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	s := newSupervisor(exe, io.Discard, io.Discard, log.New(&logs, "", 0))
	defer s.Close()
	bg := context.Background()
	value := func(code string, out kernel.Output) (string, *kernel.ExecError) {
		t.Helper()
		r := s.Execute(bg, code, kernel.ExecOptions{}, out)
		v, _ := r.Data["text/plain"].(string)
		return v, r.Err
	}

	for want := 1; want <= 2; want++ {
		if v, err := value("count", &recordingOutput{}); err != nil || v != fmt.Sprint(want) {
			t.Fatalf("count = %q, %v; want %d", v, err, want)
		}
	}
	out := &recordingOutput{}
	if v, err := value("print", out); err != nil || v != "printed" || out.String() != "stdout:hi\n" || len(out.display) != 1 ||
		out.display[0]["text/plain"] != "shown" || fmt.Sprint(out.meta[0]["width"]) != "640" {
		t.Errorf("print: %q %v, streams %q, displays %v %v", v, err, out.String(), out.display, out.meta)
	}
	if v, err := value("input", &recordingOutput{}); err != nil || v != "Ada" {
		t.Errorf("input: %q %v", v, err)
	}
	if c := s.Complete("fm", 2); len(c.Matches) != 1 || c.Matches[0] != "fm!" || c.End != 2 {
		t.Errorf("Complete = %+v", c)
	}
	if d, found := s.Inspect("x", 1, 0); !found || d["text/plain"] != "doc of x" {
		t.Errorf("Inspect = %v %v", d, found)
	}

	// An interrupt reaches the running cell.
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if r := s.Execute(ctx, "sleep", kernel.ExecOptions{}, &recordingOutput{}); r.Err == nil || r.Err.Name != "Interrupted" || time.Since(start) > 2*time.Second {
		t.Errorf("interrupt: %+v after %v", r.Err, time.Since(start))
	}

	// A fatal runtime error: the cell's error says the session was reset and
	// why; the next cell runs in a fresh session.
	start = time.Now()
	if _, e := value("maps", &recordingOutput{}); e == nil || e.Name != "SessionReset" || !strings.Contains(e.Value, "fatal error: concurrent map writes") ||
		!strings.Contains(e.Value, "fresh session") {
		t.Fatalf("concurrent map writes: %+v", e)
	}
	t.Logf("concurrent map writes became an error after %v", time.Since(start))
	out = &recordingOutput{}
	if v, err := value("count", out); err != nil || v != "1" || out.String() != "" {
		t.Errorf("after the reset: count = %q, %v, streams %q; want 1 from a fresh session", v, err, out.String())
	}

	// A death between cells is told at the start of the next cell.
	if _, err := value("panic later", &recordingOutput{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	out = &recordingOutput{}
	if v, err := value("count", out); err != nil || v != "1" || !strings.Contains(out.String(), "stderr:The Go session was reset between cells: panic: boom") {
		t.Errorf("after a death between cells: count = %q, %v, streams %q", v, err, out.String())
	}
	if !strings.Contains(logs.String(), "died: panic: boom") {
		t.Errorf("the death is not logged: %q", logs.String())
	}
}

func TestSupervisorStartFailure(t *testing.T) {
	s := newSupervisor("/nonexistent/harmonium", io.Discard, io.Discard, log.New(io.Discard, "", 0))
	defer s.Close()
	r := s.Execute(context.Background(), "1", kernel.ExecOptions{}, &recordingOutput{})
	if r.Err == nil || r.Err.Name != "StartupError" || !strings.Contains(r.Err.Value, "/nonexistent/harmonium") {
		t.Errorf("start failure: %+v", r.Err)
	}
	if st, _ := s.IsComplete("func f() {"); st != "incomplete" {
		t.Errorf("IsComplete without an executor = %q", st)
	}
}

func TestDeathCause(t *testing.T) {
	for _, c := range []struct {
		tail, want string
		err        error
	}{
		{"fatal error: concurrent map writes\n\ngoroutine 5 [running]:\n", "fatal error: concurrent map writes", errors.New("exit status 2")},
		{"runtime: goroutine stack exceeds 1000000000-byte limit\nruntime: sp=0xc\nfatal error: stack overflow\n", "fatal error: stack overflow (goroutine stack exceeds 1000000000-byte limit)", errors.New("exit status 2")},
		{"panic: boom\n\ngoroutine 7:\n", "panic: boom", errors.New("exit status 2")},
		{"", "it was killed (signal: killed), perhaps by the system's out-of-memory killer", errors.New("signal: killed")},
		{"bye\n", "the executor exited: exit status 0", nil},
	} {
		if got := deathCause(c.tail, c.err); got != c.want {
			t.Errorf("deathCause(%q) = %q, want %q", c.tail, got, c.want)
		}
	}
}

func TestTailWriter(t *testing.T) {
	var copy strings.Builder
	w := &tailWriter{max: 16, w: &copy}
	fmt.Fprint(w, "first line\nsecond line\nthird\n")
	if got := w.String(); got != "third\n" {
		t.Errorf("tail = %q, want the last whole lines within 16 bytes", got)
	}
	if copy.String() != "first line\nsecond line\nthird\n" {
		t.Errorf("copy = %q", copy.String())
	}
}

// BenchmarkSupervisorExecute measures what the executor process adds to a
// cell: a request frame, a result frame and their JSON, through two pipes.
func BenchmarkSupervisorExecute(b *testing.B) {
	b.Setenv("HARMONIUM_TEST_EXECUTOR", "1")
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	s := newSupervisor(exe, io.Discard, io.Discard, log.New(io.Discard, "", 0))
	defer s.Close()
	out := &recordingOutput{}
	s.Execute(context.Background(), "count", kernel.ExecOptions{}, out) // started
	b.ResetTimer()
	for range b.N {
		if r := s.Execute(context.Background(), "count", kernel.ExecOptions{}, out); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}
