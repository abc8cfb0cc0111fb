package kernel

import (
	"testing"
)

// BenchmarkExecuteRoundTrip measures the kernel's share of a trivial cell's
// round trip: an execute_request on the shell socket (ipc) to its
// execute_reply, with the fake executor, including the iopub messages up to
// idle. Run: go test -bench ExecuteRoundTrip ./kernel
func BenchmarkExecuteRoundTrip(b *testing.B) {
	c, _, _ := startKernel(b, nil)
	ct := map[string]any{"code": "value 2", "silent": false, "store_history": true,
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": true}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := c.request(c.shell, "execute_request", ct)
		c.reply(c.shellIn, req)
		c.iopubUntilIdle(req)
	}
}
