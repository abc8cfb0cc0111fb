package kernel

// The IOPub socket.
//
// zmq4's PUB socket puts every published message in one unbounded queue, and
// one goroutine writes each message to the subscribers in turn. A subscriber
// that stops reading (a frontend suspended with SIGSTOP, a laptop gone to
// sleep) therefore blocks output to every other client, and the queue grows
// without bound. libzmq instead gives each subscriber a bounded queue (the
// send high-water mark) and drops messages for a subscriber whose queue is
// full. Doing that inside zmq4 would mean changing its pubMWriter; the kernel
// instead implements the sending side of PUB itself: zmq4 still performs the
// ZMTP handshake of each connection (zmq4.Open), and the publisher frames
// messages and writes them to each subscriber from that subscriber's own
// goroutine, out of a bounded queue.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// Bounds of one subscriber's queue: messages beyond either are dropped for
// that subscriber alone. 1000 messages is libzmq's default high-water mark;
// the byte bound keeps the kernel's memory bounded when messages are large.
// A message larger than the byte bound is still queued when the queue is
// empty, so a big image reaches a subscriber that keeps up. A message of at
// most smallMessage bytes is held to the message bound alone: a status
// message published while a big output is still being written must not be
// dropped, or the front end shows the kernel busy for good. The queue then
// holds at most the byte bound plus 1000 small messages. At the message
// bound a status message, which is essential (see priority), takes the
// place of the oldest queued message.
const (
	subscriberQueueMessages = 1000
	subscriberQueueBytes    = 16 << 20
	smallMessage            = 4 << 10
)

// subscriberStall is how long a write to a subscriber may make no progress
// before the subscriber is disconnected and its queue freed. A libzmq client
// reconnects and subscribes again by itself once it runs again.
const subscriberStall = 60 * time.Second

// Limits on what a subscriber may send: subscriptions are short topics.
const (
	maxSubscriptionFrame = 64 << 10
	maxTopics            = 1024
)

// ZMTP 3 frame flags.
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// publisher is a ZeroMQ PUB socket with a bounded queue per subscriber.
type publisher struct {
	ln      net.Listener
	log     *log.Logger
	drops   *dropLog      // rate-limits logging of refused connections
	stall   time.Duration // subscriberStall, shorter in tests
	limit   queueLimit    // the bounds of each subscriber's queue
	dropped atomic.Int64  // messages dropped for slow subscribers, in total

	mu     sync.Mutex // orders Publish calls; guards subs and closed
	subs   map[*subscriber]struct{}
	closed bool
	wg     sync.WaitGroup // the accept loop and every subscriber's goroutines
}

// listenPublisher listens on network ("tcp" or "unix") at addr through the
// guarded transport of listener.go.
func listenPublisher(network, addr string, logger *log.Logger, drops *dropLog) (*publisher, error) {
	ln, err := guardedTransport{network: network}.Listen(context.Background(), addr)
	if err != nil {
		return nil, err
	}
	p := &publisher{ln: ln, log: logger, drops: drops, stall: subscriberStall,
		limit: queueLimit{subscriberQueueMessages, subscriberQueueBytes}, subs: map[*subscriber]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Dropped returns how many messages were dropped for subscribers that did
// not keep up, since the publisher started.
func (p *publisher) Dropped() int64 { return p.dropped.Load() }

func (p *publisher) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // the guarded listener only fails once closed
		}
		go p.handshake(c) // bounded by the guarded listener's handshake deadline
	}
}

// handshake performs the ZMTP handshake on c and, if the peer is a SUB or
// XSUB socket, adds it as a subscriber.
func (p *publisher) handshake(c net.Conn) {
	if _, err := zmq4.Open(c, null.Security(), zmq4.Pub, nil, true, nil); err != nil {
		p.drops.printf(p.log, "iopub: refused connection from %s: %v", c.RemoteAddr(), err)
		c.Close()
		return
	}
	s := &subscriber{p: p, conn: c, name: c.RemoteAddr().String(), topics: map[string]int{},
		wake: make(chan struct{}, 1), closing: make(chan struct{}), gone: make(chan struct{})}
	if s.name == "" || s.name == "@" || s.name == "<nil>" { // unix sockets: peers have no address
		s.name = "local peer"
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.subs[s] = struct{}{}
	p.wg.Add(2)
	p.mu.Unlock()
	for _, f := range []func(){s.write, s.read} {
		go func() {
			defer p.wg.Done()
			defer p.remove(s)
			f()
		}()
	}
}

// priority says what a subscriber's full queue does with a message.
type priority int

const (
	// droppable messages are dropped when a subscriber's queue is full, as
	// libzmq drops messages at its high-water mark.
	droppable priority = iota
	// essential messages make room instead: the oldest message queued
	// before them that is not a ZMTP command is dropped. Status messages
	// are essential: a front end that misses the idle that ends a request
	// shows the kernel busy for good, while a missed output is one output.
	// The queue's bounds still hold.
	essential
)

// Publish queues a message, given as its frames (the first is the topic), to
// every subscriber whose subscriptions match. It never blocks on a
// subscriber: a subscriber whose queue is full misses the message, or, for
// an essential one, an older message.
func (p *publisher) Publish(frames [][]byte, pr priority) {
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	var topic []byte
	if len(frames) > 0 {
		topic = frames[0]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for s := range p.subs {
		if s.subscribed(topic) && !s.offer(queued{frames: frames, size: size, priority: pr}) {
			p.dropped.Add(1)
		}
	}
}

// Settle waits until every subscriber has been sent what is queued for it,
// or until timeout: a message on another socket (an input_request on stdin)
// then reaches a front end after the output published before it.
func (p *publisher) Settle(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		busy := false
		for s := range p.subs {
			s.mu.Lock()
			busy = busy || s.bytes > 0
			s.mu.Unlock()
		}
		p.mu.Unlock()
		if !busy || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Close stops accepting subscribers, lets every subscriber's goroutine send
// what is queued for up to drain, then disconnects them all. A handshake in
// progress is abandoned when it completes.
func (p *publisher) Close(drain time.Duration) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for s := range p.subs {
		s.closeOnce.Do(func() { close(s.closing) })
	}
	p.mu.Unlock()
	err := p.ln.Close()
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return err
	case <-time.After(drain):
	}
	p.mu.Lock()
	for s := range p.subs {
		s.conn.Close() // fails the write of a subscriber that is not reading
	}
	p.mu.Unlock()
	<-done
	return err
}

// remove disconnects s; both of its goroutines call it when they stop.
func (p *publisher) remove(s *subscriber) {
	p.mu.Lock()
	delete(p.subs, s)
	p.mu.Unlock()
	s.goneOnce.Do(func() {
		close(s.gone)
		s.conn.Close()
	})
}

// queueLimit bounds a subscriber's queue.
type queueLimit struct{ messages, bytes int }

// queued is a message waiting in a subscriber's queue.
type queued struct {
	frames   [][]byte
	size     int  // bytes in frames
	command  bool // a ZMTP command (one frame, the command's body): never dropped
	priority priority
}

// subscriber is one connected SUB socket.
type subscriber struct {
	p    *publisher
	conn net.Conn
	name string // the peer's address, for the log

	mu       sync.Mutex
	topics   map[string]int // subscribed prefixes, counted as libzmq counts repeated subscriptions
	queue    []queued
	bytes    int   // bytes in queue, and in the message being written
	dropped  int64 // messages dropped since the last report
	reported bool  // the start of the current run of drops was logged

	wake      chan struct{} // signalled when the queue becomes non-empty
	closing   chan struct{} // closed when the publisher closes: send what is queued, then stop
	closeOnce sync.Once
	gone      chan struct{} // closed when the connection is closed: stop now
	goneOnce  sync.Once
}

func (s *subscriber) subscribed(topic []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.topics {
		if strings.HasPrefix(string(topic), t) {
			return true
		}
	}
	return false
}

// offer appends m to the queue, or counts it as dropped and returns false
// when the queue is full. A small essential message (see priority) is
// queued at the message bound by dropping the oldest queued message that is
// not a ZMTP command; the bounds still hold.
func (s *subscriber) offer(m queued) bool {
	s.mu.Lock()
	l := s.p.limit
	full := len(s.queue) >= l.messages || len(s.queue) > 0 && m.size > smallMessage && s.bytes+m.size > l.bytes
	refuse := full && !m.command
	evicted := refuse && m.priority == essential && m.size <= smallMessage && s.evictOldest()
	if refuse && !evicted {
		first := s.countDrop()
		s.mu.Unlock()
		s.reportDrop(first)
		return false
	}
	first := false
	if evicted {
		first = s.countDrop()
		s.p.dropped.Add(1)
	}
	s.queue = append(s.queue, m)
	s.bytes += m.size
	s.mu.Unlock()
	s.reportDrop(first)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// evictOldest removes the oldest queued message that is not a ZMTP
// command, and reports whether there was one; s.mu is held.
func (s *subscriber) evictOldest() bool {
	for i, q := range s.queue {
		if !q.command {
			s.bytes -= q.size
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return true
		}
	}
	return false
}

// countDrop counts a message dropped for s and reports whether it starts a
// run of drops; s.mu is held.
func (s *subscriber) countDrop() (first bool) {
	s.dropped++
	first = !s.reported
	s.reported = true
	return first
}

// reportDrop logs the start of a run of drops; s.mu is not held.
func (s *subscriber) reportDrop(first bool) {
	if first {
		s.p.log.Printf("iopub: subscriber %s is not reading; dropping its messages until it catches up", s.name)
	}
}

// next waits for the next queued message; ok is false once the publisher
// is closing and the queue is empty.
func (s *subscriber) next() (m queued, ok bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			m = s.queue[0]
			s.queue[0] = queued{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return m, true
		}
		if s.dropped > 0 {
			s.p.log.Printf("iopub: subscriber %s caught up; %d messages were dropped for it", s.name, s.dropped)
			s.dropped, s.reported = 0, false
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.gone:
			return queued{}, false
		case <-s.closing:
			s.mu.Lock()
			empty := len(s.queue) == 0
			s.mu.Unlock()
			if empty {
				return queued{}, false
			}
		}
	}
}

// pending reports whether messages are waiting.
func (s *subscriber) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0
}

// write sends the queued messages to the peer until the connection fails or
// the publisher closes. Messages are buffered and the buffer is flushed
// whenever the queue runs empty.
func (s *subscriber) write() {
	w := bufio.NewWriterSize(stallWriter{s.conn, s.p.stall}, 64<<10)
	for {
		m, ok := s.next()
		if !ok {
			return
		}
		err := writeFrames(w, m)
		if err == nil && !s.pending() {
			err = w.Flush()
		}
		s.mu.Lock()
		s.bytes -= m.size
		dropped := s.dropped
		s.mu.Unlock()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.p.log.Printf("iopub: subscriber %s disconnected (%v); %d messages dropped for it", s.name, err, dropped)
			}
			return
		}
	}
}

// writeFrames writes m in ZMTP framing: every frame but the last has the
// MORE flag; a command is a single frame with the COMMAND flag.
func writeFrames(w *bufio.Writer, m queued) error {
	for i, f := range m.frames {
		var flags byte
		if i < len(m.frames)-1 {
			flags |= flagMore
		}
		if m.command {
			flags |= flagCommand
		}
		var hdr [9]byte
		n := 2
		if len(f) > 255 {
			flags |= flagLong
			binary.BigEndian.PutUint64(hdr[1:], uint64(len(f)))
			n = 9
		} else {
			hdr[1] = byte(len(f))
		}
		hdr[0] = flags
		if _, err := w.Write(hdr[:n]); err != nil {
			return err
		}
		if _, err := w.Write(f); err != nil {
			return err
		}
	}
	return nil
}

// stallWriter writes to a connection in chunks, each of which must complete
// within timeout: a peer that reads slowly is served, one that stopped
// reading fails the write.
type stallWriter struct {
	c       net.Conn
	timeout time.Duration
}

const stallChunk = 256 << 10

func (w stallWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if err := w.c.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
			return n, err
		}
		k, err := w.c.Write(p[n:min(len(p), n+stallChunk)])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// read serves what the peer sends: subscriptions (ZMTP 3.0 messages whose
// first byte is 1 to subscribe, 0 to cancel; ZMTP 3.1 SUBSCRIBE and CANCEL
// commands) and PING commands. It returns when the peer disconnects or breaks
// the framing.
func (s *subscriber) read() {
	r := bufio.NewReader(s.conn)
	var msg [][]byte
	for {
		flags, body, err := readFrame(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.p.drops.printf(s.p.log, "iopub: subscriber %s: %v", s.name, err)
			}
			return
		}
		if flags&flagCommand != 0 {
			s.command(body)
			continue
		}
		msg = append(msg, body)
		if flags&flagMore != 0 {
			if len(msg) > 16 {
				s.p.drops.printf(s.p.log, "iopub: subscriber %s sent a message of more than 16 frames", s.name)
				return
			}
			continue
		}
		if len(msg) == 1 && len(msg[0]) > 0 {
			s.subscribe(msg[0][0] == 1, string(msg[0][1:]))
		}
		msg = msg[:0]
	}
}

// readFrame reads one ZMTP frame of at most maxSubscriptionFrame bytes.
func readFrame(r *bufio.Reader) (flags byte, body []byte, err error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:2]); err != nil {
		return 0, nil, err
	}
	flags, size := hdr[0], uint64(hdr[1])
	if flags&flagLong != 0 {
		if _, err := io.ReadFull(r, hdr[2:]); err != nil {
			return 0, nil, err
		}
		size = binary.BigEndian.Uint64(hdr[1:])
	}
	if size > maxSubscriptionFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes (a subscriber may send at most %d)", size, maxSubscriptionFrame)
	}
	body = make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return flags, body, nil
}

// command handles a ZMTP command frame: a name length, the name, the data.
func (s *subscriber) command(body []byte) {
	if len(body) == 0 || 1+int(body[0]) > len(body) {
		return
	}
	name, data := string(body[1:1+int(body[0])]), body[1+int(body[0]):]
	switch name {
	case "SUBSCRIBE":
		s.subscribe(true, string(data))
	case "CANCEL":
		s.subscribe(false, string(data))
	case "PING": // a 2-byte TTL, then a context that PONG echoes
		if len(data) >= 2 {
			pong := append([]byte("\x04PONG"), data[2:]...)
			s.offer(queued{frames: [][]byte{pong}, size: len(pong), command: true})
		}
	}
}

func (s *subscriber) subscribe(on bool, topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case on && (s.topics[topic] > 0 || len(s.topics) < maxTopics):
		s.topics[topic]++
	case !on && s.topics[topic] > 1:
		s.topics[topic]--
	case !on:
		delete(s.topics, topic)
	}
}
