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

// TestContextStops checks that the functions taking a context stop when it
// is cancelled, and run normally when it is nil (the background context).
func TestContextStops(t *testing.T) {
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
	calls := map[string]func(ctx context.Context) error{
		"PseudoLikelihood": func(ctx context.Context) error { _, err := m.PseudoLikelihood(ctx, v); return err },
		"StochasticPseudoLikelihood": func(ctx context.Context) error {
			_, err := m.StochasticPseudoLikelihood(ctx, rand.New(rand.NewPCG(1, 1)), v)
			return err
		},
		"ExactLogZ":  func(ctx context.Context) error { _, err := m.ExactLogZ(ctx); return err },
		"Chains.Run": func(ctx context.Context) error { return c.Run(ctx, 5, nil) },
		"AIS.Run": func(ctx context.Context) error {
			_, err := AIS{Runs: 16, Steps: 20, Seed: 1}.Run(ctx, m, nil)
			return err
		},
	}
	for name, call := range calls {
		if err := call(nil); err != nil {
			t.Errorf("%s with a nil context: %v", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, call := range calls {
		if err := call(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", name, err)
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

// TestContextLatency checks that a long call stops within a second of its
// context's cancellation.
func TestContextLatency(t *testing.T) {
	// About 2e9 flops of pseudo-likelihood, most of them inside
	// exponentials: seconds on one core.
	m := New(Binary(400), Binary(400), Seed(2), WeightScale(0.1))
	v := mat.NewDense(6000, 400, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	time.AfterFunc(100*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	_, err := m.PseudoLikelihood(ctx, v)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PseudoLikelihood of 6000 rows: err = %v, want context.Canceled", err)
	}
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("PseudoLikelihood stopped %v after the cancellation, want < 1 s", d)
	}
}
