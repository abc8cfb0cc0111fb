package kernel

import (
	"context"
	"io"
	"log"
	"net"
	"testing"
)

func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		ci   ConnectionInfo
		want string
	}{
		{ConnectionInfo{Transport: "tcp", IP: "127.0.0.1"}, "tcp://127.0.0.1:5555"},
		{ConnectionInfo{Transport: "tcp", IP: "::1"}, "tcp://[::1]:5555"},
		{ConnectionInfo{Transport: "tcp", IP: "[::1]"}, "tcp://[::1]:5555"},
		{ConnectionInfo{Transport: "tcp", IP: "fe80::1%eth0"}, "tcp://[fe80::1%eth0]:5555"},
		{ConnectionInfo{Transport: "tcp", IP: "localhost"}, "tcp://localhost:5555"},
		{ConnectionInfo{Transport: "ipc", IP: "/tmp/k"}, "ipc:///tmp/k-5555"},
	} {
		if got := tc.ci.Endpoint(5555); got != tc.want {
			t.Errorf("Endpoint of ip %q: %s, want %s", tc.ci.IP, got, tc.want)
		}
	}
}

// A kernel whose connection file names the IPv6 loopback, as "::1" or
// "[::1]", binds and answers.
func TestIPv6Loopback(t *testing.T) {
	ports := make([]int, 5)
	for i := range ports {
		l, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback on this machine: %v", err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	for _, ip := range []string{"::1", "[::1]"} {
		t.Run(ip, func(t *testing.T) {
			conn := ConnectionInfo{Transport: "tcp", IP: ip, ShellPort: ports[0], IOPubPort: ports[1],
				StdinPort: ports[2], ControlPort: ports[3], HBPort: ports[4], Key: testKey}
			k, err := New(Config{Conn: conn, Executor: fakeExecutor{}, Log: log.New(io.Discard, "", 0)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan bool)
			go func() { done <- k.Run(ctx) }()
			defer func() { cancel(); <-done }() // the next subtest reuses the ports
			c := dial(t, conn, "ipv6-client")
			rep, outs := c.execute("value 42", nil)
			if rep["status"] != "ok" || len(outs) != 1 || outs[0].Header.MsgType != "execute_result" {
				t.Errorf("execute over %s: reply %v, outputs %s", ip, rep, types(outs))
			}
		})
	}
}
