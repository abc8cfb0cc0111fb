package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/harmonium-rbm/harmonium/kernel"
	"github.com/harmonium-rbm/harmonium/lang"
)

// The file descriptors on which `harmonium executor` reads requests and
// writes frames (the supervisor passes them as its first extra files).
const (
	requestFD = 3
	frameFD   = 4
)

func init() {
	// Hidden: started by `harmonium kernel`, not by users (usage does not list it).
	subcommands["executor"] = subcommand{run: executorCommand, usage: "executor                      (internal) run cells for harmonium kernel"}
}

// executorCommand is the child process of `harmonium kernel`: it runs the
// cells in a lang session and talks to its parent over the executor protocol.
func executorCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: harmonium executor (started by harmonium kernel, with its pipes on fds 3 and 4)")
		return 2
	}
	req, out := os.NewFile(requestFD, "executor requests"), os.NewFile(frameFD, "executor frames")
	for _, f := range []*os.File{req, out} {
		if _, err := f.Stat(); err != nil {
			fmt.Fprintf(stderr, "harmonium executor: %s (fd %d) is not open: this command is started by harmonium kernel\n", f.Name(), f.Fd())
			return 2
		}
	}
	// Interrupts come as frames; a SIGINT sent to the whole process group
	// (a terminal's Ctrl-C) must not kill the session.
	signal.Ignore(os.Interrupt)
	lang.SetProcessLimits()
	w := &frameWriter{w: out}
	x := newExecutor()
	ready := frame{Op: opReady}
	if e, ok := x.(*executor); ok && e.err != nil {
		ready.Err = e.err.Error()
	}
	if err := w.send(ready); err != nil {
		fmt.Fprintf(stderr, "harmonium executor: %v\n", err)
		return 1
	}
	if err := serveExecutor(x, req, w); err != nil {
		fmt.Fprintf(stderr, "harmonium executor: %v\n", err)
		return 1
	}
	return 0 // the supervisor closed the request pipe
}

// serveExecutor answers the requests read from r with x until r ends.
// Cells run one at a time (the kernel serialises them); the loop keeps
// reading meanwhile, for interrupts, input replies and completions.
func serveExecutor(x kernel.Executor, r io.Reader, w *frameWriter) error {
	dec := newFrameDecoder(r)
	var (
		mu     sync.Mutex
		cancel context.CancelFunc // of the running cell
	)
	inputs := make(chan frame, 1)
	for {
		var f frame
		if err := dec.Decode(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a request: %w", err)
		}
		switch f.Op {
		case opExecute:
			if f.Opts == nil {
				f.Opts = &kernel.ExecOptions{}
			}
			ctx, stop := context.WithCancel(context.Background())
			mu.Lock()
			cancel = stop
			mu.Unlock()
			go func(f frame) {
				res := x.Execute(ctx, f.Code, *f.Opts, &remoteOutput{w: w, inputs: inputs, ctx: ctx})
				mu.Lock()
				cancel = nil
				mu.Unlock()
				stop()
				if err := w.send(frame{Op: opResult, ID: f.ID, Exec: &res}); err != nil {
					// The bundle cannot travel (e.g. a NaN in JSON data): report that instead.
					msg := fmt.Sprintf("the cell's result cannot be sent to the kernel: %v", err)
					w.send(frame{Op: opResult, ID: f.ID, Exec: &kernel.ExecResult{Err: &kernel.ExecError{Name: "EncodingError", Value: msg, Traceback: []string{"EncodingError: " + msg}}}})
				}
			}(f)
		case opInterrupt:
			mu.Lock()
			if cancel != nil {
				cancel()
			}
			mu.Unlock()
		case opInputReply:
			select {
			case inputs <- f:
			default: // nobody asked any more (the cell was interrupted)
			}
		case opComplete:
			go func(f frame) {
				c := x.Complete(f.Code, f.Cursor)
				w.send(frame{Op: opResult, ID: f.ID, Completion: &c})
			}(f)
		case opInspect:
			go func(f frame) {
				data, found := x.Inspect(f.Code, f.Cursor, f.Detail)
				if err := w.send(frame{Op: opResult, ID: f.ID, Data: data, Found: found}); err != nil {
					w.send(frame{Op: opResult, ID: f.ID})
				}
			}(f)
		default:
			return fmt.Errorf("unknown request %q", f.Op)
		}
	}
}

// remoteOutput is the kernel.Output of a cell in the executor: it sends what
// the cell produces to the supervisor as frames.
type remoteOutput struct {
	w      *frameWriter
	inputs chan frame
	ctx    context.Context
}

// Stream implements kernel.Output.
func (o *remoteOutput) Stream(name, text string) {
	o.w.send(frame{Op: opStream, Name: name, Text: text})
}

// Display implements kernel.Output.
func (o *remoteOutput) Display(data, metadata, transient map[string]any, update bool) {
	if err := o.w.send(frame{Op: opDisplay, Data: data, Metadata: metadata, Transient: transient, Update: update}); err != nil {
		o.Stream("stderr", fmt.Sprintf("display: %v\n", err))
	}
}

// ClearOutput implements kernel.Output.
func (o *remoteOutput) ClearOutput(wait bool) { o.w.send(frame{Op: opClear, Wait: wait}) }

// Input implements kernel.Output: the supervisor asks the front end.
func (o *remoteOutput) Input(prompt string, password bool) (string, error) {
	select { // a reply that came after an earlier prompt was interrupted
	case <-o.inputs:
	default:
	}
	if err := o.w.send(frame{Op: opInput, Prompt: prompt, Password: password}); err != nil {
		return "", err
	}
	select {
	case f := <-o.inputs:
		if f.Err != "" {
			return "", errors.New(f.Err)
		}
		return f.Text, nil
	case <-o.ctx.Done():
		return "", fmt.Errorf("stdin: input interrupted: %w", o.ctx.Err())
	}
}
