package kernel

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// ConnectionInfo is the content of a Jupyter connection file: where the five
// sockets live and how messages are signed.
type ConnectionInfo struct {
	Transport       string `json:"transport"`        // "tcp" or "ipc"
	IP              string `json:"ip"`               // an address for tcp, a path prefix for ipc
	ShellPort       int    `json:"shell_port"`       // ROUTER: execution and introspection requests
	IOPubPort       int    `json:"iopub_port"`       // PUB: outputs and status broadcast
	StdinPort       int    `json:"stdin_port"`       // ROUTER: input requests to the frontend
	ControlPort     int    `json:"control_port"`     // ROUTER: interrupt and shutdown
	HBPort          int    `json:"hb_port"`          // REP: heartbeat echo
	Key             string `json:"key"`              // HMAC key; empty disables signing
	SignatureScheme string `json:"signature_scheme"` // "hmac-sha256" (or empty when Key is empty)
	KernelName      string `json:"kernel_name,omitempty"`
}

// ReadConnectionFile reads and validates the connection file at path.
// Errors name the file and the offending field.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var ci ConnectionInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return ci, fmt.Errorf("connection file: %w", err)
	}
	if err := json.Unmarshal(b, &ci); err != nil {
		return ci, fmt.Errorf("connection file %s: not valid JSON: %w", path, err)
	}
	if err := ci.Validate(); err != nil {
		return ci, fmt.Errorf("connection file %s: %w", path, err)
	}
	return ci, nil
}

// Validate checks the transport, the address, the ports and the signature
// scheme, filling in the default transport ("tcp") and scheme when empty.
func (ci *ConnectionInfo) Validate() error {
	if ci.Transport == "" {
		ci.Transport = "tcp"
	}
	if ci.Transport != "tcp" && ci.Transport != "ipc" {
		return fmt.Errorf("transport %q: want \"tcp\" or \"ipc\"", ci.Transport)
	}
	if ci.IP == "" {
		return fmt.Errorf("ip: missing")
	}
	for _, p := range []struct {
		name string
		port int
	}{{"shell_port", ci.ShellPort}, {"iopub_port", ci.IOPubPort}, {"stdin_port", ci.StdinPort},
		{"control_port", ci.ControlPort}, {"hb_port", ci.HBPort}} {
		if p.port <= 0 || p.port > 65535 {
			return fmt.Errorf("%s: %d is not a port number (1..65535)", p.name, p.port)
		}
	}
	switch ci.SignatureScheme {
	case "hmac-sha256":
	case "":
		ci.SignatureScheme = "hmac-sha256"
	default:
		return fmt.Errorf("signature_scheme %q: only \"hmac-sha256\" is supported", ci.SignatureScheme)
	}
	return nil
}

// Endpoint returns the ZeroMQ endpoint of a port: tcp://IP:PORT (an IPv6
// address in brackets, tcp://[::1]:PORT), or ipc://IP-PORT as Jupyter names
// its ipc sockets.
func (ci ConnectionInfo) Endpoint(port int) string {
	network, addr := ci.listenAddr(port)
	if network == "unix" {
		return "ipc://" + addr
	}
	return "tcp://" + addr
}

// listenAddr returns the network ("tcp" or "unix") and address to listen on
// for a port. The IP may be an IPv6 address written with or without
// brackets, as Jupyter writes "::1" and users "[::1]".
func (ci ConnectionInfo) listenAddr(port int) (network, addr string) {
	if ci.Transport == "ipc" {
		return "unix", fmt.Sprintf("%s-%d", ci.IP, port)
	}
	host := ci.IP
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return "tcp", net.JoinHostPort(host, strconv.Itoa(port))
}
