package kernel

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// testPublisher listens on a unix socket in a temporary directory.
func testPublisher(t *testing.T, limit queueLimit, stall time.Duration) (*publisher, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "iopub")
	p, err := listenPublisher("unix", path, log.New(io.Discard, "", 0), &dropLog{})
	if err != nil {
		t.Fatal(err)
	}
	p.limit, p.stall = limit, stall
	t.Cleanup(func() { p.Close(time.Second) })
	return p, "ipc://" + path
}

// subscribe dials a zmq4 SUB socket to ep, subscribed to topic, and waits
// until the publisher counts n subscribers.
func subscribe(t *testing.T, p *publisher, ep, topic string, n int) zmq4.Socket {
	t.Helper()
	sub := zmq4.NewSub(context.Background())
	t.Cleanup(func() { sub.Close() })
	if err := sub.Dial(ep); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		k := 0
		for s := range p.subs {
			s.mu.Lock()
			if len(s.topics) > 0 {
				k++
			}
			s.mu.Unlock()
		}
		p.mu.Unlock()
		if k == n {
			return sub
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers, want %d", k, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// recvSeq receives one message and returns the sequence number in its second frame.
func recvSeq(t *testing.T, sub zmq4.Socket) uint64 {
	t.Helper()
	m, err := sub.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Frames) != 3 {
		t.Fatalf("received %d frames, want 3", len(m.Frames))
	}
	return binary.BigEndian.Uint64(m.Frames[1])
}

// receiveSeqs receives messages from sub in a goroutine of its own, until
// sub is closed, and sends their sequence numbers on the returned channel
// (buffered for n). Unlike recvSeq it may run outside the test's goroutine,
// so the test can wait for each message with a timeout.
func receiveSeqs(sub zmq4.Socket, n int) <-chan uint64 {
	got := make(chan uint64, n)
	go func() {
		for {
			m, err := sub.Recv()
			if err != nil {
				return
			}
			got <- binary.BigEndian.Uint64(m.Frames[1])
		}
	}()
	return got
}

func seqMessage(topic string, i uint64, size int) [][]byte {
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], i)
	return [][]byte{[]byte(topic), seq[:], make([]byte, size)}
}

// A subscriber that stops reading must neither hold up the others nor make
// the publisher's memory grow: its messages beyond the queue bound are
// dropped and counted.
func TestPublisherStalledSubscriber(t *testing.T) {
	limit := queueLimit{messages: 100, bytes: 1 << 20}
	p, ep := testPublisher(t, limit, time.Minute)
	// zmq4's SUB reads into a small channel and stops reading the
	// connection once nobody takes from it: this one is never read.
	subscribe(t, p, ep, "", 1)
	healthy := subscribe(t, p, ep, "", 2)

	const n, size, batch = 3000, 8 << 10, 50 // 24 MB, far beyond the bound and the socket buffers
	var next uint64
	maxQueued := 0
	for i := uint64(0); i < n; i++ {
		p.Publish(seqMessage("kernel.x.stream", i, size), droppable)
		p.mu.Lock()
		for s := range p.subs {
			s.mu.Lock()
			maxQueued = max(maxQueued, s.bytes)
			s.mu.Unlock()
		}
		p.mu.Unlock()
		if (i+1)%batch == 0 { // the healthy subscriber keeps up
			for ; next <= i; next++ {
				if got := recvSeq(t, healthy); got != next {
					t.Fatalf("healthy subscriber: message %d, want %d", got, next)
				}
			}
		}
	}
	if d := p.Dropped(); d < n-int64(limit.messages)-int64(8<<20/size) {
		t.Errorf("dropped %d messages for the stalled subscriber, want nearly all of %d", d, n)
	}
	if maxQueued > limit.bytes+size {
		t.Errorf("a queue held %d bytes, bound %d", maxQueued, limit.bytes)
	}
}

// A subscriber whose writes make no progress for the stall timeout is
// disconnected, and the others are still served.
func TestPublisherDisconnectsStalledSubscriber(t *testing.T) {
	p, ep := testPublisher(t, queueLimit{messages: 1000, bytes: 64 << 20}, 300*time.Millisecond)
	subscribe(t, p, ep, "", 1) // never read
	healthy := subscribe(t, p, ep, "", 2)
	const n = 200 // 13 MB: more than the socket buffers hold
	for i := uint64(0); i < n; i++ {
		p.Publish(seqMessage("kernel.x.stream", i, 64<<10), droppable)
		if got := recvSeq(t, healthy); got != i {
			t.Fatalf("healthy subscriber: message %d, want %d", got, i)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		k := len(p.subs)
		p.mu.Unlock()
		if k == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers 10 s after the stall timeout, want 1", k)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Publish(seqMessage("kernel.x.stream", n, 10), droppable)
	if got := recvSeq(t, healthy); got != n {
		t.Fatalf("after the disconnect: message %d, want %d", got, n)
	}
}

// Subscriptions are prefixes of the first frame; a cancelled one stops delivery.
func TestPublisherTopics(t *testing.T) {
	p, ep := testPublisher(t, queueLimit{1000, 1 << 20}, time.Minute)
	sub := subscribe(t, p, ep, "kernel.a", 1)
	p.Publish(seqMessage("kernel.b.status", 1, 0), essential)
	p.Publish(seqMessage("kernel.a.status", 2, 0), essential)
	if got := recvSeq(t, sub); got != 2 {
		t.Fatalf("got message %d, want 2 (1 has another topic)", got)
	}
	if d := p.Dropped(); d != 0 {
		t.Errorf("dropped %d messages, want 0", d)
	}
}

// A status message published while big outputs fill the byte bound is
// queued, not dropped (a front end that missed the idle would show the
// kernel busy for good); a big message is dropped there, and a small one at
// the message bound.
func TestSubscriberQueueBounds(t *testing.T) {
	s := &subscriber{p: &publisher{limit: queueLimit{messages: 4, bytes: 1 << 20}, log: log.New(io.Discard, "", 0)},
		topics: map[string]int{}, wake: make(chan struct{}, 1)}
	big := func(i uint64) queued {
		return queued{frames: seqMessage("kernel.x.stream", i, 1<<20), size: 1<<20 + 24}
	}
	status := func(i uint64) queued { return queued{frames: seqMessage("kernel.x.status", i, 200), size: 224} }
	for k, c := range []struct {
		m    queued
		want bool
	}{
		{big(0), true},    // an empty queue takes a message of any size
		{big(1), false},   // the byte bound is reached
		{status(2), true}, // small: held to the message bound only
		{status(3), true},
		{status(4), true},  // four messages queued
		{status(5), false}, // the message bound
	} {
		if got := s.offer(c.m); got != c.want {
			t.Errorf("offer %d (%d bytes) = %v, want %v", k, c.m.size, got, c.want)
		}
	}
	if s.dropped != 2 {
		t.Errorf("dropped %d, want 2", s.dropped)
	}
}

// The status that ends a cell with a big output reaches a subscriber that
// reads slowly: it is published while the cell's first big message is still
// being written and its second is queued, which together exceed the byte
// bound.
func TestPublisherStatusBehindBigOutput(t *testing.T) {
	const big = 5 << 20
	p, ep := testPublisher(t, queueLimit{messages: 1000, bytes: 8 << 20}, time.Minute)
	sub := subscribe(t, p, ep, "", 1) // not read until everything is published
	var s *subscriber
	p.mu.Lock()
	for x := range p.subs {
		s = x
	}
	p.mu.Unlock()
	p.Publish(seqMessage("kernel.x.status", 0, 100), essential)
	p.Publish(seqMessage("kernel.x.execute_input", 1, big), droppable)
	for s.pending() { // until the writer holds the first big message
		time.Sleep(time.Millisecond)
	}
	p.Publish(seqMessage("kernel.x.stream", 2, big), droppable)
	p.Publish(seqMessage("kernel.x.status", 3, 100), essential)
	got := receiveSeqs(sub, 4)
	for want := uint64(0); want < 4; want++ {
		select {
		case g := <-got:
			if g != want {
				t.Fatalf("message %d, want %d", g, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not arrive (dropped: %d)", want, p.Dropped())
		}
	}
}

// ZMTP 3.1 peers subscribe with commands, and PING must be answered with
// PONG carrying the ping's context.
func TestSubscriberCommands(t *testing.T) {
	s := &subscriber{p: &publisher{limit: queueLimit{1, 1}, log: log.New(io.Discard, "", 0)},
		topics: map[string]int{}, wake: make(chan struct{}, 1)}
	cmd := func(name, data string) []byte { return []byte(fmt.Sprintf("%c%s%s", len(name), name, data)) }
	s.command(cmd("SUBSCRIBE", "kernel."))
	s.command(cmd("SUBSCRIBE", "kernel."))
	s.command(cmd("CANCEL", "kernel."))
	if !s.subscribed([]byte("kernel.1.status")) {
		t.Error("two subscriptions, one cancelled: not subscribed any more")
	}
	s.command(cmd("CANCEL", "kernel."))
	if s.subscribed([]byte("kernel.1.status")) {
		t.Error("every subscription cancelled: still subscribed")
	}
	s.command([]byte{200, 'P'}) // a name longer than the frame: ignored
	s.queue = append(s.queue, queued{size: 1})
	s.command(cmd("PING", "\x00\x0actx"))
	if len(s.queue) != 2 {
		t.Fatalf("queue holds %d messages after PING, want the PONG beyond the full queue", len(s.queue))
	}
	if pong := s.queue[1]; !pong.command || string(pong.frames[0]) != "\x04PONGctx" {
		t.Errorf("reply to PING: %+v, want the command PONG with context ctx", pong)
	}
}

// An essential message at the message bound takes the place of the oldest
// queued message that is not a ZMTP command, so the bound holds; a
// droppable one is dropped there, and so is a big essential one.
func TestSubscriberEssentialMessages(t *testing.T) {
	p := &publisher{limit: queueLimit{messages: 3, bytes: 1 << 20}, log: log.New(io.Discard, "", 0)}
	s := &subscriber{p: p, topics: map[string]int{}, wake: make(chan struct{}, 1)}
	msg := func(i uint64, pr priority) queued {
		return queued{frames: seqMessage("kernel.x.m", i, 100), size: 124, priority: pr}
	}
	pong := queued{frames: [][]byte{[]byte("\x04PONG")}, size: 5, command: true}
	bigEssential := queued{frames: seqMessage("kernel.x.m", 9, smallMessage), size: smallMessage + 24, priority: essential}
	for k, c := range []struct {
		m    queued
		want bool
		seqs []uint64 // the queue afterwards, by sequence number (a command as 99)
	}{
		{pong, true, []uint64{99}},
		{msg(1, droppable), true, []uint64{99, 1}},
		{msg(2, droppable), true, []uint64{99, 1, 2}},
		{msg(3, droppable), false, []uint64{99, 1, 2}}, // the message bound
		{msg(4, essential), true, []uint64{99, 2, 4}},  // 1 makes room; the command stays
		{msg(5, essential), true, []uint64{99, 4, 5}},  // then 2
		{msg(6, essential), true, []uint64{99, 5, 6}},  // then the oldest essential one
		{bigEssential, false, []uint64{99, 5, 6}},      // too big to take a small one's place
		{msg(7, droppable), false, []uint64{99, 5, 6}},
	} {
		if got := s.offer(c.m); got != c.want {
			t.Errorf("offer %d = %v, want %v", k, got, c.want)
		}
		var seqs []uint64
		bytes := 0
		for _, q := range s.queue {
			bytes += q.size
			if q.command {
				seqs = append(seqs, 99)
			} else {
				seqs = append(seqs, binary.BigEndian.Uint64(q.frames[1]))
			}
		}
		if fmt.Sprint(seqs) != fmt.Sprint(c.seqs) || bytes != s.bytes {
			t.Errorf("after offer %d: queue %v of %d bytes (counted %d), want %v", k, seqs, bytes, s.bytes, c.seqs)
		}
	}
	// Dropped: 3, 1, 2, 4, the big one and 7; the publisher counts the three
	// taken out of the queue itself, and Publish the three refused.
	if s.dropped != 6 || p.Dropped() != 3 {
		t.Errorf("dropped %d (publisher: %d), want 6 (3)", s.dropped, p.Dropped())
	}
}

// The status published after a flood of output reaches a subscriber that
// fell behind by more than the message bound: the front end that catches up
// learns that the kernel is idle, though it has lost output.
func TestPublisherStatusAfterFlood(t *testing.T) {
	const n = 200 // 64 KiB each: 13 MB, beyond the socket buffers
	p, ep := testPublisher(t, queueLimit{messages: 10, bytes: 64 << 20}, time.Minute)
	sub := subscribe(t, p, ep, "", 1) // not read until everything is published
	for i := uint64(0); i < n; i++ {
		p.Publish(seqMessage("kernel.x.stream", i, 64<<10), droppable)
	}
	p.Publish(seqMessage("kernel.x.status", n, 100), essential)
	got := receiveSeqs(sub, n+1)
	received := 0
	for {
		select {
		case g := <-got:
			received++
			if g == n {
				if d := p.Dropped(); d == 0 || received+int(d) != n+1 {
					t.Errorf("received %d messages and dropped %d, of %d", received, d, n+1)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the status did not arrive (received %d messages, dropped %d)", received, p.Dropped())
		}
	}
}
