package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// cellOutput publishes what a running cell produces, with the execute_request
// as parent header. It implements Output.
//
// Stream text is coalesced: it is sent when streamFlushDelay has passed since
// the first unsent chunk, when streamFlushSize bytes are waiting, before any
// other output of the cell, and when the cell ends. A loop printing 100,000
// lines thus sends a few dozen messages instead of 100,000.
//
// The unterminated last line of stdout is held back for up to promptHold: if
// the cell then reads stdin, that text ("Name: ") becomes the input_request's
// prompt, so the front end shows it beside the input box rather than in a
// stream message that may arrive after the box.
type cellOutput struct {
	k          *Kernel
	req        *Message
	silent     bool
	allowStdin bool
	ctx        context.Context

	mu        sync.Mutex      // orders the cell's outputs; guards the fields below
	name      string          // the stream of the text in buf
	buf       strings.Builder // stream text not sent yet
	timer     *time.Timer     // sends buf after streamFlushDelay
	tailSince time.Time       // when the unterminated last line in buf began
	published time.Time       // when the cell's last output was published
}

// publishLocked publishes one output of the cell on iopub; o.mu is held.
func (o *cellOutput) publishLocked(msgType string, content map[string]any) {
	o.k.publish(o.req, msgType, content)
	o.published = time.Now()
}

// Stream text coalescing bounds.
const (
	streamFlushDelay = 50 * time.Millisecond
	streamFlushSize  = 64 << 10
	promptHold       = 250 * time.Millisecond
)

// inputSettle bounds how long an input_request waits for the output
// published before it to be sent. inputGrace is how long after that output
// it is sent at the earliest: a front end's server relays iopub and stdin
// from separate sockets, and an output relayed after the request would be
// drawn below the input box.
const (
	inputSettle = 200 * time.Millisecond
	inputGrace  = 200 * time.Millisecond
)

func (o *cellOutput) Stream(name, text string) {
	if o.silent || text == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buf.Len() > 0 && name != o.name {
		o.flushLocked()
	}
	if o.buf.Len() == 0 || strings.Contains(text, "\n") {
		o.tailSince = time.Now()
	}
	o.name = name
	o.buf.WriteString(text)
	switch {
	case o.buf.Len() >= streamFlushSize:
		o.flushLocked()
	case o.timer == nil:
		o.timer = time.AfterFunc(streamFlushDelay, o.timedFlush)
	}
}

// timedFlush sends the buffered text when its delay has passed, except an
// unterminated stdout line younger than promptHold, which waits for the rest.
func (o *cellOutput) timedFlush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timer = nil
	text := o.buf.String()
	lines := strings.LastIndexByte(text, '\n') + 1
	wait := promptHold - time.Since(o.tailSince)
	if o.name != "stdout" || lines == len(text) || wait <= 0 {
		o.flushLocked()
		return
	}
	if lines > 0 {
		o.publishLocked("stream", map[string]any{"name": o.name, "text": text[:lines]})
		o.buf.Reset()
		o.buf.WriteString(text[lines:])
	}
	o.timer = time.AfterFunc(wait, o.timedFlush)
}

// takePromptLocked removes the unterminated last line of buffered stdout
// and returns it.
func (o *cellOutput) takePromptLocked() string {
	if o.name != "stdout" {
		return ""
	}
	text := o.buf.String()
	lines := strings.LastIndexByte(text, '\n') + 1
	o.buf.Reset()
	o.buf.WriteString(text[:lines])
	return text[lines:]
}

// flush sends the buffered stream text, if any.
func (o *cellOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
}

func (o *cellOutput) flushLocked() {
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	if o.buf.Len() == 0 {
		return
	}
	o.publishLocked("stream", map[string]any{"name": o.name, "text": o.buf.String()})
	o.buf.Reset()
}

func (o *cellOutput) Display(data, metadata, transient map[string]any, update bool) {
	if o.silent {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	if metadata == nil {
		metadata = map[string]any{}
	}
	if transient == nil {
		transient = map[string]any{}
	}
	t := "display_data"
	if update {
		t = "update_display_data"
	}
	o.publishLocked(t, map[string]any{"data": data, "metadata": metadata, "transient": transient})
}

func (o *cellOutput) ClearOutput(wait bool) {
	if o.silent {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	o.publishLocked("clear_output", map[string]any{"wait": wait})
}

// errStdinNotAllowed is returned by Input when the frontend does not accept input requests.
var errStdinNotAllowed = errors.New("stdin: this frontend does not support input requests")

// Input implements Output. Without a prompt of its own (fmt.Scan,
// bufio.Reader on os.Stdin), the unterminated line the cell printed last is
// the prompt. The output before it is sent first.
func (o *cellOutput) Input(prompt string, password bool) (string, error) {
	if !o.allowStdin {
		return "", errStdinNotAllowed
	}
	o.mu.Lock()
	if prompt == "" {
		prompt = o.takePromptLocked()
	}
	o.flushLocked()
	last := o.published
	o.mu.Unlock()
	k := o.k
	k.iopub.Settle(inputSettle)
	if wait := inputGrace - time.Since(last); wait > 0 {
		time.Sleep(wait)
	}
	k.inputMu.Lock()
	defer k.inputMu.Unlock()
	select { // drop a stale reply
	case <-k.inputs:
	default:
	}
	k.send(k.stdin, o.req, "input_request", map[string]any{"prompt": prompt, "password": password})
	select {
	case r := <-k.inputs:
		var c struct {
			Value  string `json:"value"`
			Status string `json:"status"`
		}
		if err := r.Unmarshal(&c); err != nil {
			return "", fmt.Errorf("stdin: %w", err)
		}
		if c.Status == "error" {
			return "", errors.New("stdin: the frontend could not read input")
		}
		return c.Value, nil
	case <-o.ctx.Done():
		return "", fmt.Errorf("stdin: input interrupted: %w", o.ctx.Err())
	case <-k.done:
		return "", errors.New("stdin: kernel shutting down")
	}
}
