package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RFC 4231 test case 2: HMAC-SHA256 of "what do ya want for nothing?" with key "Jefe".
// The message is split into four parts to check that Sign hashes their concatenation.
func TestSignRFC4231(t *testing.T) {
	s := NewSigner([]byte("Jefe"))
	const want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	got := s.Sign([]byte("what do "), []byte("ya want "), []byte(""), []byte("for nothing?"))
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	parts := [][]byte{[]byte("what do ya want for nothing?"), nil, nil, nil}
	if !s.Verify([]byte(want), parts...) {
		t.Error("Verify rejects the RFC signature")
	}
	if !s.Verify([]byte(strings.ToUpper(want)), parts...) {
		t.Error("Verify rejects upper-case hex")
	}
	for _, bad := range []string{"", want[:62], want + "00", "x" + want[1:], "4" + want[1:]} {
		if s.Verify([]byte(bad), parts...) {
			t.Errorf("Verify accepts %q", bad)
		}
	}
	var none *Signer
	if none.Sign([]byte("x")) != "" || !none.Verify([]byte("anything"), []byte("x")) || NewSigner(nil).Sign([]byte("x")) != "" {
		t.Error("a signer without key must sign with \"\" and accept anything")
	}
}

func TestParseFrames(t *testing.T) {
	s := NewSigner([]byte("key"))
	m, err := newMessage("sess", "execute_request", nil, map[string]any{"code": "1+1"})
	if err != nil {
		t.Fatal(err)
	}
	m.Identities = [][]byte{[]byte("id1"), []byte("id2")}
	m.Buffers = [][]byte{{0, 1, 2}}
	frames := m.Frames(s)
	if len(frames) != 9 || string(frames[2]) != "<IDS|MSG>" {
		t.Fatalf("frames: %q", frames)
	}
	got, err := ParseFrames(frames, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header != m.Header || len(got.Identities) != 2 || string(got.Identities[1]) != "id2" ||
		!bytes.Equal(got.Content, m.Content) || len(got.Buffers) != 1 || got.Buffers[0][2] != 2 {
		t.Errorf("round trip: %+v", got)
	}
	var c struct{ Code string }
	if err := got.Unmarshal(&c); err != nil || c.Code != "1+1" {
		t.Errorf("Unmarshal: %q, %v", c.Code, err)
	}

	replace := func(i int, b string) [][]byte {
		f := append([][]byte(nil), frames...)
		f[i] = []byte(b)
		return f
	}
	cases := []struct {
		name   string
		frames [][]byte
		want   error
	}{
		{"no delimiter", frames[3:], ErrNoDelimiter},
		{"short", frames[:6], ErrShortMessage},
		{"bad signature", replace(3, strings.Repeat("0", 64)), ErrBadSignature},
		{"tampered content", replace(7, `{"code":"rm -rf"}`), ErrBadSignature},
		{"empty", nil, ErrNoDelimiter},
	}
	for _, tc := range cases {
		if _, err := ParseFrames(tc.frames, s); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	// Correctly signed but malformed JSON parts.
	for _, part := range []struct{ header, content string }{
		{`not json`, `{}`}, {`{"msg_id":"x"}`, `{}`}, {`{"msg_type":"a"}`, `[]`}, {`{"msg_type":"a"}`, `{`},
	} {
		bad := &Message{RawHeader: []byte(part.header), Parent: []byte("{}"), Metadata: []byte("{}"), Content: []byte(part.content)}
		if _, err := ParseFrames(bad.Frames(s), s); err == nil {
			t.Errorf("header %s content %s accepted", part.header, part.content)
		}
	}
}

// FuzzParseFrames feeds arbitrary frames (data split at 0x00 bytes) to the
// parser with and without a key. It must never panic, and whatever it accepts
// must survive re-serialisation unchanged.
func FuzzParseFrames(f *testing.F) {
	s := NewSigner([]byte("fuzz-key"))
	m, _ := newMessage("sess", "execute_request", nil, map[string]any{"code": "fmt.Println(1)"})
	m.Identities = [][]byte{[]byte("id")}
	f.Add(bytes.Join(m.Frames(s), []byte{0}))
	f.Add(bytes.Join(m.Frames(nil), []byte{0}))
	f.Add([]byte("<IDS|MSG>\x00\x00{}\x00{}\x00{}\x00{}"))
	f.Add([]byte("<IDS|MSG>\x00\x00{\"msg_type\":\"x\"}\x00{}\x00{}\x00{}\x00buf"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		frames := bytes.Split(data, []byte{0})
		for _, signer := range []*Signer{s, nil} {
			got, err := ParseFrames(frames, signer)
			if err != nil {
				continue
			}
			again, err := ParseFrames(got.Frames(signer), signer)
			if err != nil {
				t.Fatalf("re-parse of an accepted message: %v", err)
			}
			if again.Header != got.Header || !bytes.Equal(again.Content, got.Content) || len(again.Buffers) != len(got.Buffers) {
				t.Fatalf("round trip changed the message")
			}
		}
	})
}

// FuzzVerify checks that Verify accepts exactly the signature Sign produces.
func FuzzVerify(f *testing.F) {
	f.Add([]byte("k"), []byte("{}"), []byte("{}"), []byte(""), []byte(`{"a":1}`), []byte("00"))
	f.Add([]byte(""), []byte("h"), []byte("p"), []byte("m"), []byte("c"), []byte(strings.Repeat("ab", 32)))
	f.Fuzz(func(t *testing.T, key, h, p, md, c, sig []byte) {
		s := NewSigner(key)
		good := s.Sign(h, p, md, c)
		if !s.Verify([]byte(good), h, p, md, c) {
			t.Fatal("Verify rejects Sign's signature")
		}
		if len(key) > 0 && !strings.EqualFold(string(sig), good) && s.Verify(sig, h, p, md, c) {
			t.Fatalf("Verify accepts %q, signature is %s", sig, good)
		}
	})
}

func TestConnectionFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := map[string]any{"transport": "tcp", "ip": "127.0.0.1", "shell_port": 1001, "iopub_port": 1002,
		"stdin_port": 1003, "control_port": 1004, "hb_port": 1005, "key": "k", "signature_scheme": "hmac-sha256",
		"kernel_name": "harmonium"}
	b, _ := json.Marshal(good)
	ci, err := ReadConnectionFile(write("good.json", string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if ci.Endpoint(ci.ShellPort) != "tcp://127.0.0.1:1001" || ci.Key != "k" || ci.HBPort != 1005 {
		t.Errorf("parsed %+v", ci)
	}
	good["transport"], good["ip"] = "ipc", "/tmp/kernel-x"
	b, _ = json.Marshal(good)
	if ci, err = ReadConnectionFile(write("ipc.json", string(b))); err != nil || ci.Endpoint(1003) != "ipc:///tmp/kernel-x-1003" {
		t.Errorf("ipc: %v %v", ci.Endpoint(1003), err)
	}
	for name, tc := range map[string]struct{ body, want string }{
		"garbled.json":   {`{"ip": `, "not valid JSON"},
		"noport.json":    {`{"ip":"127.0.0.1","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4}`, "hb_port"},
		"bigport.json":   {`{"ip":"127.0.0.1","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":70000}`, "70000"},
		"transport.json": {`{"transport":"udp","ip":"x","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5}`, "udp"},
		"scheme.json":    {`{"ip":"x","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"signature_scheme":"hmac-md5"}`, "hmac-md5"},
		"noip.json":      {`{"shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5}`, "ip"},
	} {
		p := write(name, tc.body)
		_, err := ReadConnectionFile(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to name the file and %q", name, err, tc.want)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadConnectionFile(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
}
