package kernel_test

import (
	"context"
	"fmt"
	"log"

	"github.com/harmonium-rbm/harmonium/kernel"
)

// Messages are signed with HMAC-SHA256 over their header, parent header,
// metadata and content; Verify compares in constant time.
func ExampleSigner() {
	s := kernel.NewSigner([]byte("Jefe"))
	sig := s.Sign([]byte("what do ya want "), []byte("for nothing?"), nil, nil)
	fmt.Println(sig)
	fmt.Println(s.Verify([]byte(sig), []byte("what do ya want for nothing?"), nil, nil, nil))
	fmt.Println(s.Verify([]byte(sig), []byte("what do ya want for something?"), nil, nil, nil))
	// Output:
	// 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843
	// true
	// false
}

// ParseFrames splits a ROUTER socket's frames into identities and message parts.
func ExampleParseFrames() {
	s := kernel.NewSigner([]byte("secret"))
	header := []byte(`{"msg_id":"1","session":"s","username":"u","date":"2026-01-01T00:00:00Z","msg_type":"kernel_info_request","version":"5.4"}`)
	parts := [][]byte{header, []byte("{}"), []byte("{}"), []byte("{}")}
	frames := [][]byte{[]byte("client-id"), []byte("<IDS|MSG>"), []byte(s.Sign(parts...))}
	frames = append(frames, parts...)

	m, err := kernel.ParseFrames(frames, s)
	fmt.Println(m.Header.MsgType, string(m.Identities[0]), err)

	frames[2] = []byte("0000")
	_, err = kernel.ParseFrames(frames, s)
	fmt.Println(err)
	// Output:
	// kernel_info_request client-id <nil>
	// signature does not match
}

// Endpoints follow Jupyter's conventions for both transports.
func ExampleConnectionInfo_Endpoint() {
	tcp := kernel.ConnectionInfo{Transport: "tcp", IP: "127.0.0.1"}
	ipc := kernel.ConnectionInfo{Transport: "ipc", IP: "/tmp/kernel-1"}
	fmt.Println(tcp.Endpoint(5555))
	fmt.Println(ipc.Endpoint(1))
	// Output:
	// tcp://127.0.0.1:5555
	// ipc:///tmp/kernel-1-1
}

// History answers the three kinds of history_request.
func ExampleHistory() {
	h, _ := kernel.OpenHistory("") // in memory; a path makes it persistent
	h.Append(1, "x := 1")
	h.Append(2, "fmt.Println(x)")
	h.Append(3, "x := 2")
	for _, e := range h.Search("x := *", 0, false) {
		fmt.Println(e.Session, e.Line, e.Source)
	}
	fmt.Println(h.Tail(1)[0].Source)
	fmt.Println(len(h.Range(0, 2, 0)))
	// Output:
	// 1 1 x := 1
	// 1 3 x := 2
	// x := 2
	// 2
}

// echo is an Executor that shows each cell's code as its result.
type echo struct{}

func (echo) Execute(_ context.Context, code string, _ kernel.ExecOptions, out kernel.Output) kernel.ExecResult {
	out.Stream("stdout", "running\n")
	return kernel.ExecResult{Data: map[string]any{"text/plain": code}}
}
func (echo) Complete(_ string, cursor int) kernel.Completion {
	return kernel.Completion{Start: cursor, End: cursor}
}
func (echo) Inspect(string, int, int) (map[string]any, bool) { return nil, false }
func (echo) IsComplete(string) (status, indent string)       { return "complete", "" }

// A kernel serves an Executor on the sockets of a connection file until a
// shutdown_request arrives.
func Example() {
	conn, err := kernel.ReadConnectionFile("kernel-1234.json")
	if err != nil {
		log.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{Conn: conn, Executor: echo{}, ImplementationVersion: "1.0"})
	if err != nil {
		log.Fatal(err) // e.g. a port in use, named in the message
	}
	restart := k.Run(context.Background())
	fmt.Println("restart requested:", restart)
}
