package train

import (
	"context"
	"math"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestTrajectorySamplesLiveModel checks that the swaps of PTT leave the
// current model's distribution invariant: with a stored model far from the
// live one (weights ×4), the live chains' visible states follow the exact
// P(v) of the live model.
func TestTrajectorySamplesLiveModel(t *testing.T) {
	m := rbm.New(rbm.Binary(6), rbm.Binary(3), rbm.Seed(2), rbm.WeightScale(0.5))
	tr, err := newTrajectory(PTT{Chains: 64, Models: 10, Acceptance: 0.01}, m, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.W.Scale(4, m.W)
	states, _ := allStates(m.Visible)
	f := m.FreeEnergy(states)
	z, _ := m.ExactLogZ(context.Background())
	index := func(row []float64) int {
		k := 0
		for i, x := range row {
			k |= int(x) << i
		}
		return k
	}
	counts := make([]float64, len(f))
	const steps = 1500
	for s := 0; s < steps; s++ {
		if err := tr.run(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		if s >= 100 {
			live := tr.chains[len(tr.chains)-1].V
			for r := 0; r < 64; r++ {
				counts[index(live.RawRowView(r))]++
			}
		}
	}
	tv := 0.0
	for k := range f {
		tv += 0.5 * math.Abs(counts[k]/(64*(steps-100))-math.Exp(-f[k]-z))
	}
	t.Logf("TV(live chains, exact) = %.4f, swap rate %.2f, %d stored models", tv, tr.rate(), len(tr.models))
	if tv > 0.03 {
		t.Errorf("live chains are %.3f from the exact distribution in total variation", tv)
	}
	if r := tr.rate(); !(r > 0 && r < 1) {
		t.Errorf("swap rate %v", r)
	}
}

// TestPTTTrains checks that PTT learns bars and stripes as well as PCD
// (exact log-likelihood) and stores models along the way.
func TestPTTTrains(t *testing.T) {
	set := basSet(t)
	ll := map[string]float64{}
	for _, method := range []Method{PCD{Chains: 32}, PTT{Chains: 32, Models: 4}} {
		m := rbm.New(rbm.Binary(9), rbm.Binary(6), rbm.Seed(3))
		tr := setup{method: method, Options: Options{Batch: 7, Epochs: 400, LR: 0.5, Seed: 4, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
		hist, err := tr.fit(context.Background(), m, set)
		if err != nil {
			t.Fatal(err)
		}
		z, _ := m.ExactLogZ(context.Background())
		ll[method.String()], _ = m.LogLikelihood(set.X, z)
		if method.String() == "PTT" && math.IsNaN(hist.Last().SwapRate) {
			t.Error("PTT recorded no swap rate")
		}
	}
	t.Logf("exact log-likelihood: PCD %.3f, PTT %.3f (uniform %.3f)", ll["PCD"], ll["PTT"], -9*math.Log(2))
	// One nat of slack: the two runs' log-likelihoods move by ~0.6 nat between
	// the OpenBLAS and pure-Go products (different rounding, different chains);
	// a PTT that does not learn stays near the uniform model's −6.24.
	if ll["PTT"] < ll["PCD"]-1 || ll["PTT"] < -9*math.Log(2)+1 {
		t.Errorf("PTT reaches %.3f, PCD %.3f", ll["PTT"], ll["PCD"])
	}
	if _, err := Fit(context.Background(), rbm.New(rbm.Binary(9), rbm.Binary(2)), set, PTT{Acceptance: 2}, nil, Options{}); err == nil {
		t.Error("PTT.Acceptance = 2 accepted")
	}
}
