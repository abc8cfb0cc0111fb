package lang

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"
)

// pipeCapture reads what is written to an *os.File pipe and delivers it,
// live, to a callback. Sync waits until everything written before it has been
// delivered, by writing a marker through the pipe.
//
// A cell may close the pipe's write end (os.Stdout.Close()); Revive then
// replaces the pipe, so that only the rest of that cell's output is lost.
// Write always goes to the current pipe: it is the interpreter's stable
// stdout, while File is what os.Stdout is set to during a cell.
type pipeCapture struct {
	deliver func(text string)
	syncMu  sync.Mutex // serialises Sync

	mu     sync.Mutex // guards the fields below
	r, w   *os.File
	synced chan struct{} // a marker was read
	done   chan struct{} // closed when the reader has seen the end of the pipe
}

// syncMarker cannot appear in text output by accident.
const syncMarker = "\x00\x1bharmonium-sync\x1b\x00"

func newPipeCapture(deliver func(string)) (*pipeCapture, error) {
	c := &pipeCapture{deliver: deliver}
	if err := c.startLocked(); err != nil {
		return nil, err
	}
	return c, nil
}

// startLocked opens a new pipe and starts its reader; c.mu is held or c is new.
func (c *pipeCapture) startLocked() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("capture: creating pipe: %w", err)
	}
	c.r, c.w = r, w
	c.synced, c.done = make(chan struct{}, 1), make(chan struct{})
	go c.loop(r, c.synced, c.done)
	return nil
}

// File is the write end of the current pipe.
func (c *pipeCapture) File() *os.File {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w
}

// Write writes p to the current pipe.
func (c *pipeCapture) Write(p []byte) (int, error) { return c.File().Write(p) }

// Revive replaces the pipe if its write end was closed by a cell, after
// delivering what was written before the close.
func (c *pipeCapture) Revive() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(nil); !errors.Is(err, os.ErrClosed) {
		return nil
	}
	<-c.done
	c.r.Close()
	return c.startLocked()
}

func (c *pipeCapture) loop(r *os.File, synced, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 32*1024)
	var pending []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.Index(pending, []byte(syncMarker))
				if i < 0 {
					break
				}
				if i > 0 {
					c.deliver(string(pending[:i]))
				}
				pending = pending[i+len(syncMarker):]
				synced <- struct{}{}
			}
			// Hold back a possible beginning of the marker.
			keep := 0
			for k := min(len(pending), len(syncMarker)-1); k > 0; k-- {
				if bytes.HasSuffix(pending, []byte(syncMarker[:k])) {
					keep = k
					break
				}
			}
			if len(pending) > keep {
				c.deliver(string(pending[:len(pending)-keep]))
				pending = append(pending[:0], pending[len(pending)-keep:]...)
			}
		}
		if err != nil {
			if len(pending) > 0 {
				c.deliver(string(pending))
			}
			return
		}
	}
}

// Sync returns once all output written before the call has been delivered
// (or after a second, if the reader is stuck).
func (c *pipeCapture) Sync() {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	w, synced, done := c.w, c.synced, c.done
	c.mu.Unlock()
	if _, err := w.WriteString(syncMarker); err != nil {
		synced = nil // closed by the cell: the reader ends after delivering the rest
	}
	select {
	case <-synced:
	case <-done:
	case <-time.After(time.Second):
	}
}

// Close stops the capture after delivering pending output.
func (c *pipeCapture) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Close()
	<-c.done
	c.r.Close()
}

// framePattern matches the lines yaegi prints on its error stream while a
// panic unwinds interpreted frames, e.g. "cell:3:5: panic: main.f(...)".
var framePattern = regexp.MustCompile(`^(\S*:)?\d+:\d+: panic: `)

// stderrSplitter is the interpreter's error stream: yaegi's panic frames are
// kept for the error report, everything else (the log package) is forwarded.
type stderrSplitter struct {
	mu      sync.Mutex
	frames  []string
	forward func(string)
	partial []byte
}

func (s *stderrSplitter) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.partial = append(s.partial, p...)
	var out []string
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		line := string(s.partial[:i+1])
		s.partial = s.partial[i+1:]
		if framePattern.MatchString(line) {
			s.frames = append(s.frames, line[:len(line)-1])
		} else {
			out = append(out, line)
		}
	}
	s.mu.Unlock()
	for _, l := range out {
		s.forward(l)
	}
	return len(p), nil
}

// takeFrames returns and forgets the panic frames collected so far.
func (s *stderrSplitter) takeFrames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.frames
	s.frames = nil
	if len(s.partial) > 0 {
		s.forward(string(s.partial))
		s.partial = nil
	}
	return f
}
