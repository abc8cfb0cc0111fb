package lang

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"
)

// pipeCapture reads what is written to an *os.File pipe and delivers it,
// live, to a callback. Sync waits until everything written before it has been
// delivered, by writing a marker through the pipe.
type pipeCapture struct {
	r, w    *os.File
	deliver func(text string)
	synced  chan struct{}
	mu      sync.Mutex // serialises Sync
	done    chan struct{}
}

// syncMarker cannot appear in text output by accident.
const syncMarker = "\x00\x1bharmonium-sync\x1b\x00"

func newPipeCapture(deliver func(string)) (*pipeCapture, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("capture: creating pipe: %w", err)
	}
	c := &pipeCapture{r: r, w: w, deliver: deliver, synced: make(chan struct{}, 1), done: make(chan struct{})}
	go c.loop()
	return c, nil
}

func (c *pipeCapture) loop() {
	defer close(c.done)
	buf := make([]byte, 32*1024)
	var pending []byte
	for {
		n, err := c.r.Read(buf)
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
				c.synced <- struct{}{}
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.WriteString(syncMarker); err != nil {
		return
	}
	select {
	case <-c.synced:
	case <-time.After(time.Second):
	}
}

// Close stops the capture after delivering pending output.
func (c *pipeCapture) Close() {
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
