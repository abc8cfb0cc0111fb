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

// iopubDrain bounds how long a shutdown waits for the last iopub messages
// (the shutdown_reply, the final status) to reach the subscribers.
const iopubDrain = time.Second

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

	shell, control, stdin, hb zmq4.Socket
	iopub                     *publisher
	ipcFiles                  []string // socket files this kernel created

	queue chan *Message // shell requests, served in order by one goroutine

	mu        sync.Mutex
	cancel    context.CancelFunc // cancels the running cell, nil when idle
	count     int                // execution count
	restart   bool               // the shutdown asked for a restart
	done      chan struct{}      // closed on shutdown
	closeOnce sync.Once

	drops  dropLog      // rate-limits the logging of dropped messages
	replay *replayGuard // refuses signed messages received before

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
	if n := h.Skipped(); n > 0 {
		cfg.Log.Printf("history %s: skipped %d unreadable lines (corrupt, or longer than %d bytes)", h.path, n, maxHistoryLine)
	}
	k := &Kernel{
		cfg:     cfg,
		exec:    cfg.Executor,
		log:     cfg.Log,
		signer:  NewSigner([]byte(cfg.Conn.Key)),
		session: newID(),
		history: h,
		replay:  newReplayGuard(replayWindow),
		queue:   make(chan *Message, 4096),
		done:    make(chan struct{}),
		inputs:  make(chan *Message, 1),
	}
	ctx := context.Background()
	opt := zmq4.WithTimeout(sendTimeout)
	c := cfg.Conn
	// zmqSocket binds a zmq4 socket; the iopub socket is the kernel's own publisher.
	zmqSocket := func(dst *zmq4.Socket, newSocket func(context.Context, ...zmq4.Option) zmq4.Socket) func(ep, network, addr string) error {
		return func(ep, _, _ string) error {
			sock := newSocket(ctx, opt)
			if err := sock.Listen(guardedEndpoint(ep)); err != nil {
				sock.Close()
				return err
			}
			*dst = sock
			return nil
		}
	}
	socks := []struct {
		name   string
		port   int
		listen func(ep, network, addr string) error
	}{
		{"shell", c.ShellPort, zmqSocket(&k.shell, zmq4.NewRouter)},
		{"control", c.ControlPort, zmqSocket(&k.control, zmq4.NewRouter)},
		{"stdin", c.StdinPort, zmqSocket(&k.stdin, zmq4.NewRouter)},
		{"iopub", c.IOPubPort, func(_, network, addr string) (err error) {
			k.iopub, err = listenPublisher(network, addr, k.log, &k.drops)
			return err
		}},
		{"heartbeat", c.HBPort, zmqSocket(&k.hb, zmq4.NewRep)},
	}
	for _, s := range socks {
		ep := c.Endpoint(s.port)
		network, addr := c.listenAddr(s.port)
		if err := s.listen(ep, network, addr); err != nil {
			k.closeSockets()
			return nil, fmt.Errorf("kernel: %s socket on %s (port %d): %w", s.name, ep, s.port, err)
		}
		if network == "unix" {
			k.ipcFiles = append(k.ipcFiles, addr)
		}
	}
	return k, nil
}

func (k *Kernel) closeSockets() {
	if k.iopub != nil {
		k.iopub.Close(iopubDrain)
		if d := k.iopub.Dropped(); d > 0 {
			k.log.Printf("iopub: %d messages were dropped in all for subscribers that did not keep up", d)
		}
	}
	for _, s := range []zmq4.Socket{k.shell, k.control, k.stdin, k.hb} {
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
		// Unsigned messages (no key) cannot be told apart from replays.
		if sig := zm.Frames[len(m.Identities)+1]; len(sig) > 0 && !k.replay.fresh(sig) {
			k.drops.printf(k.log, "%s: dropped replayed %s %s (its signature was seen before)", name, m.Header.MsgType, m.Header.MsgID)
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
	pr := droppable
	if msgType == "status" {
		pr = essential
	}
	k.iopub.Publish(m.Frames(k.signer), pr)
}

func (k *Kernel) status(parent *Message, state string) {
	k.publish(parent, "status", map[string]any{"execution_state": state})
}
