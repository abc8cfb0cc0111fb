package kernel

// The request handlers: control (interrupt, shutdown, kernel_info) and shell
// (execute and introspection), each answered on the channel it came from.

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/go-zeromq/zmq4"
)

func (k *Kernel) handleControl(m *Message) {
	k.status(m, "busy")
	defer k.status(m, "idle")
	switch m.Header.MsgType {
	case "interrupt_request":
		k.Interrupt()
		k.send(k.control, m, "interrupt_reply", map[string]any{"status": "ok"})
	case "shutdown_request":
		k.handleShutdown(k.control, m)
	case "kernel_info_request":
		k.send(k.control, m, "kernel_info_reply", k.kernelInfo())
	case "debug_request":
		k.send(k.control, m, "debug_reply", map[string]any{"status": "error", "ename": "NotImplemented",
			"evalue": "the Harmonium kernel has no debugger", "traceback": []string{}})
	default:
		k.drops.printf(k.log, "control: unknown message type %q dropped", m.Header.MsgType)
	}
}

func (k *Kernel) handleShutdown(sock zmq4.Socket, m *Message) {
	var req struct {
		Restart bool `json:"restart"`
	}
	if err := m.Unmarshal(&req); err != nil {
		k.log.Print(err)
	}
	reply := map[string]any{"status": "ok", "restart": req.Restart}
	k.send(sock, m, "shutdown_reply", reply)
	k.publish(m, "shutdown_reply", reply)
	k.shutdown(req.Restart)
}

func (k *Kernel) kernelInfo() map[string]any {
	links := k.cfg.HelpLinks
	if links == nil {
		links = []HelpLink{}
	}
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       ProtocolVersion,
		"implementation":         "harmonium",
		"implementation_version": k.cfg.ImplementationVersion,
		"language_info": map[string]any{
			"name":               "go",
			"version":            k.cfg.LanguageVersion,
			"mimetype":           "text/x-go",
			"file_extension":     ".go",
			"pygments_lexer":     "go",
			"codemirror_mode":    "go",
			"nbconvert_exporter": "script",
		},
		"banner":     k.cfg.Banner,
		"help_links": links,
		"debugger":   false,
	}
}

func (k *Kernel) handleShell(m *Message) {
	if k.stopping() {
		return
	}
	k.status(m, "busy")
	defer k.status(m, "idle")
	switch t := m.Header.MsgType; t {
	case "execute_request":
		k.handleExecute(m)
	case "kernel_info_request":
		k.send(k.shell, m, "kernel_info_reply", k.kernelInfo())
	case "complete_request":
		k.handleComplete(m)
	case "inspect_request":
		k.handleInspect(m)
	case "is_complete_request":
		k.handleIsComplete(m)
	case "history_request":
		k.handleHistory(m)
	case "comm_info_request":
		k.send(k.shell, m, "comm_info_reply", map[string]any{"status": "ok", "comms": map[string]any{}})
	case "comm_open":
		// No comm targets exist: tell the frontend the comm is closed at once.
		var req struct {
			CommID     string `json:"comm_id"`
			TargetName string `json:"target_name"`
		}
		if err := m.Unmarshal(&req); err != nil {
			k.log.Print(err)
			return
		}
		k.log.Printf("comm_open: no comm target %q; closing comm %s", req.TargetName, req.CommID)
		k.publish(m, "comm_close", map[string]any{"comm_id": req.CommID, "data": map[string]any{}})
	case "comm_msg", "comm_close":
		// Messages for comms that were closed at once: nothing to do.
	case "connect_request":
		c := k.cfg.Conn
		k.send(k.shell, m, "connect_reply", map[string]any{"status": "ok", "shell_port": c.ShellPort,
			"iopub_port": c.IOPubPort, "stdin_port": c.StdinPort, "control_port": c.ControlPort, "hb_port": c.HBPort})
	case "shutdown_request":
		k.handleShutdown(k.shell, m)
	default:
		k.drops.printf(k.log, "shell: unknown message type %q dropped", t)
	}
}

// replyError is the content of a reply whose request failed.
func replyError(ename, evalue string, extra map[string]any) map[string]any {
	c := map[string]any{"status": "error", "ename": ename, "evalue": evalue, "traceback": []string{}}
	for key, v := range extra {
		c[key] = v
	}
	return c
}

func (k *Kernel) handleComplete(m *Message) {
	var req struct {
		Code      string `json:"code"`
		CursorPos *int   `json:"cursor_pos"`
	}
	if err := m.Unmarshal(&req); err != nil {
		k.send(k.shell, m, "complete_reply", replyError("BadRequest", err.Error(), nil))
		return
	}
	cursor := clampCursor(req.Code, req.CursorPos)
	var c Completion
	if err := k.callExecutor(func() { c = k.exec.Complete(req.Code, cursor) }); err != nil {
		k.send(k.shell, m, "complete_reply", replyError("InternalError", err.Error(), nil))
		return
	}
	if c.Matches == nil {
		c.Matches = []string{}
		c.Start, c.End = cursor, cursor
	}
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	k.send(k.shell, m, "complete_reply", map[string]any{"status": "ok", "matches": c.Matches,
		"cursor_start": c.Start, "cursor_end": c.End, "metadata": c.Metadata})
}

// clampCursor returns the cursor position in code points, defaulting to the
// end of code and kept inside it.
func clampCursor(code string, pos *int) int {
	n := len([]rune(code))
	if pos == nil || *pos > n {
		return n
	}
	return max(*pos, 0)
}

func (k *Kernel) handleInspect(m *Message) {
	var req struct {
		Code        string `json:"code"`
		CursorPos   *int   `json:"cursor_pos"`
		DetailLevel int    `json:"detail_level"`
	}
	if err := m.Unmarshal(&req); err != nil {
		k.send(k.shell, m, "inspect_reply", replyError("BadRequest", err.Error(), nil))
		return
	}
	var (
		data  map[string]any
		found bool
	)
	cursor := clampCursor(req.Code, req.CursorPos)
	if err := k.callExecutor(func() { data, found = k.exec.Inspect(req.Code, cursor, req.DetailLevel) }); err != nil {
		k.send(k.shell, m, "inspect_reply", replyError("InternalError", err.Error(), nil))
		return
	}
	if data == nil {
		data = map[string]any{}
	}
	k.send(k.shell, m, "inspect_reply", map[string]any{"status": "ok", "found": found, "data": data, "metadata": map[string]any{}})
}

func (k *Kernel) handleIsComplete(m *Message) {
	var req struct {
		Code string `json:"code"`
	}
	if err := m.Unmarshal(&req); err != nil {
		k.send(k.shell, m, "is_complete_reply", map[string]any{"status": "unknown"})
		return
	}
	status, indent := "unknown", ""
	if err := k.callExecutor(func() { status, indent = k.exec.IsComplete(req.Code) }); err != nil {
		k.log.Printf("is_complete: %v", err)
	}
	reply := map[string]any{"status": status}
	if status == "incomplete" {
		reply["indent"] = indent
	}
	k.send(k.shell, m, "is_complete_reply", reply)
}

func (k *Kernel) handleHistory(m *Message) {
	var req struct {
		Output         bool   `json:"output"`
		HistAccessType string `json:"hist_access_type"`
		Session        int    `json:"session"`
		Start          int    `json:"start"`
		Stop           int    `json:"stop"`
		N              int    `json:"n"`
		Pattern        string `json:"pattern"`
		Unique         bool   `json:"unique"`
	}
	if err := m.Unmarshal(&req); err != nil {
		k.send(k.shell, m, "history_reply", replyError("BadRequest", err.Error(), nil))
		return
	}
	var es []HistoryEntry
	switch req.HistAccessType {
	case "tail":
		es = k.history.Tail(req.N)
	case "range":
		es = k.history.Range(req.Session, req.Start, req.Stop)
	case "search":
		es = k.history.Search(req.Pattern, req.N, req.Unique)
	default:
		k.send(k.shell, m, "history_reply", replyError("BadRequest",
			fmt.Sprintf("hist_access_type %q: want tail, range or search", req.HistAccessType), nil))
		return
	}
	hist := make([][]any, len(es))
	for i, e := range es {
		var in any = e.Source
		if req.Output { // outputs are not stored
			in = []any{e.Source, nil}
		}
		hist[i] = []any{e.Session, e.Line, in}
	}
	k.send(k.shell, m, "history_reply", map[string]any{"status": "ok", "history": hist})
}

// callExecutor runs f, turning an executor panic into an error.
func (k *Kernel) callExecutor(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			k.log.Printf("executor panic: %v\n%s", r, debug.Stack())
			err = fmt.Errorf("executor panic: %v", r)
		}
	}()
	f()
	return nil
}

type executeRequest struct {
	Code            string            `json:"code"`
	Silent          bool              `json:"silent"`
	StoreHistory    *bool             `json:"store_history"`
	UserExpressions map[string]string `json:"user_expressions"`
	AllowStdin      *bool             `json:"allow_stdin"`
	StopOnError     *bool             `json:"stop_on_error"`
}

func orTrue(b *bool) bool { return b == nil || *b }

func (k *Kernel) handleExecute(m *Message) {
	var req executeRequest
	if err := m.Unmarshal(&req); err != nil {
		k.send(k.shell, m, "execute_reply", replyError("BadRequest", err.Error(),
			map[string]any{"execution_count": k.count}))
		return
	}
	store := orTrue(req.StoreHistory) && !req.Silent
	if store {
		k.count++
	}
	count := k.count
	if !req.Silent {
		k.publish(m, "execute_input", map[string]any{"code": req.Code, "execution_count": count})
	}
	if store {
		if err := k.history.Append(count, req.Code); err != nil {
			k.log.Print(err)
		}
		if len(req.Code) > maxHistorySource {
			k.log.Printf("history: cell %d has %d bytes; only its first %d are stored", count, len(req.Code), maxHistorySource)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.mu.Lock()
	k.cancel = cancel
	k.mu.Unlock()
	if k.stopping() { // a shutdown raced with the start of this cell
		cancel()
	}
	out := &cellOutput{k: k, req: m, silent: req.Silent, allowStdin: orTrue(req.AllowStdin), ctx: ctx}
	opts := ExecOptions{Silent: req.Silent, StoreHistory: store, AllowStdin: out.allowStdin,
		ExecutionCount: count, UserExpressions: req.UserExpressions}
	var res ExecResult
	if err := k.callExecutor(func() { res = k.exec.Execute(ctx, req.Code, opts, out) }); err != nil {
		res.Err = &ExecError{Name: "InternalError", Value: err.Error()}
	}
	k.mu.Lock()
	k.cancel = nil
	k.mu.Unlock()
	cancel()
	out.flush()

	if res.Err != nil {
		e := res.Err
		tb := e.Traceback
		if tb == nil {
			tb = []string{}
		}
		if !req.Silent {
			k.publish(m, "error", map[string]any{"ename": e.Name, "evalue": e.Value, "traceback": tb})
		}
		// Requests that arrived while the cell ran are taken before the reply
		// goes out, so that a cell sent after seeing the error is never aborted.
		var queued []*Message
		if orTrue(req.StopOnError) && !req.Silent {
			queued = k.takeQueued()
		}
		k.send(k.shell, m, "execute_reply", map[string]any{"status": "error", "execution_count": count,
			"ename": e.Name, "evalue": e.Value, "traceback": tb, "user_expressions": map[string]any{}, "payload": []any{}})
		k.abort(queued)
		return
	}
	if res.Data != nil && !req.Silent {
		md := res.Metadata
		if md == nil {
			md = map[string]any{}
		}
		k.publish(m, "execute_result", map[string]any{"execution_count": count, "data": res.Data, "metadata": md})
	}
	ue := res.UserExpressions
	if ue == nil {
		ue = map[string]any{}
	}
	k.send(k.shell, m, "execute_reply", map[string]any{"status": "ok", "execution_count": count,
		"user_expressions": ue, "payload": []any{}})
}

// takeQueued empties the shell queue and returns what it held.
func (k *Kernel) takeQueued() []*Message {
	var ms []*Message
	for {
		select {
		case m := <-k.queue:
			ms = append(ms, m)
		default:
			return ms
		}
	}
}

// abort answers the execute_requests among ms with status "aborted", after a
// cell failed with stop_on_error; other requests are served normally.
func (k *Kernel) abort(ms []*Message) {
	for _, m := range ms {
		if m.Header.MsgType != "execute_request" {
			k.guard("shell "+m.Header.MsgType, func() { k.handleShell(m) })
			continue
		}
		k.status(m, "busy")
		k.send(k.shell, m, "execute_reply", map[string]any{"status": "aborted", "execution_count": k.count})
		k.status(m, "idle")
	}
}
