package train

import (
	"context"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// basLogLik trains on 3×3 bars-and-stripes and returns the exact average
// log-likelihood (ExactLogZ by enumeration).
func basLogLik(t *testing.T, hidden int, tr setup) float64 {
	t.Helper()
	set, err := data.BarsAndStripes(3)
	if err != nil {
		t.Fatal(err)
	}
	m := rbm.New(rbm.Binary(9), rbm.Binary(hidden), rbm.Seed(tr.Seed), rbm.WeightScale(0.1))
	start := time.Now()
	if _, err := tr.fit(context.Background(), m, set); err != nil {
		t.Fatal(err)
	}
	logZ, err := m.ExactLogZ(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ll, err := m.LogLikelihood(set.X, logZ)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: LL = %.4f nats/sample (optimum -2.599) in %v", tr.method, ll, time.Since(start))
	return ll
}

// TestPCDBarsAndStripes trains binary–binary RBMs (M = 16) on the 16 images
// of 3×3 bars-and-stripes with PCD and with parallel tempering, and checks
// the exact log-likelihood (enumeration) against the optimum −2.599
// (the empirical entropy: no model can do better).
func TestPCDBarsAndStripes(t *testing.T) {
	mon := Monitor{PLEvery: -1, ReconEvery: -1}
	for _, tr := range []setup{
		{method: PCD{K: 3, Chains: 32}, opt: Adam{}, Options: Options{Epochs: 2000, Batch: 16, LR: 0.03, Seed: 1, Monitor: mon, Schedule: GeometricDecay(2000, 0.3, 0.01)}},
		{method: PCD{K: 3, Chains: 32}, opt: Adam{}, Options: Options{Float32: true, Epochs: 2000, Batch: 16, LR: 0.03, Seed: 2, Monitor: mon, Schedule: GeometricDecay(2000, 0.3, 0.01)}},
		{method: PT{K: 1, Chains: 16}, opt: Adam{}, Options: Options{Epochs: 1500, Batch: 16, LR: 0.03, Seed: 1, Monitor: mon, Schedule: GeometricDecay(1500, 0.3, 0.01)}},
	} {
		ll := basLogLik(t, 16, tr)
		if ll < -2.599-0.5 || ll > -2.599+1e-9 {
			t.Errorf("%s reached LL %.4f, want within 0.5 of the optimum -2.599", tr.method, ll)
		}
	}
}
