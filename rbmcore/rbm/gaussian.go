package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// GaussianLayer is a layer of real units with U(h) = γh²/2 - θh:
// Γ(I) = (I+θ)²/(2γ) + ½ log(2π/γ), mean = mode = (I+θ)/γ, variance 1/γ.
type GaussianLayer struct {
	Gamma, Theta []float64
}

// Gaussian returns n Gaussian units with γ = 1, θ = 0.
func Gaussian(n int) *GaussianLayer {
	return &GaussianLayer{Gamma: filled(n, 1), Theta: make([]float64, n)}
}

// Kind returns "gaussian".
func (l *GaussianLayer) Kind() string { return "gaussian" }

// Len returns the number of units.
func (l *GaussianLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *GaussianLayer) States() int { return 1 }

func (l *GaussianLayer) cgf(u int, x float64) float64 {
	g := l.Gamma[u]
	x += l.Theta[u]
	return x*x/(2*g) + 0.5*(mathx.Log2Pi-math.Log(g))
}

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *GaussianLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.cgf(u, x)
	}
}

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *GaussianLayer) CGF(in, out []float64) { scalarCGF(len(l.Theta), in, out, l.cgf) }

func (l *GaussianLayer) mean(u int, x float64) float64 { return (x + l.Theta[u]) / l.Gamma[u] }

// Mean sets out = (in + θ)/γ.
func (l *GaussianLayer) Mean(in, out []float64) { scalarMap(len(l.Theta), in, out, l.mean) }

// Var sets out = 1/γ.
func (l *GaussianLayer) Var(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return 1 / l.Gamma[u] })
}

// Mode sets out = (in + θ)/γ.
func (l *GaussianLayer) Mode(in, out []float64) { scalarMap(len(l.Theta), in, out, l.mean) }

// Sample draws out ~ N((in+θ)/γ, 1/(beta γ)).
func (l *GaussianLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		u := k % n
		out[k] = l.mean(u, x) + rng.NormFloat64()/math.Sqrt(beta*l.Gamma[u])
	}
	return nil
}

// Energy sets out[b] = Σ_u γ_u h²/2 - θ_u h.
func (l *GaussianLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 { return 0.5*l.Gamma[u]*h*h - l.Theta[u]*h })
}

// ParamNames returns ["gamma", "theta"].
func (l *GaussianLayer) ParamNames() []string { return []string{"gamma", "theta"} }

// Params returns [Gamma, Theta].
func (l *GaussianLayer) Params() [][]float64 { return [][]float64{l.Gamma, l.Theta} }

// GradCGF sets grads = batch means of ∂Γ/∂γ = -⟨h²⟩/2 and ∂Γ/∂θ = ⟨h⟩.
func (l *GaussianLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) {
		m := l.mean(u, x)
		g[0] = -0.5 * (m*m + 1/l.Gamma[u])
		g[1] = m
	})
}

// GradLogWeight sets grads = batch means of -h²/2 and h.
func (l *GaussianLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0], g[1] = -0.5*h*h, h })
}

// Validate checks finiteness and γ > 0.
func (l *GaussianLayer) Validate() error {
	if len(l.Gamma) != len(l.Theta) {
		return fmt.Errorf("rbm: gaussian layer: gamma has %d entries, theta %d", len(l.Gamma), len(l.Theta))
	}
	return validateParams(l, "gamma")
}

// Clone returns a deep copy.
func (l *GaussianLayer) Clone() Layer {
	return &GaussianLayer{Gamma: cloneSlice(l.Gamma), Theta: cloneSlice(l.Theta)}
}

func init() {
	mustRegister(LayerKind{Name: "gaussian", New: func(n, _ int) (Layer, error) { return Gaussian(n), nil }})
}

// Quadratic returns Gamma, Theta and a lower bound of −∞.
func (l *GaussianLayer) Quadratic() (gamma, theta []float64, lower float64) {
	return l.Gamma, l.Theta, math.Inf(-1)
}

// CGFForm returns FormQuadratic.
func (l *GaussianLayer) CGFForm() CGFForm { return FormQuadratic }

// FitData sets each unit to the column's mean µ = Sum/Rows: with SumSq,
// γ = 1/variance and θ = µ/variance; without it, θ = γµ with γ kept.
func (l *GaussianLayer) FitData(s DataStats) error {
	for j, x := range s.Sum {
		mu := x / s.Rows
		if s.SumSq == nil {
			l.Theta[j] = l.Gamma[j] * mu
			continue
		}
		v := s.SumSq[j]/s.Rows - mu*mu
		if !(v > 0) {
			return fmt.Errorf("rbm: gaussian layer: data column %d has zero variance", j)
		}
		l.Gamma[j], l.Theta[j] = 1/v, mu/v
	}
	return nil
}
