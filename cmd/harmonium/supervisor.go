package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/harmonium-rbm/harmonium/kernel"
	"github.com/harmonium-rbm/harmonium/lang"
)

// supervisor is the kernel.Executor of `harmonium kernel`: it runs cells in a
// child process (`harmonium executor`) and keeps the Jupyter side alive when
// that child dies of a fault the Go runtime cannot recover (concurrent map
// writes, running out of memory, a stack overflow through compiled code).
// The cell that was running gets an error saying that the session was reset
// and why; a new child is started at once, so the next cell runs in a fresh
// session. A death between cells is reported at the start of the next one.
type supervisor struct {
	spawn func() (*child, error) // starts an executor process
	log   *log.Logger

	mu     sync.Mutex
	cur    *child // nil before the first start and after Close
	notice string // why the session was reset while no cell ran, for the next cell
	closed bool
}

// newSupervisor returns a supervisor starting `exe executor` children, whose
// standard output goes to stdout and standard error to stderr (the kernel's
// log). The first child starts at once, so its interpreter loads while the
// front end connects.
func newSupervisor(exe string, stdout, stderr io.Writer, logger *log.Logger) *supervisor {
	s := &supervisor{log: logger, spawn: func() (*child, error) { return startChild(exe, stdout, stderr) }}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.current(); err != nil {
		logger.Printf("%v (the first cell tries again)", err)
	}
	return s
}

// child is one executor process and the state of its protocol.
type child struct {
	cmd  *exec.Cmd
	req  io.Closer // the request pipe: closing it ends the child
	w    *frameWriter
	tail *tailWriter // the end of the child's stderr, for the cause of a death

	ready    chan struct{} // closed on the ready frame, or when the child dies before it
	started  bool          // the ready frame came (set before ready is closed)
	readyErr string        // the interpreter could not start
	dead     chan struct{} // closed once the process has exited and been reaped
	cause    string        // why it died (set before dead is closed)

	mu            sync.Mutex
	nextID        uint64
	waiting       map[uint64]chan frame // request id -> where its result goes
	out           kernel.Output         // the running (or last) cell's output
	executing     bool                  // a cell is running
	diedExecuting bool                  // it died while a cell was running
}

// startChild starts `exe executor` with its request and frame pipes on
// fds 3 and 4.
func startChild(exe string, stdout, stderr io.Writer) (*child, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("executor: request pipe: %w", err)
	}
	frR, frW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, fmt.Errorf("executor: frame pipe: %w", err)
	}
	tail := &tailWriter{max: 64 << 10, w: stderr}
	cmd := exec.Command(exe, "executor")
	cmd.ExtraFiles = []*os.File{reqR, frW} // fds 3 and 4: requestFD, frameFD
	cmd.Stdout, cmd.Stderr = stdout, tail
	// A shell escape's background process keeping stderr open must not keep
	// the death of the executor from being noticed.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	reqR.Close()
	frW.Close()
	if err != nil {
		reqW.Close()
		frR.Close()
		return nil, fmt.Errorf("executor: starting %s executor: %w", exe, err)
	}
	c := &child{cmd: cmd, req: reqW, w: &frameWriter{w: reqW}, tail: tail,
		ready: make(chan struct{}), dead: make(chan struct{}), waiting: map[uint64]chan frame{}}
	go c.read(frR, func() error { return cmd.Wait() })
	return c, nil
}

// read dispatches the child's frames until its pipe ends, then reaps it
// (wait) and records why it died.
func (c *child) read(r io.ReadCloser, wait func() error) {
	dec := newFrameDecoder(r)
	readyOnce := sync.OnceFunc(func() { close(c.ready) })
	for {
		var f frame
		if err := dec.Decode(&f); err != nil {
			break
		}
		switch f.Op {
		case opReady:
			c.started, c.readyErr = true, f.Err
			readyOnce()
		case opStream, opDisplay, opClear:
			if out := c.output(); out != nil {
				switch f.Op {
				case opStream:
					out.Stream(f.Name, f.Text)
				case opDisplay:
					out.Display(f.Data, f.Metadata, f.Transient, f.Update)
				default:
					out.ClearOutput(f.Wait)
				}
			}
		case opInput:
			go c.input(f)
		case opResult:
			c.mu.Lock()
			ch := c.waiting[f.ID]
			delete(c.waiting, f.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- f
			}
		}
	}
	r.Close()
	err := wait()
	c.cause = deathCause(c.tail.String(), err)
	c.mu.Lock()
	c.diedExecuting = c.executing
	c.mu.Unlock()
	readyOnce()
	close(c.dead)
}

// input asks the running cell's front end for a line and sends the answer.
func (c *child) input(f frame) {
	reply := frame{Op: opInputReply}
	if out := c.output(); out == nil {
		reply.Err = "stdin: no cell is running"
	} else if text, err := out.Input(f.Prompt, f.Password); err != nil {
		reply.Err = err.Error()
	} else {
		reply.Text = text
	}
	c.w.send(reply)
}

func (c *child) output() kernel.Output {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out
}

func (c *child) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// call sends a request and returns the channel its result will arrive on.
func (c *child) call(f frame) (<-chan frame, error) {
	ch := make(chan frame, 1)
	c.mu.Lock()
	c.nextID++
	f.ID = c.nextID
	c.waiting[f.ID] = ch
	c.mu.Unlock()
	if err := c.w.send(f); err != nil {
		c.mu.Lock()
		delete(c.waiting, f.ID)
		c.mu.Unlock()
		return nil, err
	}
	return ch, nil
}

// await returns the result on ch, or false if the child died first.
func (c *child) await(ch <-chan frame) (frame, bool) {
	select {
	case f := <-ch:
		return f, true
	case <-c.dead:
		select { // the result may have come just before the end
		case f := <-ch:
			return f, true
		default:
			return frame{}, false
		}
	}
}

// current returns the running child, starting one if there is none or it
// died; s.mu is held.
func (s *supervisor) current() (*child, error) {
	if s.closed {
		return nil, errors.New("the kernel is shutting down")
	}
	if s.cur != nil && !s.cur.isDead() {
		return s.cur, nil
	}
	c, err := s.spawn()
	if err != nil {
		s.cur = nil
		return nil, err
	}
	s.cur = c
	go s.watch(c)
	return c, nil
}

// watch restarts the executor when c dies after having started, so that the
// next cell does not wait for a new interpreter to load.
func (s *supervisor) watch(c *child) {
	<-c.dead
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != c || s.closed {
		return
	}
	s.log.Printf("executor process %d died: %s", c.cmd.Process.Pid, c.cause)
	if !c.started || c.readyErr != "" {
		s.cur = nil // it never came up: the next request tries again and reports why
		return
	}
	if !c.diedExecuting {
		s.notice = "The Go session was reset between cells: " + c.cause + ". Variables, functions, types and imports of earlier cells are gone.\n"
	}
	if _, err := s.current(); err != nil {
		s.log.Printf("restarting the executor: %v", err)
	}
}

// ready returns a started child, waiting for its interpreter to load. A
// child that dies between being picked and being used is replaced once.
func (s *supervisor) ready(ctx context.Context) (*child, error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		c, err := s.current()
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-c.ready:
		case <-ctx.Done():
			return nil, errors.New("interrupted while the interpreter was starting")
		}
		switch {
		case c.readyErr != "":
			return nil, errors.New(c.readyErr)
		case !c.isDead():
			return c, nil
		case !c.started || attempt > 0:
			return nil, fmt.Errorf("the interpreter process failed to start: %s", c.cause)
		}
	}
}

// Execute implements kernel.Executor.
func (s *supervisor) Execute(ctx context.Context, code string, opts kernel.ExecOptions, out kernel.Output) kernel.ExecResult {
	c, err := s.ready(ctx)
	if err != nil {
		name, msg := "StartupError", err.Error()
		if ctx.Err() != nil {
			name = "Interrupted"
		}
		return kernel.ExecResult{Err: &kernel.ExecError{Name: name, Value: msg, Traceback: []string{name + ": " + msg}}}
	}
	s.mu.Lock()
	notice := s.notice
	s.notice = ""
	s.mu.Unlock()
	if notice != "" {
		out.Stream("stderr", notice)
	}
	c.mu.Lock()
	c.out, c.executing = out, true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.executing = false
		c.mu.Unlock()
	}()
	ch, err := c.call(frame{Op: opExecute, Code: code, Opts: &opts})
	if err != nil {
		return kernel.ExecResult{Err: lostError(c, err)}
	}
	interrupted := ctx.Done()
	for {
		select {
		case <-interrupted:
			c.w.send(frame{Op: opInterrupt})
			interrupted = nil // once
		case f := <-ch:
			return execResult(f)
		case <-c.dead:
			if f, ok := c.await(ch); ok {
				return execResult(f)
			}
			return kernel.ExecResult{Err: resetError(c.cause, c.tail.String())}
		}
	}
}

func execResult(f frame) kernel.ExecResult {
	if f.Exec == nil {
		return kernel.ExecResult{}
	}
	return *f.Exec
}

// lostError is the error of a cell that could not be sent to c: c died (the
// pipe is broken) or, if it does not within two seconds, the pipe failed.
func lostError(c *child, err error) *kernel.ExecError {
	select {
	case <-c.dead:
		return resetError(c.cause, c.tail.String())
	case <-time.After(2 * time.Second):
		return &kernel.ExecError{Name: "ExecutorError", Value: err.Error(), Traceback: []string{"ExecutorError: " + err.Error()}}
	}
}

// resetError is the error of a cell whose executor died.
func resetError(cause, stderrTail string) *kernel.ExecError {
	value := "the Go session was reset: its process died (" + cause + "). " +
		"Variables, functions, types and imports of earlier cells are gone; the next cell runs in a fresh session."
	tb := []string{"SessionReset: " + value}
	if lines := fatalContext(stderrTail, 12); len(lines) > 0 {
		tb = append(tb, "", "The executor's last words:")
		tb = append(tb, lines...)
	}
	return &kernel.ExecError{Name: "SessionReset", Value: value, Traceback: tb}
}

// Complete implements kernel.Executor.
func (s *supervisor) Complete(code string, cursor int) kernel.Completion {
	empty := kernel.Completion{Matches: []string{}, Start: cursor, End: cursor}
	c, err := s.ready(context.Background())
	if err != nil {
		return empty
	}
	ch, err := c.call(frame{Op: opComplete, Code: code, Cursor: cursor})
	if err != nil {
		return empty
	}
	if f, ok := c.await(ch); ok && f.Completion != nil {
		return *f.Completion
	}
	return empty
}

// Inspect implements kernel.Executor.
func (s *supervisor) Inspect(code string, cursor, detailLevel int) (map[string]any, bool) {
	c, err := s.ready(context.Background())
	if err != nil {
		return nil, false
	}
	ch, err := c.call(frame{Op: opInspect, Code: code, Cursor: cursor, Detail: detailLevel})
	if err != nil {
		return nil, false
	}
	f, ok := c.await(ch)
	return f.Data, ok && f.Found
}

// IsComplete implements kernel.Executor. It needs no interpreter state, so it
// is answered here, even while the executor restarts.
func (s *supervisor) IsComplete(code string) (string, string) { return lang.IsComplete(code) }

// Close ends the executor: it closes the request pipe (the child exits when
// it sees the end) and kills the child if it has not exited within a second.
func (s *supervisor) Close() {
	s.mu.Lock()
	s.closed = true
	c := s.cur
	s.cur = nil
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.req.Close()
	select {
	case <-c.dead:
	case <-time.After(time.Second):
		c.cmd.Process.Kill()
		<-c.dead
	}
}

// deathCause says why an executor process ended, from the end of its stderr
// (the Go runtime's "fatal error: …" or an unrecovered "panic: …") and its
// exit status.
func deathCause(stderrTail string, waitErr error) string {
	var fatal, stack string
	for _, l := range strings.Split(stderrTail, "\n") {
		switch {
		case strings.HasPrefix(l, "runtime: goroutine stack exceeds"):
			stack = l
		case fatal == "" && (strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ")):
			fatal = l
		}
	}
	status := "exit status 0"
	if waitErr != nil {
		status = waitErr.Error() // "exit status 2", "signal: killed"
	}
	switch {
	case fatal != "" && stack != "":
		return fatal + " (" + strings.TrimPrefix(stack, "runtime: ") + ")"
	case fatal != "":
		return fatal
	case strings.Contains(status, "signal: killed"):
		return "it was killed (" + status + "), perhaps by the system's out-of-memory killer"
	}
	return "the executor exited: " + status
}

// fatalContext returns up to n lines of stderrTail from the runtime's fatal
// message (or panic) on: the message and the stack of the goroutine at fault.
func fatalContext(stderrTail string, n int) []string {
	lines := strings.Split(stderrTail, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") {
			return lines[i:min(len(lines), i+n)]
		}
	}
	return nil
}

// tailWriter copies to w and keeps the last max bytes written.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
	w   io.Writer
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.mu.Unlock()
	if t.w != nil {
		t.w.Write(p)
	}
	return len(p), nil
}

// String returns the kept bytes, starting at a line boundary.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) == t.max {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
