package lang

import (
	"io"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/traefik/yaegi/interp"
)

// stdinReader is the standard input of cells: both what fmt.Scan and its
// siblings read (yaegi binds them to the interpreter's Stdin) and the value
// of os.Stdin in cells, so that bufio.NewReader(os.Stdin), bufio.Scanner,
// io.ReadAll and fmt.Fscan(os.Stdin, …) read the same lines. Each read that
// finds no buffered input asks the running cell's front end for a line
// (input_request in Jupyter), after the output printed before it has been
// delivered, so that the front end can show the unfinished last line as the
// prompt. It reads EOF when no cell runs or the front end does not accept
// input.
//
// os.Stdin is an *os.File in Go; in cells it is this reader, which has the
// methods programs use on standard input (Read, Close, Name, and Stat, which
// describes an interactive terminal), so `var f *os.File = os.Stdin` does
// not compile in a cell.
type stdinReader struct {
	s *Session

	mu  sync.Mutex // serialises reads from the cell's goroutines
	buf []byte     // the rest of the last line the front end sent
}

// Read implements io.Reader.
func (r *stdinReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == 0 {
		_, out := r.s.currentOut()
		if out == nil {
			return 0, io.EOF
		}
		r.s.stderr.Sync()
		r.s.stdout.Sync() // the prompt is what the cell printed last
		line, err := out.Input("", false)
		if err != nil {
			return 0, io.EOF
		}
		r.buf = []byte(line + "\n")
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Close drops the rest of the line already received; later reads ask the
// front end again, as a program started anew would.
func (r *stdinReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = nil
	return nil
}

// Name returns the name of the standard input, as (*os.File).Name does.
func (r *stdinReader) Name() string { return "/dev/stdin" }

// Stat describes the standard input as a character device, what programs
// test to tell a person typing from piped input: input comes from a person.
func (r *stdinReader) Stat() (os.FileInfo, error) { return stdinInfo{}, nil }

// stdinInfo is the os.FileInfo of the cells' standard input.
type stdinInfo struct{}

func (stdinInfo) Name() string       { return "stdin" }
func (stdinInfo) Size() int64        { return 0 }
func (stdinInfo) Mode() os.FileMode  { return os.ModeDevice | os.ModeCharDevice | 0o620 }
func (stdinInfo) ModTime() time.Time { return time.Time{} }
func (stdinInfo) IsDir() bool        { return false }
func (stdinInfo) Sys() any           { return nil }

// stdinExports binds os.Stdin in cells to r. The executor's own standard
// input is not the user's (it is /dev/null under the kernel), so leaving
// os.Stdin as it is would make every read return EOF at once.
func stdinExports(r *stdinReader) interp.Exports {
	return interp.Exports{"os/os": {"Stdin": reflect.ValueOf(&r).Elem()}}
}
