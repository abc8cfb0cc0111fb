package train

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestCertifiedVisibleInputs: a float64 run of binary or spin layers,
// whose sweeps sample the visible units from certified float32 inputs (the
// default), gives bit-identical parameters to the same run with float64
// visible inputs, for CD and PCD, also with weights large enough that some
// float32 inputs straddle a decision and are recomputed (asserted). The
// comparison is sensitive: sampling from the same float32 inputs without
// the certificate (Float32) changes the parameters.
func TestCertifiedVisibleInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const rows, nv = 120, 40
	for _, c := range []struct {
		name          string
		method        Method
		spin          bool
		nh, epochs    int
		scale         float64
		wantRecompute bool
	}{
		{"binary PCD", PCD{K: 2, Chains: 20}, false, 30, 3, 0.1, false},
		{"spin CD", CD{K: 2}, true, 30, 3, 0.1, false},
		// 200 terms of weights ~0.5: bounds of about 1e-3 on inputs of
		// order 5, so that a few samples in 10⁴ straddle a decision.
		{"binary PCD, many large weights", PCD{K: 2, Chains: 20}, false, 200, 30, 0.5, true},
	} {
		nh := c.nh
		x := mat.NewDense(rows, nv, nil)
		kind, lo := data.KindBinary, 0.0
		if c.spin {
			kind, lo = data.KindSpin, -1
		}
		for i, raw := 0, x.RawMatrix().Data; i < len(raw); i++ {
			raw[i] = lo
			if rng.IntN(3) == 0 || (i%nv < 10 && rng.IntN(4) != 0) {
				raw[i] = 1
			}
		}
		set := &data.Set{X: x, Kind: kind, Q: 1, Source: "random"}
		model := func() *rbm.RBM {
			if c.spin {
				return rbm.New(rbm.Spin(nv), rbm.Spin(nh), rbm.Seed(5), rbm.WeightScale(c.scale))
			}
			return rbm.New(rbm.Binary(nv), rbm.Binary(nh), rbm.Seed(5), rbm.WeightScale(c.scale))
		}
		train := func(tr setup) ([][]float64, *run) {
			tr.method, tr.Batch, tr.Epochs, tr.LR, tr.Seed = c.method, 20, c.epochs, 0.05, 3
			tr.Monitor = Monitor{PLEvery: -1, ReconEvery: -1}
			m := model()
			r := preparedRun(t, tr, m, set)
			if _, err := r.loop(context.Background()); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return paramsOf(m), r
		}
		got, r := train(setup{})
		if r.chains.(*sampler).visCert == nil {
			t.Fatalf("%s: the visible inputs were not certified float32", c.name)
		}
		want, _ := train(setup{Options: Options{float64Visible: true}})
		if d := maxRelDiff(got, want); d != 0 {
			t.Errorf("%s: certified float32 visible inputs change the parameters (relative %.3g)", c.name, d)
		}
		n := r.chains.(*sampler).recomputed.Load()
		if c.wantRecompute && n == 0 {
			t.Errorf("%s: no input was recomputed: the straddling case was not exercised", c.name)
		}
		loose, _ := train(setup{Options: Options{Float32: true}})
		if maxRelDiff(loose, want) == 0 {
			t.Errorf("%s: float32 products without the certificate gave the same parameters: the test is not sensitive", c.name)
		}
		t.Logf("%s: %d inputs recomputed in float64", c.name, n)
	}
}
