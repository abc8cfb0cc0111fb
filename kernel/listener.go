package kernel

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/transport"
)

// zmq4 performs the ZMTP handshake of each accepted connection inside its
// accept loop, without a deadline: one client that connects and then says
// nothing (a port scanner, a frontend killed while connecting) would stop the
// socket from accepting anyone else. The kernel therefore listens through
// guarded transports: a connection reaches zmq4 only once its first byte has
// arrived, and its handshake must finish within handshakeTimeout.

const handshakeTimeout = 10 * time.Second

// Names under which the guarded transports are registered with zmq4.
const (
	guardedTCP = "harmonium-tcp"
	guardedIPC = "harmonium-ipc"
)

func init() {
	for name, network := range map[string]string{guardedTCP: "tcp", guardedIPC: "unix"} {
		if err := zmq4.RegisterTransport(name, guardedTransport{transport.New(network), network}); err != nil {
			panic(err) // only if registered twice: a programming error
		}
	}
}

// guardedEndpoint maps a tcp:// or ipc:// endpoint to its guarded twin.
func guardedEndpoint(ep string) string {
	for plain, guarded := range map[string]string{"tcp://": guardedTCP + "://", "ipc://": guardedIPC + "://"} {
		if len(ep) > len(plain) && ep[:len(plain)] == plain {
			return guarded + ep[len(plain):]
		}
	}
	return ep
}

type guardedTransport struct {
	transport.Transport
	network string
}

// Listen implements transport.Transport.
func (t guardedTransport) Listen(ctx context.Context, addr string) (net.Listener, error) {
	l, err := net.Listen(t.network, addr)
	if err != nil {
		return nil, err
	}
	g := &guardedListener{Listener: l, conns: make(chan net.Conn), closed: make(chan struct{})}
	go g.serve()
	return g, nil
}

// guardedListener hands zmq4 only connections whose peer has started talking.
type guardedListener struct {
	net.Listener
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func (g *guardedListener) serve() {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			select {
			case <-g.closed:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		go g.admit(c)
	}
}

// admit waits for the first byte of c, then passes c on to zmq4.
func (g *guardedListener) admit(c net.Conn) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	var first [1]byte
	if _, err := c.Read(first[:]); err != nil {
		c.Close()
		return
	}
	hc := &handshakeConn{Conn: c, pending: first[:]}
	hc.observe(first[:])
	select {
	case g.conns <- hc:
	case <-g.closed:
		c.Close()
	}
}

// Accept implements net.Listener.
func (g *guardedListener) Accept() (net.Conn, error) {
	select {
	case c := <-g.conns:
		return c, nil
	case <-g.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (g *guardedListener) Close() error {
	g.closeOnce.Do(func() { close(g.closed) })
	return g.Listener.Close()
}

// handshakeConn replays the byte read by admit and lifts the handshake
// deadline once the peer's ZMTP greeting (64 bytes) and first command (READY
// or the security mechanism's first command) have been read.
type handshakeConn struct {
	net.Conn
	pending []byte // read ahead by admit, not yet returned
	head    []byte // the first greeting+command-header bytes of the stream
	read    int64  // bytes seen so far
	need    int64  // bytes to see before the handshake is over; 0 while unknown
	done    bool
}

const (
	greetingLen = 64
	maxHeadLen  = greetingLen + 1 + 8 // flags and a long size
)

// Read implements net.Conn. zmq4 reads a connection from one goroutine at a
// time (the handshake, then the message loop), so no lock is needed.
func (c *handshakeConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.observe(p[:n])
	}
	return n, err
}

func (c *handshakeConn) observe(b []byte) {
	c.read += int64(len(b))
	if len(c.head) < maxHeadLen {
		c.head = append(c.head, b[:min(len(b), maxHeadLen-len(c.head))]...)
	}
	if c.need == 0 && len(c.head) >= greetingLen+2 {
		if flags := c.head[greetingLen]; flags&0x02 == 0 { // short frame: 1-byte size
			c.need = greetingLen + 2 + int64(c.head[greetingLen+1])
		} else if len(c.head) >= maxHeadLen {
			c.need = maxHeadLen + int64(binary.BigEndian.Uint64(c.head[greetingLen+1:])&(1<<62-1))
		}
	}
	if c.need > 0 && c.read >= c.need {
		c.done = true
		c.Conn.SetDeadline(time.Time{})
	}
}
