package data

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestFromRBMFrequencies compares sampled configuration frequencies of a
// small binary RBM with the exact distribution exp(−F(v))/Z enumerated over
// all 2^4 visible states.
func TestFromRBMFrequencies(t *testing.T) {
	m := rbm.New(rbm.Binary(4), rbm.Binary(3), rbm.Seed(2), rbm.WeightScale(1))
	const samples = 40000
	set, err := FromRBM(context.Background(), m, samples, FromRBMOptions{Chains: 200, BurnIn: 100, Thin: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if set.Kind != KindBinary || set.Len() != samples {
		t.Fatalf("kind %s, %d rows", set.Kind, set.Len())
	}
	states := mat.NewDense(16, 4, nil)
	for s := 0; s < 16; s++ {
		for i := 0; i < 4; i++ {
			states.Set(s, i, float64(s>>i&1))
		}
	}
	f := m.FreeEnergy(states)
	z := 0.0
	for _, x := range f {
		z += math.Exp(-x)
	}
	counts := make([]float64, 16)
	for r := 0; r < samples; r++ {
		s := 0
		for i, x := range set.Row(r) {
			s |= int(x) << i
		}
		counts[s]++
	}
	tv := 0.0
	for s := range counts {
		tv += math.Abs(counts[s]/samples-math.Exp(-f[s])/z) / 2
	}
	if tv > 0.02 {
		t.Errorf("total variation %v between samples and the exact distribution", tv)
	}
	// The zero options (100 chains, 1000 burn-in sweeps, thin 10) and no
	// burn-in at all; negative chain counts are an error.
	for _, opts := range []FromRBMOptions{{}, {BurnIn: -1, Chains: 3}} {
		calls := 0
		opts.Progress = func(done, total int) { calls++ }
		s, err := FromRBM(context.Background(), m, 7, opts)
		if err != nil {
			t.Fatalf("FromRBM(%+v): %v", opts, err)
		}
		if s.Len() != 7 || calls == 0 {
			t.Errorf("FromRBM(%+v): %d rows, %d progress calls, want 7 rows and progress", opts, s.Len(), calls)
		}
	}
	if _, err := FromRBM(context.Background(), m, 7, FromRBMOptions{Chains: -2}); err == nil {
		t.Error("Chains = -2 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FromRBM(ctx, m, 10, FromRBMOptions{Chains: 2, BurnIn: 5, Thin: 1, Seed: 1}); err == nil {
		t.Error("cancelled context not reported")
	}
}
