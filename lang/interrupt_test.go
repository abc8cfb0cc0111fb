package lang

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
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

// TestInterruptWithoutContext checks that long rbmcore calls made from a
// cell without a context (or with a nil one) stop within a second of the
// interrupt, and that the session keeps working.
func TestInterruptWithoutContext(t *testing.T) {
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
		{"J, err := mapping.Pairwise(big)", "rbmcore/mapping."},
		{"mp, _ := mapping.New(big)\nmp.Pairwise(nil)", "rbmcore/mapping."},
		{"pl, err := plm.PseudoLikelihood(v)", "rbmcore/rbm.(*RBM).pl"},
		{"chains.Run(nil, 100000000, nil)", "rbmcore/rbm.(*Chains).Run"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
		res := s.Execute(ctx, c.cell, &recorder{})
		if res.Err == nil {
			t.Errorf("%q: not interrupted", c.cell)
		}
		deadline := cancelled.Add(time.Second)
		for nativeFrames(c.frame) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if nativeFrames(c.frame) {
			t.Errorf("%q: the native call (%s) still runs 1 s after the interrupt", c.cell, c.frame)
		}
		if _, res := mustRun(t, s, "1 + 1"); plain(res) != "2" {
			t.Errorf("after interrupting %q: 1 + 1 = %q", c.cell, plain(res))
		}
	}
	if _, res := mustRun(t, s, "rbm.DefaultContext() == ctx"); plain(res) != "true" {
		t.Errorf("in a cell, rbm.DefaultContext() is not the cell's ctx: %q", plain(res))
	}
	// Outside a cell, the default context is the background again.
	if rbm.DefaultContext() != context.Background() {
		t.Errorf("after the cell, rbm.DefaultContext() = %v, want context.Background()", rbm.DefaultContext())
	}
}

// TestCallbackPanics checks that a panic in an interpreted callback called
// by rbmcore (a progress function, OnEpoch) is the cell's error and that the
// session survives.
func TestCallbackPanics(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `m := rbm.New(rbm.Binary(200), rbm.DReLU(20), rbm.Seed(1), rbm.WeightScale(0.3))
small := rbm.New(rbm.Binary(9), rbm.Binary(3), rbm.Seed(1))
set, _ := data.BarsAndStripes(3)`)
	for _, cell := range []string{
		"mp, _ := mapping.New(m)\nmp.Progress = func(done, total int) { panic(\"progress bug\") }\nmp.Pairwise(nil)",
		"ch, _ := rbm.NewChains(m, 20, 1)\nch.Run(ctx, 10, func(done, total int) { panic(\"progress bug\") })",
		"tr := train.Trainer{Epochs: 3, Batch: 4, LR: 0.01, OnEpoch: func(r train.Record) bool { panic(\"progress bug\") }}\ntr.Fit(nil, small, set)",
	} {
		rec, res := run(t, s, cell)
		if res.Err == nil || !strings.Contains(res.Err.Value, "progress bug") {
			t.Errorf("%q: error %+v, want the callback's panic (stderr %q)", cell, res.Err, rec.stderr.String())
		}
		if _, res := mustRun(t, s, "2 * 21"); plain(res) != "42" {
			t.Errorf("after %q: 2 * 21 = %q", cell, plain(res))
		}
	}
}
