package kernel

import (
	"testing"

	"github.com/go-zeromq/zmq4"
)

func TestReplayGuardWindow(t *testing.T) {
	g := newReplayGuard(3)
	for _, step := range []struct {
		sig   string
		fresh bool
	}{
		{"a", true}, {"b", true}, {"a", false}, {"c", true}, {"b", false},
		{"d", true}, // forgets "a", the oldest
		{"a", true}, // forgets "b"
		{"c", false}, {"b", true},
	} {
		if got := g.fresh([]byte(step.sig)); got != step.fresh {
			t.Fatalf("fresh(%q) = %v, want %v", step.sig, got, step.fresh)
		}
	}
}

// A signed execute_request sent twice runs once: the copy is dropped.
func TestReplayedRequestRunsOnce(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	m, err := newMessage(c.session, "execute_request", nil, map[string]any{"code": "print once", "silent": false})
	if err != nil {
		t.Fatal(err)
	}
	frames := m.Frames(c.signer)
	for range 2 {
		if err := c.shell.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
			t.Fatal(err)
		}
	}
	// A later request is answered after whatever the copies caused.
	after := c.request(c.shell, "kernel_info_request", map[string]any{})
	replies := 0
	for {
		r := c.next(c.shellIn, "shell reply")
		if parentID(r) == after.Header.MsgID {
			break
		}
		if parentID(r) == m.Header.MsgID {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d execute_replies to one request sent twice, want 1", replies)
	}
	// The same content in a new message (new msg_id, new signature) runs.
	if rep, _ := c.execute("print again", nil); rep["status"] != "ok" {
		t.Errorf("a fresh request after the replay: %v", rep)
	}
}
