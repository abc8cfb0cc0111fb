// Package kernel implements the Jupyter messaging protocol 5.4 for Harmonium over
// ZeroMQ (github.com/go-zeromq/zmq4, pure Go).
//
// The kernel moves messages and knows nothing of Go semantics: it parses the
// connection file, binds the shell, control, stdin (ROUTER), iopub (PUB) and
// heartbeat (REP) sockets, signs and verifies every message with HMAC-SHA256,
// and routes requests to an [Executor], the small interface through which the
// notebook language (package lang, wired in cmd/harmonium) runs cells.
//
// Execution requests go through one queue, served in order by one goroutine;
// the control channel (interrupt, shutdown) is served on its own goroutine so
// it is never blocked by a running cell. Malformed frames, bad signatures,
// replayed messages (a signature seen among the last 65536), unknown message
// types and vanished clients are logged and dropped; the kernel keeps serving.
//
// The iopub socket is the kernel's own PUB implementation over zmq4's ZMTP
// handshake (see iopub.go): each subscriber has a bounded queue, so a
// frontend that stops reading (suspended, asleep) misses messages instead of
// holding up output for every other client, as with libzmq's high-water mark.
package kernel
