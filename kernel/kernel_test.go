package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

func TestKernelInfoAndHeartbeat(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	info := c.ask("kernel_info_request", map[string]any{})
	if info["protocol_version"] != "5.4" || info["implementation"] != "harmonium" || info["status"] != "ok" {
		t.Errorf("kernel_info_reply = %v", info)
	}
	li := info["language_info"].(map[string]any)
	for k, want := range map[string]string{"name": "go", "mimetype": "text/x-go", "file_extension": ".go",
		"pygments_lexer": "go", "codemirror_mode": "go"} {
		if li[k] != want {
			t.Errorf("language_info[%s] = %v, want %q", k, li[k], want)
		}
	}
	// kernel_info on the control channel too.
	req := c.request(c.control, "kernel_info_request", map[string]any{})
	if rep := c.reply(c.controlIn, req); rep.Header.MsgType != "kernel_info_reply" {
		t.Errorf("control kernel_info: got %s", rep.Header.MsgType)
	}
	// Reply headers are complete and the parent header is the request's.
	if rep := c.reply(c.shellIn, c.request(c.shell, "kernel_info_request", map[string]any{})); rep.Header.Version != "5.4" ||
		rep.Header.Session == "" || rep.Header.MsgID == "" || !strings.HasSuffix(rep.Header.Date, "Z") {
		t.Errorf("reply header %+v", rep.Header)
	}
	// The heartbeat echoes.
	if err := c.hb.Send(zmq4.NewMsgString("ping")); err != nil {
		t.Fatal(err)
	}
	m, err := c.hb.Recv()
	if err != nil || string(m.Bytes()) != "ping" {
		t.Errorf("heartbeat echo = %q, %v", m.Bytes(), err)
	}
}

func TestStartingStatus(t *testing.T) {
	conn := ConnectionInfo{Transport: "ipc", IP: filepath.Join(t.TempDir(), "k"),
		ShellPort: 1, IOPubPort: 2, StdinPort: 3, ControlPort: 4, HBPort: 5, Key: testKey}
	// Subscribe before the kernel exists so that "starting" cannot be missed.
	k, err := New(Config{Conn: conn, Executor: fakeExecutor{}, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	sub := zmq4.NewSub(context.Background())
	defer sub.Close()
	if err := sub.Dial(conn.Endpoint(conn.IOPubPort)); err != nil {
		t.Fatal(err)
	}
	sub.SetOption(zmq4.OptionSubscribe, "")
	time.Sleep(200 * time.Millisecond) // let the subscription reach the publisher
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go k.Run(ctx)
	zm, err := sub.Recv()
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseFrames(zm.Frames, NewSigner([]byte(testKey)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.MsgType != "status" || content(t, m)["execution_state"] != "starting" {
		t.Errorf("first iopub message: %s %s", m.Header.MsgType, m.Content)
	}
}

func TestExecute(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	rep, outs := c.execute("print hello, world\n", nil)
	if rep["status"] != "ok" || rep["execution_count"] != 1.0 || len(outs) != 1 || outs[0].Header.MsgType != "stream" {
		t.Fatalf("print: reply %v, outputs %s", rep, types(outs))
	}
	if s := content(t, outs[0]); s["name"] != "stdout" || s["text"] != "hello, world\n" {
		t.Errorf("stream = %v", s)
	}
	_, outs = c.execute("eprint oops", nil)
	if len(outs) != 1 || content(t, outs[0])["name"] != "stderr" {
		t.Errorf("eprint outputs %s", types(outs))
	}

	rep, outs = c.execute("value 42", nil)
	if len(outs) != 1 || outs[0].Header.MsgType != "execute_result" {
		t.Fatalf("value outputs %s", types(outs))
	}
	r := content(t, outs[0])
	if r["execution_count"] != rep["execution_count"] || r["data"].(map[string]any)["text/plain"] != "42" {
		t.Errorf("execute_result %v, reply %v", r, rep)
	}

	_, outs = c.execute("display", nil)
	if types(outs) != "display_data update_display_data " {
		t.Fatalf("display outputs %s", types(outs))
	}
	if tr := content(t, outs[1])["transient"].(map[string]any); tr["display_id"] != "d1" {
		t.Errorf("update transient = %v", tr)
	}
	if _, outs = c.execute("clear", nil); types(outs) != "clear_output " || content(t, outs[0])["wait"] != false {
		t.Errorf("clear outputs %s", types(outs))
	}

	rep, outs = c.execute("fail", nil)
	if rep["status"] != "error" || rep["ename"] != "RuntimeError" || rep["evalue"] != "boom" || len(outs) != 1 || outs[0].Header.MsgType != "error" {
		t.Fatalf("fail: reply %v, outputs %s", rep, types(outs))
	}
	if e := content(t, outs[0]); !reflect.DeepEqual(e["traceback"], []any{"cell:1:1: boom"}) {
		t.Errorf("error content %v", e)
	}

	// silent: no execute_input, no outputs, count unchanged; store_history=false keeps the count too.
	before := c.ask("execute_request", map[string]any{"code": "count", "silent": true})
	if before["execution_count"] != rep["execution_count"] {
		t.Errorf("silent reply count %v, want %v", before["execution_count"], rep["execution_count"])
	}
	if rep2, outs := c.execute("value x", map[string]any{"silent": true}); len(outs) != 0 || rep2["status"] != "ok" {
		t.Errorf("silent cell published %s", types(outs))
	}
	if rep2, outs := c.execute("fail", map[string]any{"silent": true}); len(outs) != 0 || rep2["status"] != "error" {
		t.Errorf("silent failing cell: reply %v, published %s", rep2, types(outs))
	}
	if rep2, _ := c.execute("count", map[string]any{"store_history": false}); rep2["execution_count"] != rep["execution_count"] {
		t.Errorf("store_history=false changed the count: %v", rep2)
	}
	if rep2, _ := c.execute("count", nil); rep2["execution_count"] != rep["execution_count"].(float64)+1 {
		t.Errorf("count after a stored cell = %v", rep2["execution_count"])
	}

	rep, _ = c.execute("print", map[string]any{"user_expressions": map[string]any{"a": "x+1"}})
	ue := rep["user_expressions"].(map[string]any)["a"].(map[string]any)
	if ue["status"] != "ok" || ue["data"].(map[string]any)["text/plain"] != "X+1" {
		t.Errorf("user_expressions = %v", rep["user_expressions"])
	}
}

func TestExecuteInputAndOrder(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	req := c.request(c.shell, "execute_request", map[string]any{"code": "print a"})
	c.reply(c.shellIn, req)
	ms := c.iopubUntilIdle(req)
	if types(ms) != "execute_input stream " {
		t.Fatalf("iopub sequence: busy %sidle", types(ms))
	}
	if in := content(t, ms[0]); in["code"] != "print a" || in["execution_count"] != 1.0 {
		t.Errorf("execute_input = %v", in)
	}
}

func TestStopOnError(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	r1 := c.request(c.shell, "execute_request", map[string]any{"code": "slowfail", "stop_on_error": true})
	r2 := c.request(c.shell, "execute_request", map[string]any{"code": "print 2"})
	r3 := c.request(c.shell, "kernel_info_request", map[string]any{})
	r4 := c.request(c.shell, "execute_request", map[string]any{"code": "print 4"})
	got := []string{}
	for _, r := range []*Message{r1, r2, r3, r4} {
		rep := c.reply(c.shellIn, r)
		got = append(got, rep.Header.MsgType+":"+statusOf(t, rep))
	}
	want := []string{"execute_reply:error", "execute_reply:aborted", "kernel_info_reply:ok", "execute_reply:aborted"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replies %v, want %v", got, want)
	}
	// Later cells run again, and stop_on_error=false aborts nothing.
	c.drain()
	r1 = c.request(c.shell, "execute_request", map[string]any{"code": "fail", "stop_on_error": false})
	r2 = c.request(c.shell, "execute_request", map[string]any{"code": "print 2"})
	if s := statusOf(t, c.reply(c.shellIn, r1)); s != "error" {
		t.Errorf("first status %s", s)
	}
	if s := statusOf(t, c.reply(c.shellIn, r2)); s != "ok" {
		t.Errorf("cell after a failure without stop_on_error: %s", s)
	}
}

func statusOf(t *testing.T, m *Message) string {
	s, _ := content(t, m)["status"].(string)
	return s
}

func TestIntrospection(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	comp := c.ask("complete_request", map[string]any{"code": "fmt.Pri", "cursor_pos": 7})
	if !reflect.DeepEqual(comp["matches"], []any{"Println", "Printf"}) || comp["cursor_start"] != 4.0 || comp["cursor_end"] != 7.0 {
		t.Errorf("complete_reply = %v", comp)
	}
	// Cursor positions are code points: "é" is one.
	comp = c.ask("complete_request", map[string]any{"code": "é Pri"})
	if comp["cursor_start"] != 2.0 || comp["cursor_end"] != 5.0 {
		t.Errorf("complete_reply without cursor_pos = %v", comp)
	}
	comp = c.ask("complete_request", map[string]any{"code": "zz", "cursor_pos": 99})
	if !reflect.DeepEqual(comp["matches"], []any{}) || comp["cursor_end"] != 2.0 {
		t.Errorf("complete_reply no match = %v", comp)
	}
	insp := c.ask("inspect_request", map[string]any{"code": "fmt.Println", "cursor_pos": 3, "detail_level": 1})
	if insp["found"] != true || insp["data"].(map[string]any)["text/plain"] != "package fmt (detail 1)" {
		t.Errorf("inspect_reply = %v", insp)
	}
	if insp = c.ask("inspect_request", map[string]any{"code": "x", "cursor_pos": 1}); insp["found"] != false {
		t.Errorf("inspect_reply for unknown = %v", insp)
	}
	for code, want := range map[string][2]string{"func f() {": {"incomplete", "\t"}, "x := 1": {"complete", ""}, "}": {"invalid", ""}} {
		r := c.ask("is_complete_request", map[string]any{"code": code})
		if r["status"] != want[0] || (want[0] == "incomplete" && r["indent"] != want[1]) {
			t.Errorf("is_complete(%q) = %v, want %v", code, r, want)
		}
	}
	if r := c.ask("comm_info_request", map[string]any{}); r["status"] != "ok" || len(r["comms"].(map[string]any)) != 0 {
		t.Errorf("comm_info_reply = %v", r)
	}
	if r := c.ask("connect_request", map[string]any{}); r["shell_port"] != 1.0 || r["hb_port"] != 5.0 {
		t.Errorf("connect_reply = %v", r)
	}
}

func TestCommOpenUnknownTarget(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	req := c.request(c.shell, "comm_open", map[string]any{"comm_id": "c-1", "target_name": "nobody", "data": map[string]any{}})
	ms := c.iopubUntilIdle(req)
	if types(ms) != "comm_close " || content(t, ms[0])["comm_id"] != "c-1" {
		t.Errorf("comm_open answered with %s", types(ms))
	}
}

func TestHistoryRequests(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	for _, code := range []string{"value 1", "print a", "value 1", "value 2"} {
		c.execute(code, nil)
	}
	c.execute("value 3", map[string]any{"store_history": false})
	h := c.ask("history_request", map[string]any{"output": false, "raw": true, "hist_access_type": "tail", "n": 2})
	if !reflect.DeepEqual(h["history"], []any{[]any{1.0, 3.0, "value 1"}, []any{1.0, 4.0, "value 2"}}) {
		t.Errorf("tail = %v", h["history"])
	}
	h = c.ask("history_request", map[string]any{"output": true, "raw": true, "hist_access_type": "tail", "n": 1})
	if !reflect.DeepEqual(h["history"], []any{[]any{1.0, 4.0, []any{"value 2", nil}}}) {
		t.Errorf("tail with output = %v", h["history"])
	}
	h = c.ask("history_request", map[string]any{"output": false, "raw": true, "hist_access_type": "range", "session": 0, "start": 2, "stop": 4})
	if !reflect.DeepEqual(h["history"], []any{[]any{1.0, 2.0, "print a"}, []any{1.0, 3.0, "value 1"}}) {
		t.Errorf("range = %v", h["history"])
	}
	h = c.ask("history_request", map[string]any{"output": false, "raw": true, "hist_access_type": "search", "pattern": "value ?"})
	if n := len(h["history"].([]any)); n != 3 {
		t.Errorf("search: %d entries, want 3: %v", n, h["history"])
	}
	h = c.ask("history_request", map[string]any{"output": false, "raw": true, "hist_access_type": "search", "pattern": "value*", "unique": true})
	if !reflect.DeepEqual(h["history"], []any{[]any{1.0, 3.0, "value 1"}, []any{1.0, 4.0, "value 2"}}) {
		t.Errorf("unique search = %v", h["history"])
	}
	if r := c.ask("history_request", map[string]any{"hist_access_type": "sideways"}); r["status"] != "error" {
		t.Errorf("bad hist_access_type: %v", r)
	}
}

func TestInterrupt(t *testing.T) {
	c, k, _ := startKernel(t, nil)
	c.execute("print before", nil)
	for _, via := range []string{"control", "method"} {
		req := c.request(c.shell, "execute_request", map[string]any{"code": "loop"})
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		if via == "control" {
			ir := c.request(c.control, "interrupt_request", map[string]any{})
			if rep := c.reply(c.controlIn, ir); statusOf(t, rep) != "ok" {
				t.Errorf("interrupt_reply %s", rep.Content)
			}
		} else {
			k.Interrupt() // what SIGINT does
		}
		rep := c.reply(c.shellIn, req)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: execute_reply %v after the interrupt", via, d)
		}
		if r := content(t, rep); r["status"] != "error" || r["ename"] != "Interrupted" {
			t.Errorf("%s: interrupted reply %v", via, r)
		}
	}
	if rep, _ := c.execute("value ok", nil); rep["status"] != "ok" {
		t.Errorf("after interrupts: %v", rep)
	}
}

func TestInput(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	for _, prompt := range []string{"name: ", "pw: "} {
		req := c.request(c.shell, "execute_request", map[string]any{"code": "input " + prompt, "allow_stdin": true})
		ir := c.next(c.stdinIn, "input_request")
		if ir.Header.MsgType != "input_request" || parentID(ir) != req.Header.MsgID {
			t.Fatalf("got %s", ir.Header.MsgType)
		}
		ic := content(t, ir)
		if ic["prompt"] != prompt || ic["password"] != strings.HasPrefix(prompt, "pw") {
			t.Errorf("input_request = %v", ic)
		}
		in, _ := newMessage(c.session, "input_reply", ir, map[string]any{"value": "Ada"})
		in.Identities = nil
		if err := c.stdin.SendMulti(zmq4.NewMsgFrom(in.Frames(c.signer)...)); err != nil {
			t.Fatal(err)
		}
		c.reply(c.shellIn, req)
		var got string
		for _, m := range c.iopubUntilIdle(req) {
			if m.Header.MsgType == "stream" {
				got = content(t, m)["text"].(string)
			}
		}
		if got != "got Ada" {
			t.Errorf("cell read %q", got)
		}
	}
	rep, _ := c.execute("input x", map[string]any{"allow_stdin": false})
	if rep["status"] != "error" || !strings.Contains(rep["evalue"].(string), "stdin") {
		t.Errorf("input without stdin: %v", rep)
	}
	// An interrupt while waiting for input ends the cell.
	req := c.request(c.shell, "execute_request", map[string]any{"code": "input wait"})
	c.next(c.stdinIn, "input_request")
	c.reply(c.controlIn, c.request(c.control, "interrupt_request", map[string]any{}))
	if r := content(t, c.reply(c.shellIn, req)); r["status"] != "error" {
		t.Errorf("interrupted input: %v", r)
	}
}

// TestInputPromptFromStdout checks that the unfinished line a cell printed
// before reading stdin is the input_request's prompt and no stream message,
// while the complete lines before it are published first.
func TestInputPromptFromStdout(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	req := c.request(c.shell, "execute_request", map[string]any{"code": "ask first line|Name: ", "allow_stdin": true})
	ir := c.next(c.stdinIn, "input_request")
	if p := content(t, ir)["prompt"]; p != "Name: " {
		t.Errorf("prompt %q, want %q", p, "Name: ")
	}
	in, _ := newMessage(c.session, "input_reply", ir, map[string]any{"value": "Ada"})
	in.Identities = nil
	if err := c.stdin.SendMulti(zmq4.NewMsgFrom(in.Frames(c.signer)...)); err != nil {
		t.Fatal(err)
	}
	c.reply(c.shellIn, req)
	var streams []string
	for _, m := range c.iopubUntilIdle(req) {
		if m.Header.MsgType == "stream" {
			streams = append(streams, content(t, m)["text"].(string))
		}
	}
	if got := strings.Join(streams, ""); got != "first line\ngot Ada" {
		t.Errorf("stdout %q, want the line before the prompt and the answer only", got)
	}
}

func TestShutdown(t *testing.T) {
	for _, restart := range []bool{false, true} {
		c, _, done := startKernel(t, nil)
		req := c.request(c.control, "shutdown_request", map[string]any{"restart": restart})
		if r := content(t, c.reply(c.controlIn, req)); r["status"] != "ok" || r["restart"] != restart {
			t.Errorf("shutdown_reply = %v", r)
		}
		select {
		case got := <-done:
			if got != restart {
				t.Errorf("Run returned restart=%v, want %v", got, restart)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("kernel still running 5 s after shutdown_request")
		}
	}
}

func TestShutdownDuringCell(t *testing.T) {
	c, _, done := startKernel(t, nil)
	c.request(c.shell, "execute_request", map[string]any{"code": "loop"})
	time.Sleep(50 * time.Millisecond)
	c.reply(c.controlIn, c.request(c.control, "shutdown_request", map[string]any{"restart": false}))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown blocked by a running cell")
	}
}

func TestRobustness(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	send := func(frames ...[]byte) {
		if err := c.shell.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
			t.Fatal(err)
		}
	}
	good, _ := newMessage(c.session, "execute_request", nil, map[string]any{"code": "print x"})
	f := good.Frames(c.signer)
	send([]byte("garbage"))
	send(delimiter)
	send(f[0], []byte("00"), f[2], f[3], f[4], f[5])                          // wrong signature
	send(f[0], []byte(strings.Repeat("zz", 32)), f[2], f[3], f[4], f[5])      // not hex
	send(f[0], f[1], f[2], f[3], f[4], []byte(`{"code": "print y"}`))         // content changed after signing
	bad, _ := newMessage(c.session, "execute_request", nil, map[string]any{}) // signed, but content is not an object
	bad.Content = []byte(`[1,2]`)
	send(bad.Frames(c.signer)...)
	bad.Content = []byte(`{"code": 5}`) // signed, wrong field type: answered with an error reply
	send(bad.Frames(c.signer)...)
	if r := content(t, c.reply(c.shellIn, bad)); r["status"] != "error" {
		t.Errorf("ill-typed execute_request: %v", r)
	}
	hdr, _ := newMessage(c.session, "", nil, map[string]any{}) // no msg_type
	send(hdr.Frames(c.signer)...)
	c.request(c.shell, "no_such_request", map[string]any{})
	c.request(c.control, "no_such_request", map[string]any{})

	// A huge message (8 MiB of code) is served.
	rep, outs := c.execute("print "+strings.Repeat("x", 8<<20), nil)
	if rep["status"] != "ok" || len(outs) != 1 || len(content(t, outs[0])["text"].(string)) != 8<<20 {
		t.Errorf("huge message: %v", rep)
	}
	// An executor panic and an unencodable result are turned into error replies.
	if rep, _ := c.execute("panic", nil); rep["status"] != "error" || rep["ename"] != "InternalError" {
		t.Errorf("panic: %v", rep)
	}
	if rep, _ := c.execute("nan", nil); rep["status"] != "ok" {
		t.Errorf("nan: %v", rep)
	}
	// A client that vanishes right after sending a request does not stop the kernel.
	ghost := dial(t, c.conn, "ghost")
	ghost.request(ghost.shell, "execute_request", map[string]any{"code": "print boo"})
	ghost.close()
	if rep, _ := c.execute("value still here", nil); rep["status"] != "ok" {
		t.Errorf("after a vanished client: %v", rep)
	}
}

func TestTCPAndPortInUse(t *testing.T) {
	ports := make([]int, 5)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	conn := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: ports[0], IOPubPort: ports[1],
		StdinPort: ports[2], ControlPort: ports[3], HBPort: ports[4], Key: testKey}
	k, err := New(Config{Conn: conn, Executor: fakeExecutor{}, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go k.Run(ctx)
	c := dial(t, conn, "tcp-client")
	if rep, _ := c.execute("value 1", nil); rep["status"] != "ok" {
		t.Errorf("tcp execute: %v", rep)
	}
	// A second kernel on the same ports fails, naming the port.
	_, err = New(Config{Conn: conn, Executor: fakeExecutor{}})
	if err == nil || !strings.Contains(err.Error(), "shell") || !strings.Contains(err.Error(), itoa(ports[0])) {
		t.Errorf("port in use: err = %v", err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestDropLogRateLimit(t *testing.T) {
	var buf strings.Builder
	l := log.New(&buf, "", 0)
	var d dropLog
	for i := 0; i < 100; i++ {
		d.printf(l, "drop %d", i)
	}
	if n := strings.Count(buf.String(), "\n"); n != dropBurst {
		t.Errorf("%d lines logged for 100 drops in a burst, want %d", n, dropBurst)
	}
	d.window = d.window.Add(-2 * time.Second) // a second later
	d.printf(l, "drop late")
	if !strings.Contains(buf.String(), "95 more bad messages dropped\ndrop late\n") {
		t.Errorf("log:\n%s", buf.String())
	}
}

func TestSilentAndBogusConnections(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	addr := strings.TrimPrefix(c.conn.Endpoint(c.conn.ShellPort), "ipc://")
	silent, err := net.Dial("unix", addr) // connects and never speaks
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	bogus, err := net.Dial("unix", addr) // speaks something that is not ZMTP
	if err != nil {
		t.Fatal(err)
	}
	bogus.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat("?", 100)))
	defer bogus.Close()
	time.Sleep(100 * time.Millisecond)
	// A new client still gets through on every socket.
	c2 := dial(t, c.conn, "late-client")
	if rep, _ := c2.execute("value 1", nil); rep["status"] != "ok" {
		t.Errorf("after a silent client: %v", rep)
	}
}

func TestStreamCoalescing(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	_, outs := c.execute("many 20000", nil)
	var stdout strings.Builder
	for i, m := range outs {
		ct := content(t, m)
		if m.Header.MsgType != "stream" {
			t.Fatalf("output %d is %s", i, m.Header.MsgType)
		}
		if i == len(outs)-1 {
			if ct["name"] != "stderr" || ct["text"] != "done\n" {
				t.Errorf("last output %v, want stderr done", ct)
			}
			continue
		}
		if ct["name"] != "stdout" {
			t.Errorf("output %d on %v", i, ct["name"])
		}
		stdout.WriteString(ct["text"].(string))
	}
	var want strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if stdout.String() != want.String() {
		t.Errorf("stdout text differs: %d bytes, want %d", stdout.Len(), want.Len())
	}
	// 20,000 writes, 229 kB: a handful of messages (size- or time-flushed).
	if len(outs) > 50 {
		t.Errorf("%d stream messages for 20000 lines", len(outs))
	}

	_, outs = c.execute("mixed", nil)
	var got []string
	for _, m := range outs {
		ct := content(t, m)
		switch m.Header.MsgType {
		case "stream":
			got = append(got, ct["text"].(string))
		default:
			got = append(got, m.Header.MsgType)
		}
	}
	if want := []string{"a", "display_data", "b", "clear_output", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestShutdownOnShell(t *testing.T) {
	c, _, done := startKernel(t, nil)
	req := c.request(c.shell, "shutdown_request", map[string]any{"restart": true})
	if r := content(t, c.reply(c.shellIn, req)); r["restart"] != true {
		t.Errorf("shutdown_reply = %v", r)
	}
	// The reply is also broadcast on iopub.
	for {
		m := c.next(c.iopubIn, "shutdown_reply on iopub")
		if m.Header.MsgType == "shutdown_reply" {
			break
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("kernel still running")
	}
}

func TestUnsignedConnection(t *testing.T) {
	conn := ConnectionInfo{Transport: "ipc", IP: filepath.Join(t.TempDir(), "k"),
		ShellPort: 1, IOPubPort: 2, StdinPort: 3, ControlPort: 4, HBPort: 5}
	k, err := New(Config{Conn: conn, Executor: fakeExecutor{}, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go k.Run(ctx)
	c := dial(t, conn, "unsigned")
	rep, outs := c.execute("value 7", nil)
	if rep["status"] != "ok" || len(outs) != 1 {
		t.Fatalf("unsigned execute: %v %s", rep, types(outs))
	}
	// Without a key, signatures are neither made nor checked.
	req, _ := newMessage(c.session, "execute_request", nil, map[string]any{"code": "value 8"})
	if err := c.shell.SendMulti(zmq4.NewMsgFrom(req.Frames(NewSigner([]byte("some key")))...)); err != nil {
		t.Fatal(err)
	}
	if rep := content(t, c.reply(c.shellIn, req)); rep["status"] != "ok" {
		t.Errorf("a signed request to an unsigned kernel: %v", rep)
	}
}
