package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
)

// This file holds the helpers shared by the scalar (one column per unit)
// layers; each layer file supplies the per-unit formulas.

// rowsOf is the batch size of a flattened batch of the given row width.
func rowsOf(n, width int) int {
	if width == 0 {
		return 0
	}
	if n%width != 0 {
		panic(fmt.Sprintf("rbm: batch of %d values is not a multiple of the layer width %d", n, width))
	}
	return n / width
}

// scalarCGF sets out[b] = Σ_u f(u, in[b*n+u]).
func scalarCGF(n int, in, out []float64, f func(u int, x float64) float64) {
	b := rowsOf(len(in), n)
	for r := 0; r < b; r++ {
		s := 0.0
		row := in[r*n : (r+1)*n]
		for u, x := range row {
			s += f(u, x)
		}
		out[r] = s
	}
}

// scalarMap sets out[k] = f(u, in[k]) with u the unit of column k.
func scalarMap(n int, in, out []float64, f func(u int, x float64) float64) {
	out = out[:len(in)]
	u := 0
	for k, x := range in {
		out[k] = f(u, x)
		if u++; u == n {
			u = 0
		}
	}
}

// parallelGradMin is the number of values from which scalarGrad spreads
// the units over the cores: below it the goroutines cost more than they
// save (the per-row calls of weighted gradients are small).
const parallelGradMin = 1 << 13

// gradUnitBlock is the granularity of scalarGrad's unit ranges: 8 float64
// sums fill a cache line, so two cores never write the same line.
const gradUnitBlock = 8

// scalarGrad averages per-unit gradient contributions over the batch:
// f(u, x, g) writes the contribution of one value into g[p] for each
// parameter p. Each unit's sum runs over the rows in order whichever core
// computes it, so the result does not depend on the number of cores; the
// units are split over the cores for large batches (the layer formulas of
// the continuous units are the expensive part of a training update, and the
// trainer calls GradCGF outside its row-parallel sections).
func scalarGrad(n int, in []float64, grads [][]float64, f func(u int, x float64, g []float64)) {
	b := rowsOf(len(in), n)
	for _, g := range grads {
		clear(g)
	}
	units := func(u0, u1 int) error {
		tmp := make([]float64, len(grads))
		for r := 0; r < b; r++ {
			row := in[r*n : (r+1)*n]
			for u := u0; u < u1; u++ {
				f(u, row[u], tmp)
				for p := range grads {
					grads[p][u] += tmp[p]
				}
			}
		}
		return nil
	}
	if len(in) < parallelGradMin {
		_ = units(0, n)
	} else if err := workers.ForRanges(n, gradUnitBlock, units); err != nil {
		panic(err) // a panic of f, recovered by ForRanges: re-raise it here
	}
	if b > 0 {
		inv := 1 / float64(b)
		for _, g := range grads {
			for i := range g {
				g[i] *= inv
			}
		}
	}
}

// checkBeta rejects a non-positive or non-finite inverse temperature.
func checkBeta(beta float64) error {
	if !(beta > 0) || math.IsInf(beta, 1) {
		return fmt.Errorf("rbm: inverse temperature beta = %v must be positive and finite", beta)
	}
	return nil
}

// validateParams checks that every parameter is finite and that the ones
// listed in positive are > 0.
func validateParams(l Layer, positive ...string) error {
	pos := map[string]bool{}
	for _, p := range positive {
		pos[p] = true
	}
	names := l.ParamNames()
	for p, vals := range l.Params() {
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("rbm: %s layer: %s[%d] = %v is not finite", l.Kind(), names[p], i, v)
			}
			if pos[names[p]] && !(v > 0) {
				return fmt.Errorf("rbm: %s layer: %s[%d] = %v must be positive", l.Kind(), names[p], i, v)
			}
		}
	}
	return nil
}

func filled(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func cloneSlice(s []float64) []float64 { return append([]float64(nil), s...) }

// sigmoid is re-exported locally for brevity.
func sigmoid(x float64) float64 { return mathx.Sigmoid(x) }

// sigmoidLayer is implemented by the two-state layers whose units are
// lo + (hi−lo)·Bernoulli(σ(scale·(I + θ))) at inverse temperature β:
// binary and spin. Chains certifies their samples from float32 products.
type sigmoidLayer interface {
	SigmoidForm(beta float64) (theta []float64, scale, lo, hi float64)
}

// halfGaussian describes one half-line branch: the unit's value is
// h = s*Y/√γ with Y ~ N(x, 1) truncated to Y > 0 and s = ±1.
type halfGaussian struct{ x, gamma float64 }

// logZ is log ∫_0^∞ exp(-γy²/2 + (x√γ) y) dy.
func (b halfGaussian) logZ() float64 { return mathx.LogPhiOverPhi(b.x) - 0.5*math.Log(b.gamma) }

// moments returns E[Y]/√γ and E[Y²]/γ and Var[Y]/γ of the branch's |h|.
func (b halfGaussian) moments() (m1, m2, v float64) {
	m, vy := mathx.TruncMoments(b.x)
	s := math.Sqrt(b.gamma)
	return m / s, (vy + m*m) / b.gamma, vy / b.gamma
}

// stats returns logZ() and moments() together, bit for bit, from one
// evaluation of the error function (mathx.TruncStats).
func (b halfGaussian) stats() (logZ, m1, m2, v float64) {
	l, m, vy := mathx.TruncStats(b.x)
	s := math.Sqrt(b.gamma)
	return l - 0.5*math.Log(b.gamma), m / s, (vy + m*m) / b.gamma, vy / b.gamma
}

// sample draws |h| at inverse temperature beta.
func (b halfGaussian) sample(rng *rand.Rand, beta float64) float64 {
	xb := b.x * math.Sqrt(beta)
	return mathx.TruncNormalExcess(rng, -xb) / math.Sqrt(beta*b.gamma)
}
