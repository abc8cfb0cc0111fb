package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Config describes a kernel to start.
type Config struct {
	Conn     ConnectionInfo // sockets and signing key, usually from ReadConnectionFile
	Executor Executor       // runs cells; required
	History  *History       // where inputs are stored; nil keeps them in memory only
	Log      *log.Logger    // where protocol problems are logged; nil means stderr

	ImplementationVersion string     // reported in kernel_info_reply
	LanguageVersion       string     // version of the Go dialect; default: the Go toolchain's
	Banner                string     // kernel_info_reply banner
	HelpLinks             []HelpLink // kernel_info_reply help_links
}

// HelpLink is an entry of the frontend's help menu.
type HelpLink struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// sendTimeout bounds a blocked send to a socket (a client that stopped reading).
const sendTimeout = 10 * time.Second

// Kernel serves the Jupyter protocol on the five sockets of a connection file.
// Create it with New, serve with Run, stop with a shutdown_request or by
// cancelling Run's context.
type Kernel struct {
	cfg     Config
	exec    Executor
	log     *log.Logger
	signer  *Signer
	session string
	history *History

	shell, control, stdin, iopub, hb zmq4.Socket
	ipcFiles                         []string // socket files this kernel created

	queue chan *Message // shell requests, served in order by one goroutine

	mu        sync.Mutex
	cancel    context.CancelFunc // cancels the running cell, nil when idle
	count     int                // execution count
	restart   bool               // the shutdown asked for a restart
	done      chan struct{}      // closed on shutdown
	closeOnce sync.Once

	drops dropLog // rate-limits the logging of dropped messages

	inputMu sync.Mutex    // one input_request outstanding at a time
	inputs  chan *Message // input_reply messages from the stdin socket
}

// New binds the kernel's sockets. A port in use or an unusable address gives
// an error naming the socket and endpoint.
func New(cfg Config) (*Kernel, error) {
	if cfg.Executor == nil {
		return nil, errors.New("kernel: Config.Executor is nil")
	}
	if err := cfg.Conn.Validate(); err != nil {
		return nil, fmt.Errorf("kernel: connection info: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = log.New(os.Stderr, "harmonium kernel: ", log.LstdFlags)
	}
	if cfg.LanguageVersion == "" {
		cfg.LanguageVersion = strings.TrimPrefix(runtime.Version(), "go")
	}
	h := cfg.History
	if h == nil {
		h, _ = OpenHistory("") // in memory: cannot fail
	}
	k := &Kernel{
		cfg:     cfg,
		exec:    cfg.Executor,
		log:     cfg.Log,
		signer:  NewSigner([]byte(cfg.Conn.Key)),
		session: newID(),
		history: h,
		queue:   make(chan *Message, 4096),
		done:    make(chan struct{}),
		inputs:  make(chan *Message, 1),
	}
	ctx := context.Background()
	opt := zmq4.WithTimeout(sendTimeout)
	c := cfg.Conn
	socks := []struct {
		dst  *zmq4.Socket
		name string
		port int
		make func(context.Context, ...zmq4.Option) zmq4.Socket
	}{
		{&k.shell, "shell", c.ShellPort, zmq4.NewRouter},
		{&k.control, "control", c.ControlPort, zmq4.NewRouter},
		{&k.stdin, "stdin", c.StdinPort, zmq4.NewRouter},
		{&k.iopub, "iopub", c.IOPubPort, zmq4.NewPub},
		{&k.hb, "heartbeat", c.HBPort, zmq4.NewRep},
	}
	for _, s := range socks {
		sock := s.make(ctx, opt)
		ep := c.Endpoint(s.port)
		if err := sock.Listen(guardedEndpoint(ep)); err != nil {
			sock.Close()
			k.closeSockets()
			return nil, fmt.Errorf("kernel: %s socket on %s (port %d): %w", s.name, ep, s.port, err)
		}
		*s.dst = sock
		if c.Transport == "ipc" {
			k.ipcFiles = append(k.ipcFiles, strings.TrimPrefix(ep, "ipc://"))
		}
	}
	return k, nil
}

func (k *Kernel) closeSockets() {
	for _, s := range []zmq4.Socket{k.shell, k.control, k.stdin, k.iopub, k.hb} {
		if s != nil {
			s.Close()
		}
	}
	for _, f := range k.ipcFiles { // zmq4 removes only plain ipc:// socket files
		os.Remove(f)
	}
}

// Run serves requests until a shutdown_request arrives or ctx is cancelled,
// then closes the sockets. It reports whether the shutdown asked for a restart.
func (k *Kernel) Run(ctx context.Context) (restart bool) {
	var wg sync.WaitGroup
	for _, f := range []func(){k.serveShell, k.serveControl, k.serveStdin, k.serveHeartbeat, k.work} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	k.publish(nil, "status", map[string]any{"execution_state": "starting"})
	select {
	case <-ctx.Done():
		k.shutdown(false)
	case <-k.done:
	}
	k.Interrupt()
	time.Sleep(20 * time.Millisecond) // let the iopub queue flush the last messages
	k.closeSockets()
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		k.log.Print("shutdown: the running cell did not stop within 2 s; leaving it behind")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.restart
}

// Interrupt cancels the running cell, if any, as interrupt_request and
// SIGINT do.
func (k *Kernel) Interrupt() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel != nil {
		k.cancel()
	}
}

func (k *Kernel) shutdown(restart bool) {
	k.closeOnce.Do(func() {
		k.mu.Lock()
		k.restart = restart
		k.mu.Unlock()
		close(k.done)
	})
}

func (k *Kernel) stopping() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// recv reads and verifies the next message from sock. It returns nil, false
// when the socket is closed; bad messages are logged and skipped.
func (k *Kernel) recv(sock zmq4.Socket, name string) (*Message, bool) {
	for {
		zm, err := sock.Recv()
		if err != nil {
			if k.stopping() {
				return nil, false
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
				return nil, false
			}
			k.drops.printf(k.log, "%s: receive: %v", name, err)
			time.Sleep(10 * time.Millisecond) // never spin on a failing socket
			continue
		}
		m, err := ParseFrames(zm.Frames, k.signer)
		if err != nil {
			k.drops.printf(k.log, "%s: dropped message (%d frames): %v", name, len(zm.Frames), err)
			continue
		}
		return m, true
	}
}

// dropLog logs at most dropBurst dropped messages per second and counts the
// rest, so that a flood of bad messages cannot flood the log.
type dropLog struct {
	mu         sync.Mutex
	window     time.Time
	n, skipped int
}

const dropBurst = 5

func (d *dropLog) printf(l *log.Logger, format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now := time.Now(); now.Sub(d.window) > time.Second {
		if d.skipped > 0 {
			l.Printf("%d more bad messages dropped", d.skipped)
		}
		d.window, d.n, d.skipped = now, 0, 0
	}
	if d.n++; d.n > dropBurst {
		d.skipped++
		return
	}
	l.Printf(format, args...)
}

func (k *Kernel) serveShell() {
	for {
		m, ok := k.recv(k.shell, "shell")
		if !ok {
			return
		}
		select {
		case k.queue <- m:
		case <-k.done:
			return
		}
	}
}

func (k *Kernel) serveControl() {
	for {
		m, ok := k.recv(k.control, "control")
		if !ok {
			return
		}
		k.guard("control "+m.Header.MsgType, func() { k.handleControl(m) })
	}
}

func (k *Kernel) serveStdin() {
	for {
		m, ok := k.recv(k.stdin, "stdin")
		if !ok {
			return
		}
		if m.Header.MsgType != "input_reply" {
			k.log.Printf("stdin: dropped unexpected %s", m.Header.MsgType)
			continue
		}
		select { // replace any stale reply nobody waited for
		case <-k.inputs:
		default:
		}
		k.inputs <- m
	}
}

func (k *Kernel) serveHeartbeat() {
	for {
		m, err := k.hb.Recv()
		if err != nil {
			if k.stopping() || errors.Is(err, context.Canceled) {
				return
			}
			k.drops.printf(k.log, "heartbeat: receive: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err := k.hb.Send(m); err != nil && !k.stopping() {
			k.log.Printf("heartbeat: send: %v", err)
		}
	}
}

// work serves the shell queue, one request at a time.
func (k *Kernel) work() {
	for {
		select {
		case m := <-k.queue:
			k.guard("shell "+m.Header.MsgType, func() { k.handleShell(m) })
		case <-k.done:
			return
		}
	}
}

// guard runs f, turning a panic into a log line so that no request can
// bring the kernel down.
func (k *Kernel) guard(what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			k.log.Printf("%s: internal error: %v\n%s", what, r, debug.Stack())
		}
	}()
	f()
}

// send sends a message of type msgType as a reply to req on the ROUTER
// socket sock, to the identities req came from.
func (k *Kernel) send(sock zmq4.Socket, req *Message, msgType string, content any) {
	m, err := newMessage(k.session, msgType, req, content)
	if err != nil {
		// The executor produced something JSON cannot carry (e.g. NaN): the
		// client still gets a reply, so it does not wait forever.
		k.log.Print(err)
		if m, err = newMessage(k.session, msgType, req, replyError("InternalError", err.Error(), nil)); err != nil {
			return
		}
	}
	if err := sock.SendMulti(zmq4.NewMsgFrom(m.Frames(k.signer)...)); err != nil && !k.stopping() {
		k.log.Printf("send %s: %v", msgType, err)
	}
}

// publish broadcasts a message on iopub with parent as parent header.
func (k *Kernel) publish(parent *Message, msgType string, content any) {
	m, err := newMessage(k.session, msgType, parent, content)
	if err != nil {
		k.log.Print(err)
		return
	}
	m.Identities = [][]byte{[]byte("kernel." + k.session + "." + msgType)}
	if err := k.iopub.SendMulti(zmq4.NewMsgFrom(m.Frames(k.signer)...)); err != nil && !k.stopping() {
		k.log.Printf("publish %s: %v", msgType, err)
	}
}

func (k *Kernel) status(parent *Message, state string) {
	k.publish(parent, "status", map[string]any{"execution_state": state})
}

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
