package lang

import (
	"strings"
	"testing"
	"time"
)

// Runaway recursion ends the cell with a StackOverflow error naming the
// function; the session keeps its state and runs the next cell.
func TestRecursionGuard(t *testing.T) {
	s := newSession(t)
	s.guards.limit = 5000
	mustRun(t, s, "import \"fmt\"\nx := 41\nfunc r(n int) int { return r(n+1) + 1 }")
	start := time.Now()
	rec, res := run(t, s, "fmt.Println(\"before\")\nr(0)\nfmt.Println(\"after\")")
	if res.Err == nil || res.Err.Name != "StackOverflow" ||
		res.Err.Value != "stack overflow: recursion deeper than 5000 calls in r (declared in cell 1, line 3)" {
		t.Fatalf("runaway recursion: %+v", res.Err)
	}
	if rec.stdout.String() != "before\n" {
		t.Errorf("the cell went on after the overflow: stdout %q", rec.stdout.String())
	}
	t.Logf("recursion 5000 deep became an error after %v", time.Since(start))
	if _, res := mustRun(t, s, "x + 1"); plain(res) != "42" {
		t.Errorf("state after the overflow: x + 1 = %q", plain(res))
	}
	if n := s.guards.inFlight.Load(); n != 0 {
		t.Errorf("%d guarded calls still counted after the unwinding", n)
	}

	// Mutual recursion through a method and a function literal, in a goroutine.
	mustRun(t, s, `type T struct{}
var back func(n int) int
func (T) m(n int) int { return back(n) }
back = func(n int) int { return T{}.m(n + 1) }`)
	_, res = run(t, s, "done := make(chan bool)\ngo func() { defer close(done); back(0) }()\n<-done")
	if res.Err == nil || res.Err.Name != "StackOverflow" || !strings.Contains(res.Err.Value, "recursion deeper than 5000 calls in") {
		t.Errorf("recursion in a goroutine: %+v", res.Err)
	}

	// Deep but bounded recursion, and many goroutines in the same function
	// at once (more calls in flight than the limit, none of them deep), are fine.
	if _, res := mustRun(t, s, "func d(n int) int { if n == 0 { return 0 }; return d(n-1) + 1 }\nd(2000)"); plain(res) != "2000" {
		t.Errorf("d(2000) = %q", plain(res))
	}
	_, res = mustRun(t, s, `import "sync"
func hold(wg *sync.WaitGroup, gate chan bool, n int) int { if n > 0 { return hold(wg, gate, n-1) }; wg.Done(); <-gate; return 0 }
var wg sync.WaitGroup
gate := make(chan bool)
for i := 0; i < 3000; i++ { wg.Add(1); go hold(&wg, gate, 2) }
wg.Wait()
close(gate)
"ok"`)
	if plain(res) != `"ok"` {
		t.Errorf("9,000 shallow calls in 3,000 goroutines: %q", plain(res))
	}
}

// Only functions that may recurse through cell code carry the guard.
func TestGuardedFunctions(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `import "math"
func sig(x float64) float64 { return 1 / (1 + math.Exp(-float64(x))) }
func twice(x float64) float64 { return sig(sig(x)) }`)
	s.guards.mu.Lock()
	defer s.guards.mu.Unlock()
	if len(s.guards.sites) != 1 || s.guards.sites[0].name != "twice" {
		t.Errorf("guarded functions %v, want only twice (sig calls only math)", s.guards.sites)
	}
}

// A make larger than the memory available is an OutOfMemory error before
// anything is allocated; the session goes on.
func TestMakeGuard(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "y := 7")
	for _, code := range []string{
		"make([]float64, 1<<34)",
		"n := 1 << 40\nv := make([]int32, 10, n)\nlen(v)",
		"make(map[int64]float64, uint64(1)<<62)",
		"make(chan [1024]byte, 1<<40)",
		"type big [1 << 30]float64\nmake([]big, 1<<20)",
	} {
		_, res := run(t, s, code)
		if res.Err == nil || res.Err.Name != "OutOfMemory" || !strings.HasPrefix(res.Err.Value, "out of memory: make(") || !strings.Contains(res.Err.Value, "available") {
			t.Errorf("%q: %+v", code, res.Err)
		}
	}
	if _, res := mustRun(t, s, "m := 1000\nlen(make([]float64, m, 2*m)) + y"); plain(res) != "1007" {
		t.Errorf("small make: %q", plain(res))
	}
	if _, res := run(t, s, "k := -1\nmake([]int, k)"); res.Err == nil || !strings.Contains(res.Err.Value, "negative len") {
		t.Errorf("negative size: %+v", res.Err)
	}
	for _, code := range []string{"z := 2.5\nmake([]int, z)", "w := \"3\"\nmake([]int, w)"} {
		if _, res := run(t, s, code); res.Err == nil || !strings.Contains(res.Err.Value, "non-integer size") {
			t.Errorf("%q: %+v", code, res.Err)
		}
	}
	if _, res := mustRun(t, s, "len(make([]byte, 1e6))"); plain(res) != "1000000" {
		t.Errorf("make([]byte, 1e6): %q", plain(res))
	}
}

func TestShortenFrames(t *testing.T) {
	tb := []string{"panic: deep"}
	for range 1000 {
		tb = append(tb, "    at r (cell:1:20)")
	}
	tb = append(tb, "    at cell (cell:2:1)")
	got := shortenFrames(tb)
	want := []string{"panic: deep", "    at r (cell:1:20)", "    at r (cell:1:20)", "    at r (cell:1:20)",
		"    [previous line repeated 997 more times]", "    at cell (cell:2:1)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shortenFrames = %q", got)
	}
	var alt []string
	for i := range 200 {
		alt = append(alt, "f"[:1]+string(rune('a'+i%2)))
	}
	if got := shortenFrames(alt); len(got) != 61 || got[50] != "    [140 more lines]" {
		t.Errorf("alternating frames: %d lines, %q", len(got), got[50])
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[uint64]string{512: "512 B", 1536: "1.5 KiB", 128 << 30: "128.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// The guard keeps the positions of a guarded function: a runtime error's
// frame is at the statement that failed, not at the guard.
func TestGuardKeepsPositions(t *testing.T) {
	s := newSession(t)
	_, res := run(t, s, "func h(x []int, n int) int {\n\tif n == 0 {\n\t\treturn x[5]\n\t}\n\treturn h(x, n-1)\n}\nh(nil, 3)")
	if res.Err == nil || len(res.Err.Traceback) < 2 || !strings.HasPrefix(res.Err.Traceback[1], "    at h (cell 1, line 3, column 3)") {
		t.Errorf("frames of a guarded function: %+v", res.Err)
	}
	_, res = run(t, s, "func g(n int) int { return g(n-1) + undefinedVar }")
	if res.Err == nil || !strings.HasPrefix(res.Err.Value, "cell:1:37: undefined: undefinedVar") {
		t.Errorf("compile error in a one-line guarded function: %+v", res.Err)
	}
}
