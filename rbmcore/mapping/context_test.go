//lint:file-ignore SA1012 these tests check what a nil context means to the functions that accept one.

package mapping

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// dreluModel is a random binary–dReLU model: its Pairwise goes through the
// elementwise worker goroutines.
func dreluModel(n, m int, hidden rbm.Layer) *rbm.RBM {
	if hidden == nil {
		hidden = rbm.DReLU(m)
	}
	model := rbm.New(rbm.Binary(n), hidden, rbm.Seed(4))
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range model.W.RawMatrix().Data {
		model.W.RawMatrix().Data[i] = 0.3 * rng.NormFloat64()
	}
	return model
}

// TestContext checks that every computation given a nil context runs to
// its end, and stops with context.Canceled when its context is cancelled.
func TestContext(t *testing.T) {
	m := dreluModel(60, 8, nil)
	small := dreluModel(8, 3, nil)
	mp, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := mp.Pairwise(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 the test checks that a nil context means the background one
	got, err := mp.Pairwise(nil)
	if err != nil || !mat.Equal(got, want) {
		t.Fatalf("Pairwise(nil): err = %v, equal = %v", err, err == nil && mat.Equal(got, want))
	}
	calls := map[string]func(ctx context.Context) error{
		"Pairwise":        func(ctx context.Context) error { _, err := Pairwise(ctx, m); return err },
		"Mapper.Pairwise": func(ctx context.Context) error { _, err := mp.Pairwise(ctx); return err },
		"Fields":          func(ctx context.Context) error { _, err := Fields(ctx, m); return err },
		"Mapper.Fields":   func(ctx context.Context) error { _, err := mp.Fields(ctx); return err },
		"ZeroFieldBias":   func(ctx context.Context) error { _, err := mp.ZeroFieldBias(ctx); return err },
		"All":             func(ctx context.Context) error { _, err := All(ctx, small, 3); return err },
		"Mapper.Triplets": func(ctx context.Context) error { _, err := mp.Triplets(ctx, []int{0, 1, 2, 3, 4}); return err },
		"Mapper.All":      func(ctx context.Context) error { _, err := mp.All(ctx, 2); return err },
		"StrengthByOrder": func(ctx context.Context) error {
			_, err := mp.StrengthByOrder(ctx, 2, 10, rand.New(rand.NewPCG(1, 1)))
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

// panicUnits is a user-defined hidden layer (unknown to the mapping, so
// handled through its CGF) whose UnitCGF panics when called on the rows of
// the worker goroutines.
type panicUnits struct {
	*rbm.DReLULayer
	n int
}

func (p panicUnits) Kind() string { return "custom" }

func (p panicUnits) UnitCGF(u int, in, out []float64) {
	if len(in) < p.n {
		panic("user layer bug")
	}
	p.DReLULayer.UnitCGF(u, in, out)
}

func TestPanicsInWorkersAndCallbacks(t *testing.T) {
	const n = 40
	m := dreluModel(n, 4, panicUnits{rbm.DReLU(4), n})
	if _, err := Pairwise(context.Background(), m); err == nil || !strings.Contains(err.Error(), "user layer bug") {
		t.Fatalf("Pairwise with a layer panicking in the workers: err = %v, want the panic as an error", err)
	}
	pm, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Triplets(context.Background(), []int{0, 1, 2, 3}); err == nil || !strings.Contains(err.Error(), "user layer bug") {
		t.Fatalf("Triplets with a layer panicking in the workers: err = %v, want the panic as an error", err)
	}

	mp, err := New(dreluModel(300, 40, nil))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	mp.Progress = func(done, total int) { panic("progress bug") }
	for name, call := range map[string]func(){
		"Pairwise": func() { _, _ = mp.Pairwise(context.Background()) },
		"Fields":   func() { _, _ = mp.Fields(context.Background()) },
		"Triplets": func() { _, _ = mp.Triplets(context.Background(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) },
	} {
		recovered := func() (r any) {
			defer func() { r = recover() }()
			call()
			return nil
		}()
		if recovered != "progress bug" {
			t.Errorf("%s: recovered %v on the caller's goroutine, want \"progress bug\"", name, recovered)
		}
		// The workers were stopped before the panic went on (one goroutine
		// closing the finished channel may remain for a moment).
		if after := runtime.NumGoroutine(); after > before+1 {
			t.Errorf("%s: %d goroutines after the panic, %d before: workers outlived the call", name, after, before)
		}
	}
}
