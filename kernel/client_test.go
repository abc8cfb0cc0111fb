package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

const testKey = "a0436f6c-1916-498b-8eb9-e81ab9368e84"

// testClient is a minimal Jupyter frontend speaking to a kernel over real
// ZeroMQ sockets, like jupyter_client does.
type testClient struct {
	t       testing.TB
	signer  *Signer
	session string
	conn    ConnectionInfo

	shell, control, stdin, iopub, hb zmq4.Socket
	shellIn, controlIn, stdinIn      chan *Message
	iopubIn                          chan *Message
}

// startKernel starts a kernel with the fake executor on ipc sockets in a
// temporary directory and returns a connected client. The kernel stops at the
// end of the test.
func startKernel(t testing.TB, hist *History) (*testClient, *Kernel, <-chan bool) {
	t.Helper()
	conn := ConnectionInfo{Transport: "ipc", IP: filepath.Join(t.TempDir(), "k"),
		ShellPort: 1, IOPubPort: 2, StdinPort: 3, ControlPort: 4, HBPort: 5, Key: testKey}
	k, err := New(Config{Conn: conn, Executor: fakeExecutor{}, History: hist,
		Log: log.New(io.Discard, "", 0), ImplementationVersion: "test", Banner: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	restarted := make(chan bool, 1)
	go func() { restarted <- k.Run(ctx) }()
	t.Cleanup(cancel)
	return dial(t, conn, "client-1"), k, restarted
}

func dial(t testing.TB, conn ConnectionInfo, id string) *testClient {
	t.Helper()
	ctx := context.Background()
	c := &testClient{t: t, signer: NewSigner([]byte(conn.Key)), session: newID(), conn: conn}
	ident := zmq4.WithID(zmq4.SocketIdentity(id))
	c.shell = zmq4.NewDealer(ctx, ident)
	c.control = zmq4.NewDealer(ctx, ident)
	c.stdin = zmq4.NewDealer(ctx, ident)
	c.iopub = zmq4.NewSub(ctx)
	c.hb = zmq4.NewReq(ctx)
	for _, s := range []struct {
		sock zmq4.Socket
		port int
	}{{c.shell, conn.ShellPort}, {c.control, conn.ControlPort}, {c.stdin, conn.StdinPort},
		{c.iopub, conn.IOPubPort}, {c.hb, conn.HBPort}} {
		if err := s.sock.Dial(conn.Endpoint(s.port)); err != nil {
			t.Fatalf("dial %s: %v", conn.Endpoint(s.port), err)
		}
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	c.shellIn, c.controlIn, c.stdinIn, c.iopubIn = c.pump(c.shell), c.pump(c.control), c.pump(c.stdin), c.pump(c.iopub)
	t.Cleanup(c.close)
	// Wait until iopub is subscribed: ask kernel_info until a status arrives.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.request(c.shell, "kernel_info_request", map[string]any{})
		select {
		case <-c.iopubIn:
			c.drain()
			return c
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no message on iopub within 10 s")
		}
	}
}

func (c *testClient) close() {
	for _, s := range []zmq4.Socket{c.shell, c.control, c.stdin, c.iopub, c.hb} {
		s.Close()
	}
}

// pump reads and verifies messages from sock into a channel.
func (c *testClient) pump(sock zmq4.Socket) chan *Message {
	ch := make(chan *Message, 1000)
	go func() {
		for {
			zm, err := sock.Recv()
			if err != nil {
				return
			}
			m, err := ParseFrames(zm.Frames, c.signer)
			if err != nil {
				c.t.Errorf("client received a bad message: %v", err)
				continue
			}
			ch <- m
		}
	}()
	return ch
}

// drain discards everything received so far.
func (c *testClient) drain() {
	time.Sleep(50 * time.Millisecond)
	for _, ch := range []chan *Message{c.shellIn, c.controlIn, c.stdinIn, c.iopubIn} {
		for len(ch) > 0 {
			<-ch
		}
	}
}

// request sends a signed request on sock and returns it.
func (c *testClient) request(sock zmq4.Socket, msgType string, content any) *Message {
	c.t.Helper()
	m, err := newMessage(c.session, msgType, nil, content)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := sock.SendMulti(zmq4.NewMsgFrom(m.Frames(c.signer)...)); err != nil {
		c.t.Fatalf("send %s: %v", msgType, err)
	}
	return m
}

func (c *testClient) next(ch chan *Message, what string) *Message {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no %s within 30 s", what)
		return nil
	}
}

// reply waits for the reply to req on ch.
func (c *testClient) reply(ch chan *Message, req *Message) *Message {
	c.t.Helper()
	for {
		m := c.next(ch, "reply to "+req.Header.MsgType)
		if parentID(m) == req.Header.MsgID {
			return m
		}
	}
}

func parentID(m *Message) string {
	var h Header
	_ = json.Unmarshal(m.Parent, &h)
	return h.MsgID
}

// iopubUntilIdle collects the iopub messages of req up to its idle status,
// checking that the first is busy.
func (c *testClient) iopubUntilIdle(req *Message) []*Message {
	c.t.Helper()
	var out []*Message
	for {
		m := c.next(c.iopubIn, "iopub message for "+req.Header.MsgType)
		if parentID(m) != req.Header.MsgID {
			continue
		}
		if m.Header.MsgType == "status" {
			st := content(c.t, m)["execution_state"]
			if len(out) == 0 && st != "busy" {
				c.t.Fatalf("first status of %s is %v, want busy", req.Header.MsgType, st)
			}
			if st == "idle" {
				return out[1:]
			}
		}
		out = append(out, m)
	}
}

// execute runs code and returns the reply content and the iopub outputs
// (execute_input excluded).
func (c *testClient) execute(code string, extra map[string]any) (map[string]any, []*Message) {
	c.t.Helper()
	ct := map[string]any{"code": code, "silent": false, "store_history": true,
		"user_expressions": map[string]any{}, "allow_stdin": true, "stop_on_error": true}
	for k, v := range extra {
		ct[k] = v
	}
	req := c.request(c.shell, "execute_request", ct)
	rep := c.reply(c.shellIn, req)
	var outs []*Message
	for _, m := range c.iopubUntilIdle(req) {
		if m.Header.MsgType != "execute_input" {
			outs = append(outs, m)
		}
	}
	return content(c.t, rep), outs
}

// ask sends a request on the shell channel and returns the reply content.
func (c *testClient) ask(msgType string, ct map[string]any) map[string]any {
	c.t.Helper()
	req := c.request(c.shell, msgType, ct)
	rep := c.reply(c.shellIn, req)
	want := msgType[:len(msgType)-len("request")] + "reply"
	if rep.Header.MsgType != want {
		c.t.Fatalf("reply to %s is %s, want %s", msgType, rep.Header.MsgType, want)
	}
	c.iopubUntilIdle(req)
	return content(c.t, rep)
}

func content(t testing.TB, m *Message) map[string]any {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(m.Content, &c); err != nil {
		t.Fatalf("content of %s: %v", m.Header.MsgType, err)
	}
	return c
}

func types(ms []*Message) string {
	s := ""
	for _, m := range ms {
		s += fmt.Sprintf("%s ", m.Header.MsgType)
	}
	return s
}
