package train

import (
	"math/rand/v2"
	"testing"

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
