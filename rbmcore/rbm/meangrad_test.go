package rbm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMeanGrad checks MeanGrad, on batches of several rows and units with
// different parameters, against Mean (bit for bit) and GradCGF: the row
// average of its terms must be GradCGF's gradient (itself checked against
// finite differences of Γ in TestScalarLayerFiniteDifferences), to
// rounding.
func TestMeanGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tested := 0
	for _, kind := range LayerKinds() {
		const units, rows = 5, 7
		l := makeLayer(kind, units)
		mg, ok := l.(MeanGrader)
		if !ok {
			continue
		}
		tested++
		names := l.ParamNames()
		for p, ps := range l.Params() {
			for u := range ps {
				if isFieldName(names[p]) {
					ps[u] = 3 * rng.NormFloat64()
				} else {
					ps[u] = 0.2 + 2*rng.Float64()
				}
			}
		}
		in := make([]float64, rows*units)
		for k := range in {
			in[k] = 4 * rng.NormFloat64()
		}
		in[0], in[1] = -1e4, 1e4 // the far tails of both branches
		out := make([]float64, len(in))
		terms := make([][]float64, len(names))
		for p := range terms {
			terms[p] = make([]float64, len(in))
		}
		mg.MeanGrad(in, out, terms)
		mean := make([]float64, len(in))
		l.Mean(in, mean)
		for k := range in {
			if out[k] != mean[k] {
				t.Errorf("%s: MeanGrad mean[%d] = %v, Mean %v", kind, k, out[k], mean[k])
			}
		}
		grads := NewGrads(l)
		l.GradCGF(in, grads)
		for p := range grads {
			for u := 0; u < units; u++ {
				s := 0.0
				for r := 0; r < rows; r++ {
					s += terms[p][r*units+u]
				}
				if got := s / rows; !closeTo(got, grads[p][u], 1e-13, 1e-13) {
					t.Errorf("%s: row mean of MeanGrad's %s terms of unit %d = %v, GradCGF %v", kind, names[p], u, got, grads[p][u])
				}
			}
		}
	}
	if tested < 2 {
		t.Errorf("%d registered kinds implement MeanGrader, want at least relu and drelu", tested)
	}
}

// TestDReLUMomentsLogPath compares the branch weights and moments of the
// dReLU layer (from the branch partition functions) with the same
// quantities from their logarithms (momentsLog) over a grid of inputs and
// parameters, through the tails on both sides, and checks that inputs
// where a partition function overflows give finite moments.
func TestDReLUMomentsLogPath(t *testing.T) {
	l := DReLU(1)
	for _, set := range layerParamSets["drelu"] {
		l.GammaPlus[0], l.GammaMinus[0], l.ThetaPlus[0], l.ThetaMinus[0] = set[0], set[1], set[2], set[3]
		for x := -80.0; x <= 80; x += 0.37 {
			c := l.unit(0)
			got, want := c.moments(x), c.momentsLog(x)
			g := []float64{got.pPos, got.pNeg, got.m1p, got.m2p, got.m1n, got.m2n, got.mean, got.variance}
			w := []float64{want.pPos, want.pNeg, want.m1p, want.m2p, want.m1n, want.m2n, want.mean, want.variance}
			for k := range g {
				// The log path loses ~|ℓ₊ - ℓ₋|·ε in the branch weights.
				if !closeTo(g[k], w[k], 1e-12, 1e-300) {
					t.Errorf("dReLU %v I=%v: moment %d = %.17g, log path %.17g", set, x, k, g[k], w[k])
				}
			}
		}
		for _, x := range []float64{-1e4, 1e4} {
			c := l.unit(0)
			s := c.moments(x)
			if math.IsNaN(s.mean) || math.IsInf(s.mean, 0) || math.IsNaN(s.variance) || math.IsInf(s.variance, 0) {
				t.Errorf("dReLU %v I=%v: mean %v, variance %v", set, x, s.mean, s.variance)
			}
		}
	}
}
