package kernel

import (
	"bytes"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"
)

// zmtpGreeting is a ZMTP 3.0 greeting of a client with the NULL mechanism.
func zmtpGreeting() []byte {
	g := make([]byte, greetingLen)
	copy(g, []byte{0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 0})
	copy(g[12:], "NULL")
	return g
}

// zmtpReady is a READY command announcing socket type typ.
func zmtpReady(typ string) []byte {
	body := append([]byte{5}, "READY"...)
	body = append(body, 11)
	body = append(body, "Socket-Type"...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(typ)))
	body = append(body, typ...)
	return append([]byte{0x04, byte(len(body))}, body...)
}

func longFrameHeader(size uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{0x02}, size)
}

func TestZMTPConnFraming(t *testing.T) {
	var stream []byte
	stream = append(stream, zmtpGreeting()...)
	stream = append(stream, zmtpReady("DEALER")...)
	stream = append(stream, 0x01, 3, 'a', 'b', 'c') // short frame, more to come
	stream = append(stream, 0x00, 0)                // empty last frame
	stream = append(stream, longFrameHeader(300)...)
	stream = append(stream, bytes.Repeat([]byte{'x'}, 300)...)
	good := len(stream)
	stream = append(stream, longFrameHeader(1<<40)...) // bogus
	for _, chunk := range []int{1, 2, 7, 64, len(stream)} {
		a, b := net.Pipe()
		c := newZMTPConn(a, stream[:1])
		rest := stream[1:good]
		for len(rest) > 0 {
			n := min(chunk, len(rest))
			c.observe(rest[:n])
			rest = rest[n:]
		}
		if c.err != nil || c.frames != 4 || c.skip != 0 || len(c.hdr) != 0 {
			t.Errorf("chunk %d: err %v, %d frames, skip %d, hdr %v", chunk, c.err, c.frames, c.skip, c.hdr)
		}
		c.observe(stream[good:])
		if c.err == nil || !strings.Contains(c.err.Error(), "1099511627776") {
			t.Errorf("chunk %d: bogus frame size not caught: %v", chunk, c.err)
		}
		a.Close()
		b.Close()
	}
}

func TestBogusFrameSizeDisconnects(t *testing.T) {
	c, _, _ := startKernel(t, nil)
	addr := strings.TrimPrefix(c.conn.Endpoint(c.conn.ShellPort), "ipc://")
	raw, err := net.Dial("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	msg := append(append(zmtpGreeting(), zmtpReady("DEALER")...), longFrameHeader(1<<50)...)
	if _, err := raw.Write(msg); err != nil {
		t.Fatal(err)
	}
	// The kernel hangs up on the liar...
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	for {
		if _, err := raw.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("connection still open 10 s after a frame of 2^50 bytes was announced")
			}
			break
		}
	}
	// ...and keeps serving everyone else.
	if rep, _ := c.execute("value 1", nil); rep["status"] != "ok" {
		t.Errorf("after a bogus frame: %v", rep)
	}
}
