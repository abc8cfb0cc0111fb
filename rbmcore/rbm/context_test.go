//lint:file-ignore SA1012 these tests check what a nil context means to the functions that accept one.

package rbm

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// withDefault installs ctx as the default context for the rest of the test.
func withDefault(t *testing.T, ctx context.Context) {
	prev := SetDefaultContext(func() context.Context { return ctx })
	t.Cleanup(func() { SetDefaultContext(prev) })
}

func TestDefaultContextHook(t *testing.T) {
	if ctx := DefaultContext(); ctx != context.Background() {
		t.Fatalf("no hook: DefaultContext() = %v, want context.Background()", ctx)
	}
	if ctx := ContextOrDefault(nil); ctx != context.Background() {
		t.Fatalf("no hook: ContextOrDefault(nil) = %v, want context.Background()", ctx)
	}
	type key struct{}
	a := context.WithValue(context.Background(), key{}, "a")
	b := context.WithValue(context.Background(), key{}, "b")
	if prev := SetDefaultContext(func() context.Context { return a }); prev != nil {
		t.Fatalf("first SetDefaultContext returned a previous function")
	}
	if got := DefaultContext().Value(key{}); got != "a" {
		t.Errorf("DefaultContext() carries %v, want a", got)
	}
	if got := ContextOrDefault(nil).Value(key{}); got != "a" {
		t.Errorf("ContextOrDefault(nil) carries %v, want a", got)
	}
	if got := ContextOrDefault(b).Value(key{}); got != "b" {
		t.Errorf("ContextOrDefault(b) carries %v, want b (a given context wins)", got)
	}
	prev := SetDefaultContext(func() context.Context { return nil })
	if prev == nil || prev().Value(key{}) != "a" {
		t.Errorf("SetDefaultContext did not return the previous function")
	}
	if ctx := DefaultContext(); ctx != context.Background() {
		t.Errorf("a hook returning nil: DefaultContext() = %v, want context.Background()", ctx)
	}
	SetDefaultContext(nil)
	if ctx := DefaultContext(); ctx != context.Background() {
		t.Errorf("after SetDefaultContext(nil): DefaultContext() = %v, want context.Background()", ctx)
	}
}

// TestDefaultContextStops checks that the functions without a context, and
// those given a nil one, stop when the default context is cancelled, and
// run normally with the background default.
func TestDefaultContextStops(t *testing.T) {
	m := New(Binary(12), Binary(6), Seed(3), WeightScale(0.3))
	v := mat.NewDense(40, 12, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = float64(rng.IntN(2))
	}
	c, err := NewChains(m, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"PseudoLikelihood(nil)": func() error { _, err := m.PseudoLikelihood(nil, v); return err },
		"StochasticPseudoLikelihood(nil)": func() error {
			_, err := m.StochasticPseudoLikelihood(nil, rand.New(rand.NewPCG(1, 1)), v)
			return err
		},
		"ExactLogZ(nil)":  func() error { _, err := m.ExactLogZ(nil); return err },
		"Chains.Run(nil)": func() error { return c.Run(nil, 5, nil) },
		"AIS.Run(nil)": func() error {
			_, err := AIS{Runs: 16, Steps: 20, Seed: 1}.Run(nil, m, nil)
			return err
		},
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s with the background default: %v", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	withDefault(t, ctx)
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled default context: err = %v, want context.Canceled", name, err)
		}
	}
}

// panicLayer is a binary layer whose Sample panics, like a layer written by
// a user in a notebook cell with a bug.
type panicLayer struct{ *BinaryLayer }

func (p panicLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	panic("user layer bug")
}

func (p panicLayer) Clone() Layer { return panicLayer{p.BinaryLayer.Clone().(*BinaryLayer)} }

// TestWorkerPanicIsError checks that a panic in a worker goroutine comes
// back as an error instead of ending the process, and that a progress
// callback runs on the caller's goroutine, so its panic reaches the caller.
func TestWorkerPanicIsError(t *testing.T) {
	m := New(Binary(8), panicLayer{Binary(4)}, Seed(1))
	c, err := NewChains(m, 64, 1)
	if err == nil {
		err = c.Run(context.Background(), 3, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "user layer bug") {
		t.Fatalf("chains with a panicking layer: err = %v, want the panic as an error", err)
	}

	good := New(Binary(8), Binary(4), Seed(1))
	c, err = NewChains(good, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	recovered := func() (r any) {
		defer func() { r = recover() }()
		_ = c.Run(context.Background(), 3, func(done, total int) { panic("progress bug") })
		return nil
	}()
	if recovered != "progress bug" {
		t.Fatalf("panicking progress callback: recovered %v on the caller's goroutine, want \"progress bug\"", recovered)
	}
	// The chains stay usable after the panic.
	if err := c.Run(context.Background(), 2, nil); err != nil {
		t.Fatalf("chains after a callback panic: %v", err)
	}
}

// TestDefaultContextLatency checks that a long call without a context stops
// within a second of the default context's cancellation.
func TestDefaultContextLatency(t *testing.T) {
	// About 2e9 flops of pseudo-likelihood: seconds on one core.
	m := New(Binary(400), Binary(400), Seed(2), WeightScale(0.1))
	v := mat.NewDense(6000, 400, nil)
	ctx, cancel := context.WithCancel(context.Background())
	withDefault(t, ctx)
	var cancelled time.Time
	time.AfterFunc(100*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	_, err := m.PseudoLikelihood(nil, v)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PseudoLikelihood of 6000 rows: err = %v, want context.Canceled", err)
	}
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("PseudoLikelihood stopped %v after the cancellation, want < 1 s", d)
	}
}
