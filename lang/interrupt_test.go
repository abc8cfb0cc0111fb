package lang

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/traefik/yaegi/interp"
)

// nativeFrames reports whether any goroutine is inside a function whose
// name contains fn (e.g. "rbmcore/mapping.").
func nativeFrames(fn string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), fn)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestInterruptRbmcore checks that long rbmcore calls given the cell's ctx
// are answered within a second of the interrupt: they stop within that
// second, or, when the call checks its context too rarely to stop in time (a
// loaded machine, the race detector), the cell is abandoned and the next
// cell waits for the call to end; either way the session keeps working.
func TestInterruptRbmcore(t *testing.T) {
	s := newSession(t)
	// A binary–dReLU model goes through Pairwise's elementwise workers
	// (about 1e8 CGF evaluations, tens of seconds uninterrupted); the
	// pseudo-likelihood of 2000 rows takes minutes.
	mustRun(t, s, `import "gonum.org/v1/gonum/mat"
big := rbm.New(rbm.Binary(1500), rbm.DReLU(100), rbm.Seed(1), rbm.WeightScale(0.3))
plm := rbm.New(rbm.Binary(400), rbm.Binary(400), rbm.Seed(2))
v := mat.NewDense(2000, 400, nil)
chains, _ := rbm.NewChains(plm, 50, 1)`)
	for _, c := range []struct{ cell, frame string }{
		{"J, err := mapping.Pairwise(ctx, big)", "rbmcore/mapping."},
		{"mp, _ := mapping.New(big)\nmp.Pairwise(ctx)", "rbmcore/mapping."},
		{"pl, err := plm.PseudoLikelihood(ctx, v)", "rbmcore/rbm.(*RBM).pl"},
		{"chains.Run(ctx, 100000000, nil)", "rbmcore/rbm.(*Chains).Run"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		results := make(chan Result, 1)
		go func() { results <- s.Execute(ctx, c.cell, &recorder{}) }()
		// Interrupt once the native call is seen running.
		for start := time.Now(); !nativeFrames(c.frame); time.Sleep(20 * time.Millisecond) {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%q: no goroutine in %s after 10 s", c.cell, c.frame)
			}
		}
		cancelled := time.Now()
		cancel()
		res := <-results
		if d := time.Since(cancelled); d > time.Second {
			t.Errorf("%q: the interrupt was answered after %v, want within 1 s", c.cell, d)
		}
		if res.Err == nil || res.Err.Name != "Interrupted" {
			t.Errorf("%q: error %+v, want Interrupted", c.cell, res.Err)
		}
		if res.Err != nil && !strings.Contains(res.Err.Value, "still running") {
			// Stopped, not abandoned: the native call has ended.
			for nativeFrames(c.frame) && time.Since(cancelled) < time.Second {
				time.Sleep(20 * time.Millisecond)
			}
			if nativeFrames(c.frame) {
				t.Errorf("%q: reported stopped, but the native call (%s) still runs 1 s after the interrupt", c.cell, c.frame)
			}
		}
		if _, res := mustRun(t, s, "1 + 1"); plain(res) != "2" {
			t.Errorf("after interrupting %q: 1 + 1 = %q", c.cell, plain(res))
		}
	}
}

// TestCallbackPanics checks that a panic in an interpreted callback called
// by rbmcore (a progress function, OnEpoch) is the cell's error, that one in
// interpreted code rbmcore runs on its worker goroutines is the call's
// error, and that the session survives both.
func TestCallbackPanics(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `m := rbm.New(rbm.Binary(200), rbm.DReLU(20), rbm.Seed(1), rbm.WeightScale(0.3))
small := rbm.New(rbm.Binary(9), rbm.Binary(3), rbm.Seed(1))
set, _ := data.BarsAndStripes(3)`)
	for _, cell := range []string{
		"mp, _ := mapping.New(m)\nmp.Progress = func(done, total int) { panic(\"progress bug\") }\nmp.Pairwise(nil)",
		"ch, _ := rbm.NewChains(m, 20, 1)\nch.Run(ctx, 10, func(done, total int) { panic(\"progress bug\") })",
		"train.Fit(ctx, small, set, train.CD{}, nil, train.Options{Epochs: 3, Batch: 4, LR: 0.01, OnEpoch: func(r train.Record) bool { panic(\"progress bug\") }})",
	} {
		rec, res := run(t, s, cell)
		if res.Err == nil || !strings.Contains(res.Err.Value, "progress bug") {
			t.Errorf("%q: error %+v, want the callback's panic (stderr %q)", cell, res.Err, rec.stderr.String())
		}
		if _, res := mustRun(t, s, "2 * 21"); plain(res) != "42" {
			t.Errorf("after %q: 2 * 21 = %q", cell, plain(res))
		}
	}
	// A layer written in a cell whose Sample panics, called by rbmcore on
	// its worker goroutines: the panic is the call's error.
	mustRun(t, s, `import "math/rand/v2"
type Buggy struct{ *rbm.BinaryLayer }
func (b Buggy) Sample(rng *rand.Rand, in, out []float64, beta float64) error { panic("layer bug") }`)
	_, res := mustRun(t, s, "bm := rbm.New(rbm.Binary(8), Buggy{rbm.Binary(4)}, rbm.Seed(1))\nch, err := rbm.NewChains(bm, 64, 1)\nif err == nil { err = ch.Run(ctx, 3, nil) }\nerr")
	if !strings.Contains(plain(res), "panic in a worker goroutine: layer bug") {
		t.Errorf("interpreted layer panicking on a worker goroutine: result %q, want the panic as an error", plain(res))
	}
	if _, res := mustRun(t, s, "2 * 21"); plain(res) != "42" {
		t.Errorf("after the layer panic: 2 * 21 = %q", plain(res))
	}
}

// useSlowPackage makes a compiled package "slowpkg" importable in s whose
// Slow(ms) ignores every context: it sleeps, prints "LATE" (compiled
// output, after the interrupt) and returns 7. The returned channel receives
// when a call of Slow starts.
func useSlowPackage(t *testing.T, s *Session) <-chan struct{} {
	t.Helper()
	started := make(chan struct{}, 16)
	syms := map[string]reflect.Value{"Slow": reflect.ValueOf(func(ms int) int {
		started <- struct{}{}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		fmt.Println("LATE")
		return 7
	}), "Pair": reflect.ValueOf(func(ms int) (int, int) {
		started <- struct{}{}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return 7, 8
	})}
	if err := s.in.Use(interp.Exports{"slowpkg/slowpkg": syms}); err != nil {
		t.Fatal(err)
	}
	s.exports["slowpkg"], s.names["slowpkg"] = syms, "slowpkg"
	mustRun(t, s, "import \"slowpkg\"\nimport \"fmt\"")
	return started
}

// TestInterruptAbandonedCell interrupts cells inside a compiled call that
// ignores its context: the interrupt is answered within a second; none of
// the cell's further statements runs, neither its variables nor the
// interrupted statement's are assigned, and nothing it prints afterwards
// reaches the next cell, which waits for the call to return.
func TestInterruptAbandonedCell(t *testing.T) {
	s := newSession(t)
	started := useSlowPackage(t, s)
	for _, c := range []struct{ name, cell string }{
		{"statement after the call", "x := 1\ny := slowpkg.Slow(1500)\nx = 2\nfmt.Println(\"AFTER\", x, y)"},
		{"same statement", "x := 1\ny := 0\nfmt.Println(\"AFTER\", slowpkg.Slow(1500)); x, y = 2, 3"},
		{"final expression", "x := 1\ny := 0\nslowpkg.Slow(1500) + 1"},
		{"assignment", "x := 1\ny := 0\ny = slowpkg.Slow(1500)"},
		{"tuple assignment", "x := 1\ny := 0\nx, y = slowpkg.Pair(1500)"},
		{"in a function", "x := 1\ny := 0\nfunc() { slowpkg.Slow(1500); x, y = 2, 3; fmt.Println(\"AFTER\") }()"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			results := make(chan Result, 1)
			go func() { results <- s.Execute(ctx, c.cell, &recorder{}) }()
			select {
			case <-started:
			case <-time.After(20 * time.Second):
				t.Fatal("the compiled call did not start within 20 s")
			}
			t0 := time.Now()
			cancel()
			res := <-results
			if d := time.Since(t0); d > time.Second {
				t.Errorf("the interrupt was answered after %v, want within 1 s", d)
			}
			if res.Err == nil || res.Err.Name != "Interrupted" || !strings.Contains(res.Err.Value, "still running a compiled call") {
				t.Fatalf("error %+v, want Interrupted naming the compiled call still running", res.Err)
			}
			rec, res := mustRun(t, s, "fmt.Println(\"NEXT\")\nfmt.Sprint(x, \" \", y)")
			if out := rec.stdout.String(); out != "NEXT\n" {
				t.Errorf("the next cell printed %q, want only its own NEXT", out)
			}
			if got := plain(res); got != `"1 0"` {
				t.Errorf("after the abandoned cell, x y = %s, want \"1 0\" (no statement of it ran after the interrupt)", got)
			}
			if !strings.Contains(rec.stderr.String(), "Waiting for cell") || !strings.Contains(rec.stderr.String(), "discarded") {
				t.Errorf("the next cell's stderr %q does not say it waited and discarded the late output", rec.stderr.String())
			}
		})
	}
}

// TestInterruptSleep checks that time.Sleep in a cell ends on interrupt,
// the cell being stopped (not abandoned) before its next statement.
func TestInterruptSleep(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "import \"time\"\ny := 5")
	for i := 0; i < 5; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		results := make(chan Result, 1)
		go func() { results <- s.Execute(ctx, "time.Sleep(time.Hour)\ny = 6", &recorder{}) }()
		time.Sleep(100 * time.Millisecond)
		t0 := time.Now()
		cancel()
		res := <-results
		if d := time.Since(t0); d > time.Second {
			t.Errorf("the interrupted sleep returned after %v", d)
		}
		if res.Err == nil || res.Err.Name != "Interrupted" || strings.Contains(res.Err.Value, "still running") {
			t.Errorf("error %+v, want Interrupted, stopped", res.Err)
		}
		if _, res := mustRun(t, s, "y"); plain(res) != "5" {
			t.Fatalf("after the interrupted sleep, y = %s: the statement after it ran", plain(res))
		}
	}
}
