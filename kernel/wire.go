package kernel

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"sync"
	"time"
)

// ProtocolVersion is the Jupyter messaging protocol version the kernel speaks.
const ProtocolVersion = "5.4"

// delimiter separates routing identities from the message proper.
var delimiter = []byte("<IDS|MSG>")

// Header is a Jupyter message header.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"` // ISO 8601
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one Jupyter message as it travels on a socket.
type Message struct {
	Identities [][]byte        // ZeroMQ routing prefix (ROUTER sockets), before <IDS|MSG>
	Header     Header          // the parsed header
	RawHeader  json.RawMessage // the header exactly as received, echoed as parent_header in replies
	Parent     json.RawMessage // parent_header
	Metadata   json.RawMessage // metadata dict
	Content    json.RawMessage // content dict
	Buffers    [][]byte        // extra binary frames
}

// Errors returned by ParseFrames; they are wrapped with detail.
var (
	ErrNoDelimiter  = errors.New("no <IDS|MSG> delimiter")
	ErrShortMessage = errors.New("fewer than 5 frames after <IDS|MSG>")
	ErrBadSignature = errors.New("signature does not match")
	ErrBadHeader    = errors.New("bad header")
)

// Signer computes and checks HMAC-SHA256 signatures of messages. The zero
// value (no key) signs with the empty string and accepts any signature, as
// the protocol prescribes for an empty key. A Signer is safe for concurrent use.
type Signer struct {
	key  []byte
	pool sync.Pool
}

// NewSigner returns a Signer for key (the connection file's "key").
func NewSigner(key []byte) *Signer {
	s := &Signer{key: bytes.Clone(key)}
	s.pool.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

// Sign returns the hex signature of the four signed parts of a message
// (header, parent_header, metadata, content), or "" without a key.
func (s *Signer) Sign(parts ...[]byte) string {
	if s == nil || len(s.key) == 0 {
		return ""
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(s.mac(sum[:0], parts))
}

func (s *Signer) mac(dst []byte, parts [][]byte) []byte {
	h := s.pool.Get().(hash.Hash)
	h.Reset()
	for _, p := range parts {
		h.Write(p)
	}
	dst = h.Sum(dst)
	s.pool.Put(h)
	return dst
}

// Verify reports whether sig (hex) is the signature of parts, comparing in
// constant time. Without a key every signature is accepted.
func (s *Signer) Verify(sig []byte, parts ...[]byte) bool {
	if s == nil || len(s.key) == 0 {
		return true
	}
	if len(sig) != 2*sha256.Size {
		return false
	}
	var want, got [sha256.Size]byte
	if _, err := hex.Decode(got[:], sig); err != nil {
		return false
	}
	return hmac.Equal(s.mac(want[:0], parts), got[:])
}

// ParseFrames splits the frames of a received multipart message into a
// Message, checking the signature with s. It never panics, whatever the frames.
func ParseFrames(frames [][]byte, s *Signer) (*Message, error) {
	d := -1
	for i, f := range frames {
		if bytes.Equal(f, delimiter) {
			d = i
			break
		}
	}
	if d < 0 {
		return nil, fmt.Errorf("%w among %d frames", ErrNoDelimiter, len(frames))
	}
	rest := frames[d+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("%w: got %d", ErrShortMessage, len(rest))
	}
	if !s.Verify(rest[0], rest[1], rest[2], rest[3], rest[4]) {
		return nil, ErrBadSignature
	}
	m := &Message{
		Identities: frames[:d],
		RawHeader:  rest[1],
		Parent:     rest[2],
		Metadata:   rest[3],
		Content:    rest[4],
		Buffers:    rest[5:],
	}
	if err := json.Unmarshal(rest[1], &m.Header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if m.Header.MsgType == "" {
		return nil, fmt.Errorf("%w: no msg_type", ErrBadHeader)
	}
	for _, part := range []struct {
		name string
		raw  json.RawMessage
	}{{"parent_header", m.Parent}, {"metadata", m.Metadata}, {"content", m.Content}} {
		if !isJSONObject(part.raw) {
			return nil, fmt.Errorf("%s of %s %s is not a JSON object", part.name, m.Header.MsgType, m.Header.MsgID)
		}
	}
	return m, nil
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{' && json.Valid(b)
}

// Frames serialises m into the frames of a multipart message signed by s.
func (m *Message) Frames(s *Signer) [][]byte {
	frames := make([][]byte, 0, len(m.Identities)+6+len(m.Buffers))
	frames = append(frames, m.Identities...)
	frames = append(frames, delimiter,
		[]byte(s.Sign(m.RawHeader, m.Parent, m.Metadata, m.Content)),
		m.RawHeader, m.Parent, m.Metadata, m.Content)
	return append(frames, m.Buffers...)
}

// Unmarshal decodes the message content into v.
func (m *Message) Unmarshal(v any) error {
	if err := json.Unmarshal(m.Content, v); err != nil {
		return fmt.Errorf("content of %s %s: %w", m.Header.MsgType, m.Header.MsgID, err)
	}
	return nil
}

// newMessage builds a message of type msgType in session, child of parent
// (nil for none), with content marshalled from v.
func newMessage(session, msgType string, parent *Message, content any) (*Message, error) {
	h := Header{
		MsgID:    newID(),
		Session:  session,
		Username: username,
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		MsgType:  msgType,
		Version:  ProtocolVersion,
	}
	rawHeader, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("marshal %s header: %w", msgType, err)
	}
	c, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("marshal %s content: %w", msgType, err)
	}
	m := &Message{Header: h, RawHeader: rawHeader, Parent: json.RawMessage("{}"),
		Metadata: json.RawMessage("{}"), Content: c}
	if parent != nil {
		m.Parent = parent.RawHeader
		m.Identities = parent.Identities
	}
	return m, nil
}

var username = func() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "harmonium"
}()

// newID returns a random UUID-4 string.
func newID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // never fails: crypto/rand crashes the program instead (Go ≥ 1.24)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[:4], u[4:6], u[6:8], u[8:10], u[10:])
}
