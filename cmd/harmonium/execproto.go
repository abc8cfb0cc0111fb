package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/harmonium-rbm/harmonium/kernel"
)

// The executor protocol: `harmonium kernel` (the supervisor, which owns the
// Jupyter sockets) and its child `harmonium executor` (which runs the cells)
// exchange frames, one JSON object per line, over two pipes. The supervisor
// sends execute, complete, inspect, interrupt and input_reply frames; the
// executor sends ready once its interpreter is loaded, then stream, display,
// clear and input frames while a cell runs, and one result frame per request
// (matched by id).
const (
	opReady      = "ready"
	opExecute    = "execute"
	opComplete   = "complete"
	opInspect    = "inspect"
	opInterrupt  = "interrupt"
	opInputReply = "input_reply"
	opStream     = "stream"
	opDisplay    = "display"
	opClear      = "clear"
	opInput      = "input"
	opResult     = "result"
)

// frame is one message of the executor protocol; Op says which fields are set.
type frame struct {
	Op string `json:"op"`
	ID uint64 `json:"id,omitempty"` // request id, echoed by its result

	// execute, complete, inspect
	Code   string              `json:"code,omitempty"`
	Cursor int                 `json:"cursor,omitempty"` // code points
	Detail int                 `json:"detail,omitempty"` // inspect's detail_level
	Opts   *kernel.ExecOptions `json:"opts,omitempty"`

	// stream (Name, Text), display, clear (Wait), input (Prompt, Password),
	// input_reply (Text, Err), ready (Err: the interpreter failed to start)
	Name      string         `json:"name,omitempty"`
	Text      string         `json:"text,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Transient map[string]any `json:"transient,omitempty"`
	Update    bool           `json:"update,omitempty"`
	Wait      bool           `json:"wait,omitempty"`
	Prompt    string         `json:"prompt,omitempty"`
	Password  bool           `json:"password,omitempty"`
	Err       string         `json:"err,omitempty"`

	// result: one of these, by the request's op
	Exec       *kernel.ExecResult `json:"exec,omitempty"`
	Completion *kernel.Completion `json:"completion,omitempty"`
	Found      bool               `json:"found,omitempty"` // inspect: Data holds the bundle
}

// frameWriter sends frames on a pipe; it is safe for concurrent use.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// send writes f as one line. A frame that cannot be encoded (a NaN in a
// display bundle, say) is an error of the caller and nothing is written.
func (fw *frameWriter) send(f frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("executor protocol: encoding a %s frame: %w", f.Op, err)
	}
	b = append(b, '\n')
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if _, err := fw.w.Write(b); err != nil {
		return fmt.Errorf("executor protocol: sending a %s frame: %w", f.Op, err)
	}
	return nil
}

// newFrameDecoder reads frames; numbers stay json.Number so that integers in
// display bundles and metadata reach the front end unchanged.
func newFrameDecoder(r io.Reader) *json.Decoder {
	d := json.NewDecoder(r)
	d.UseNumber()
	return d
}
