package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestFusedHiddenGradient checks that the hidden layer's gradient from the
// terms means stores (phase.fuseGradTerms, rbm.MeanGrader) is the one
// GradCGF gives at the same inputs, bit for bit, for uniform and weighted
// rows, and for phases that are row ranges of a larger buffer filled in
// two parts (as the sweeps fill them on two cores); and that it is not
// zero (so the comparison can fail).
func TestFusedHiddenGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const nv, nh, rows = 6, 7, 11
	for _, hidden := range []rbm.Layer{rbm.ReLU(nh), rbm.DReLU(nh)} {
		for _, weighted := range []bool{false, true} {
			m := rbm.New(rbm.Binary(nv), hidden, rbm.Seed(1))
			for _, ps := range m.Hidden.Params() {
				for u := range ps {
					ps[u] += 0.5 * rng.Float64()
				}
			}
			all := newPhase(nil, rows+3, nv, nh, false, 0)
			all.fuseGradTerms(m.Hidden)
			if all.gt == nil {
				t.Fatalf("%s: no fused gradient terms", m.Hidden.Kind())
			}
			fused := all.slice(3, rows+3, -1)
			plain := newPhase(nil, rows, nv, nh, false, -1)
			for k := range fused.in.f {
				x := 3 * rng.NormFloat64()
				fused.in.f[k], plain.in.f[k] = x, x
			}
			if weighted {
				fused.coef = make([]float64, rows)
				for r := range fused.coef {
					fused.coef[r] = rng.Float64() / rows
				}
				plain.coef = fused.coef
			}
			fused.means(m.Hidden, 0, 4)
			fused.means(m.Hidden, 4, rows)
			plain.means(m.Hidden, 0, rows)
			for _, ph := range []*phase{fused, plain} {
				ph.sumColumns(0, nv, 0, nh)
			}
			got, want := newLayerGrads(m), newLayerGrads(m)
			got.add(fused)
			want.add(plain)
			nonzero := false
			for p := range want.hid {
				for u := range want.hid[p] {
					if got.hid[p][u] != want.hid[p][u] {
						t.Errorf("%s weighted=%v: %s[%d] fused %v, GradCGF %v", m.Hidden.Kind(), weighted, m.Hidden.ParamNames()[p], u, got.hid[p][u], want.hid[p][u])
					}
					nonzero = nonzero || want.hid[p][u] != 0
				}
			}
			for k := range plain.hm.f {
				if fused.hm.f[k] != plain.hm.f[k] {
					t.Fatalf("%s: fused mean[%d] = %v, Mean %v", m.Hidden.Kind(), k, fused.hm.f[k], plain.hm.f[k])
				}
			}
			if !nonzero {
				t.Errorf("%s: zero hidden gradient", m.Hidden.Kind())
			}
		}
	}
}

// TestL1SquaredDirection checks the λ₁² penalty's part of the ascent
// direction (computed by column ranges on the cores) against the formula
// −(λ₁²/N) (Σ_i |w_iµ|) sign(w_iµ) evaluated column by column, for a
// layer wide enough to be split.
func TestL1SquaredDirection(t *testing.T) {
	const nv, nh, lambda = 30, 45, 0.025
	c := updateBench{
		model:  func() *rbm.RBM { return rbm.New(rbm.Binary(nv), rbm.ReLU(nh), rbm.Seed(2)) },
		set:    func() *data.Set { return benchBinarySet(50, nv) },
		method: PCD{Chains: 10},
		o:      Options{Batch: 10, LR: 0.01, Seed: 1, Regularisers: []Regulariser{L1Squared{Lambda: lambda}}, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}},
	}
	r := c.start(t)
	w := r.m.W.RawMatrix().Data
	w[3] = 0 // sign 0
	r.lg.reset()
	wd := r.dir.W.RawMatrix().Data
	clear(wd)
	r.direction()
	nonzero := 0
	for j := 0; j < nh; j++ {
		s := 0.0
		for i := 0; i < nv; i++ {
			s += math.Abs(w[i*nh+j])
		}
		for i := 0; i < nv; i++ {
			x := w[i*nh+j]
			want := 0.0
			if x != 0 {
				want = -math.Copysign(lambda*s/nv, x)
			}
			if got := wd[i*nh+j]; math.Abs(got-want) > 1e-15*math.Abs(want) {
				t.Fatalf("direction[%d][%d] = %v, want %v", i, j, got, want)
			}
			if want != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("all weights zero: nothing compared")
	}
}
