package kernel

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
	select {
	case g.conns <- newZMTPConn(c, first[:]):
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

// maxFrameSize bounds the size of one ZMTP frame a peer may announce. zmq4
// allocates a frame's announced size before reading it, so a bogus length
// would otherwise exhaust memory and crash the kernel; such a peer is
// disconnected instead.
const maxFrameSize = 1 << 30

const greetingLen = 64 // a ZMTP 3 greeting

// zmtpConn replays the byte read by admit, buffers reads (one system call
// per batch of frames instead of two per frame), and follows the ZMTP framing of
// what the peer sends (headers only; bodies are counted, not copied). It lifts
// the handshake deadline once the peer's greeting and first command (READY)
// have been read, and fails the read of a frame longer than maxFrameSize.
type zmtpConn struct {
	net.Conn
	r       *bufio.Reader // zmq4 reads each frame header and body separately: buffer them
	pending []byte        // read ahead by admit, not yet returned
	skip    int64         // bytes of the current greeting or frame body still to come
	hdr     []byte        // the frame header read so far: flags, then a 1- or 8-byte size
	frames  int           // complete frames seen
	err     error         // set when the peer broke the framing rules
}

func newZMTPConn(c net.Conn, first []byte) *zmtpConn {
	z := &zmtpConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10), pending: first, skip: greetingLen, hdr: make([]byte, 0, 9)}
	z.observe(first)
	return z
}

// Read implements net.Conn. zmq4 reads a connection from one goroutine at a
// time (the handshake, then the message loop), so no lock is needed.
func (c *zmtpConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	if n > 0 {
		c.observe(p[:n])
		if c.err != nil {
			return 0, c.err
		}
	}
	return n, err
}

func (c *zmtpConn) observe(b []byte) {
	for len(b) > 0 && c.err == nil {
		if c.skip > 0 {
			k := min(c.skip, int64(len(b)))
			c.skip -= k
			b = b[k:]
			if c.skip == 0 && len(c.hdr) > 0 {
				c.endFrame()
			}
			continue
		}
		c.hdr = append(c.hdr, b[0])
		b = b[1:]
		long := c.hdr[0]&0x02 != 0
		switch {
		case !long && len(c.hdr) == 2:
			c.skip = int64(c.hdr[1])
		case long && len(c.hdr) == 9:
			size := binary.BigEndian.Uint64(c.hdr[1:])
			if size > maxFrameSize {
				c.err = fmt.Errorf("zmtp: peer %s announced a frame of %d bytes (limit %d)", c.RemoteAddr(), size, maxFrameSize)
				return
			}
			c.skip = int64(size)
		default:
			continue
		}
		if c.skip == 0 {
			c.endFrame()
		}
	}
}

func (c *zmtpConn) endFrame() {
	c.hdr = c.hdr[:0]
	if c.frames++; c.frames == 1 { // the peer's READY: the handshake is over
		c.Conn.SetDeadline(time.Time{})
	}
}
