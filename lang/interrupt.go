package lang

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"sync"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/traefik/yaegi/interp"
)

// This file runs compiled programs of a cell, one at a time, so that an
// interrupt stops them and an interrupted cell never runs again.
//
// yaegi stops interpreted code by a run id: every frame carries the id it was
// created under, interpreted code runs while its frame's id is the
// interpreter's, and stopping increments the interpreter's id. Top-level
// statements run in the interpreter's one root frame, whose id each
// Execute resets to the current one. So an interrupted program that is
// inside a compiled call ignoring its context (time.Sleep, a native loop)
// goes on when that call returns if another Execute has started meanwhile:
// the rest of the interrupted cell ran inside the next cell, printing there
// and assigning its variables. yaegi's ExecuteWithContext also returns on
// cancel while its own goroutine later writes the same result variables,
// a data race.
//
// Here a program runs on a goroutine of the session's; an interrupt stops
// it through yaegi's own stop, and the cell waits for it up to
// interruptGrace. A program still running then (inside a compiled call) is
// abandoned: its cell reports Interrupted, its later output is discarded,
// and the next use of the interpreter waits until the program has ended.
// Until then no Execute resets the root frame's id, so the abandoned
// program stops at the first interpreted step after the compiled call
// returns: none of its further statements runs. And no two programs ever
// run at once in the interpreter, which is what makes the session free of
// data races in the interpreter.

// interruptGrace is how long an interrupted program may take to stop before
// its cell is abandoned: short enough that the interrupt is answered within
// a second.
const interruptGrace = 500 * time.Millisecond

// interpStop is yaegi's (*Interpreter).stop: it increments the run id, so
// that interpreted code of the running program stops at its next step, and
// closes the channel blocked channel operations of that program select on.
// It is what ExecuteWithContext calls on cancel; calling it directly lets
// the session run the program on a goroutine whose end it can wait for. It
// may be called once per armed run (see arm).
//
//go:linkname interpStop github.com/traefik/yaegi/interp.(*Interpreter).stop
func interpStop(*interp.Interpreter)

// execution is one program running in the interpreter.
type execution struct {
	cell    int           // the cell it belongs to
	done    chan struct{} // closed when the program's goroutine has ended
	stopped chan struct{} // closed once the program can no longer go on after an interrupt (or has ended)
	res     reflect.Value // valid after done
	err     error         // valid after done
}

// lateOutput replaces the Output of an abandoned cell: what the cell's
// compiled call still prints or displays is counted and discarded, so that
// it never appears in another cell.
type lateOutput struct {
	mu    sync.Mutex
	bytes int
	items int
}

func (o *lateOutput) count(n int) {
	o.mu.Lock()
	o.bytes += n
	o.items++
	o.mu.Unlock()
}

// Stream implements Output.
func (o *lateOutput) Stream(_, text string) { o.count(len(text)) }

// Display implements Output.
func (o *lateOutput) Display(_, _, _ map[string]any, _ bool) { o.count(0) }

// ClearOutput implements Output.
func (o *lateOutput) ClearOutput(bool) {}

// Input implements Output: an abandoned cell gets no input.
func (o *lateOutput) Input(string, bool) (string, error) {
	return "", fmt.Errorf("stdin: the cell was interrupted: %w", errInterrupted)
}

// abandonedCell is a cell whose program still runs after its interrupt.
type abandonedCell struct {
	x    *execution
	late *lateOutput
}

// arm prepares the interpreter for a run that interpStop can stop: yaegi's
// ExecuteWithContext makes the channel stop closes; running an empty
// program with a context that is never cancelled does only that.
func (s *Session) arm() error {
	if s.empty == nil {
		p, err := s.in.Compile(inCell(""))
		if err != nil {
			return fmt.Errorf("compiling the empty program: %w", err)
		}
		s.empty = p
	}
	if _, err := s.in.ExecuteWithContext(context.Background(), s.empty); err != nil {
		return fmt.Errorf("preparing the interpreter to run a cell: %w", err)
	}
	return nil
}

// runState is how a program's run ended.
type runState int

const (
	ran       runState = iota // the program ended by itself: its results count
	stopped                   // an interrupt stopped it within interruptGrace
	abandoned                 // an interrupt came and it still runs (in a compiled call)
)

// run executes prog on a goroutine of its own; when ctx is cancelled it
// stops it and waits up to interruptGrace for it to end. The results of x
// are valid when the state is ran.
func (s *Session) run(ctx context.Context, cell int, prog *interp.Program) (*execution, runState, error) {
	x := &execution{cell: cell, done: make(chan struct{}), stopped: make(chan struct{})}
	if ctx.Err() != nil {
		return x, stopped, nil
	}
	if err := s.arm(); err != nil {
		return x, stopped, err
	}
	s.curMu.Lock()
	s.running = x
	s.curMu.Unlock()
	go func() {
		defer close(x.done) // also when a guard ends the goroutine (runtime.Goexit)
		x.res, x.err = s.in.Execute(prog)
	}()
	select {
	case <-x.done:
		close(x.stopped)
		return x, ran, nil
	case <-ctx.Done():
	}
	interpStop(s.in)
	close(x.stopped)
	select {
	case <-x.done:
		return x, stopped, nil
	case <-time.After(interruptGrace):
		return x, abandoned, nil
	}
}

// abandon records that cell c's program x still runs after its interrupt:
// its output from now on is discarded, and the interpreter waits for x
// before it is used again (awaitAbandoned).
func (s *Session) abandon(c *cell, x *execution) {
	late := &lateOutput{}
	s.curMu.Lock()
	c.out = late
	s.abandoned = &abandonedCell{x: x, late: late}
	s.curMu.Unlock()
}

// busy reports whether an abandoned program still runs in the interpreter.
func (s *Session) busy() bool {
	s.curMu.Lock()
	a := s.abandoned
	s.curMu.Unlock()
	if a == nil {
		return false
	}
	select {
	case <-a.x.done:
		return false
	default:
		return true
	}
}

// awaitAbandoned waits, telling out why, until the program of an abandoned
// cell has ended. It fails if ctx is cancelled first.
func (s *Session) awaitAbandoned(ctx context.Context, out Output) *Error {
	s.curMu.Lock()
	a := s.abandoned
	s.curMu.Unlock()
	if a == nil {
		return nil
	}
	select {
	case <-a.x.done:
	default:
		out.Stream("stderr", fmt.Sprintf("Waiting for cell %d to end: it was interrupted inside a compiled call that does not watch its context. "+
			"None of its further statements will run and its output is discarded; this cell runs once the call returns "+
			"(interrupt to stop waiting, restart the kernel to end it).\n", a.x.cell))
		select {
		case <-a.x.done:
		case <-ctx.Done():
			msg := fmt.Sprintf("%s: cell %d is still inside a compiled call; this cell did not run", errInterrupted, a.x.cell)
			return &Error{Name: "Interrupted", Value: msg, Traceback: []string{"Interrupted: " + msg}}
		}
	}
	// What the call printed before it returned is still in the pipes:
	// deliver it to the abandoned cell (which discards it) first.
	s.stdout.Sync()
	s.stderr.Sync()
	s.curMu.Lock()
	s.abandoned = nil
	s.curMu.Unlock()
	s.yerr.takeFrames()
	a.late.mu.Lock()
	bytes, items := a.late.bytes, a.late.items
	a.late.mu.Unlock()
	if items > 0 {
		out.Stream("stderr", fmt.Sprintf("(cell %d produced %d more outputs, %d bytes, after it was interrupted; they were discarded)\n", a.x.cell, items, bytes))
	}
	return nil
}

// interruptedError is the error of a cell whose program an interrupt stopped.
func interruptedError(cell int, abandoned bool) *Error {
	msg := errInterrupted.Error()
	if abandoned {
		msg = fmt.Sprintf("%s: cell %d is still running a compiled call that does not watch its context (pass ctx to long calls); "+
			"none of its further statements will run, and what it prints from now on is discarded", msg, cell)
	}
	return &Error{Name: "Interrupted", Value: msg, Traceback: []string{"Interrupted: " + msg}}
}

// sleep is time.Sleep for cells (the rewrite calls it for time.Sleep): it
// returns early when the running cell is interrupted, so that the most
// common long call a cell makes never leaves the cell abandoned.
//
// Woken by the interrupt, it returns only once the program has been stopped
// (see run), so that the statements after it never run.
func (s *Session) sleep(d time.Duration) {
	s.curMu.Lock()
	x := s.running
	s.curMu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctxVar.Done():
		if x != nil {
			<-x.stopped
		}
	}
}

// parenthesizeCallResults puts the call on the right of a top-level
// assignment `x = f(…)` in parentheses. yaegi v0.16.1 lets such a call
// store its result straight into x, within the step that makes the call,
// so an abandoned cell's compiled call assigned x when it returned, after
// the interrupt; a parenthesised call's result is assigned by a step of
// its own, which an abandoned program never reaches. (Definitions x := f()
// already take a step of their own; several results cannot be
// parenthesised, so a, b = f() of a compiled f still assigns.)
func parenthesizeCallResults(ed *editor, file *token.File, body *ast.BlockStmt) {
	for _, st := range body.List {
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			continue
		}
		if _, isCall := as.Rhs[0].(*ast.CallExpr); !isCall {
			continue
		}
		ed.insert(file.Offset(as.Rhs[0].Pos())-len(chunkPrefix), "(")
		ed.insert(file.Offset(as.Rhs[0].End())-len(chunkPrefix), ")")
	}
}
