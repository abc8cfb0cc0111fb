package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ReLULayer is a layer of non-negative real units with U(h) = γh²/2 - θh on
// h ≥ 0 (+∞ below): a Gaussian truncated to [0, ∞). With x = (I+θ)/√γ,
// Γ(I) = log(Φ(x)/φ(x)) - ½ log γ and the mode (activation) is
// max(0, (I+θ)/γ). The ReLU unit of Bulso & Roudi 2021 with threshold c
// is γ = 1, θ = -c.
type ReLULayer struct {
	Gamma, Theta []float64
}

// ReLU returns n ReLU units with γ = 1, θ = 0.
func ReLU(n int) *ReLULayer {
	return &ReLULayer{Gamma: filled(n, 1), Theta: make([]float64, n)}
}

// Kind returns "relu".
func (l *ReLULayer) Kind() string { return "relu" }

// Len returns the number of units.
func (l *ReLULayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *ReLULayer) States() int { return 1 }

func (l *ReLULayer) branch(u int, x float64) halfGaussian {
	g := l.Gamma[u]
	return halfGaussian{(x + l.Theta[u]) / math.Sqrt(g), g}
}

func (l *ReLULayer) cgf(u int, x float64) float64 { return l.branch(u, x).logZ() }

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *ReLULayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.cgf(u, x)
	}
}

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *ReLULayer) CGF(in, out []float64) { scalarCGF(len(l.Theta), in, out, l.cgf) }

// eval sets, for each value of the batch in, whichever of mean (Γ′),
// variance (Γ″) and the per-value gradient terms dGamma = -⟨h²⟩/2,
// dTheta = ⟨h⟩ are not nil, from one mathx.TruncMoments per value.
func (l *ReLULayer) eval(in, mean, variance, dGamma, dTheta []float64) {
	n := len(l.Theta)
	rowsOf(len(in), n)
	for r0 := 0; r0 < len(in); r0 += n {
		for u, x := range in[r0 : r0+n] {
			m1, m2, v := l.branch(u, x).moments()
			k := r0 + u
			if mean != nil {
				mean[k] = m1
			}
			if variance != nil {
				variance[k] = v
			}
			if dGamma != nil {
				dGamma[k], dTheta[k] = -0.5*m2, m1
			}
		}
	}
}

// Mean sets out = Γ'(in), the mean of the truncated Gaussian.
func (l *ReLULayer) Mean(in, out []float64) { l.eval(in, out[:len(in)], nil, nil, nil) }

// Var sets out = Γ″(in), the variance of the truncated Gaussian.
func (l *ReLULayer) Var(in, out []float64) { l.eval(in, nil, out[:len(in)], nil, nil) }

// MeanGrad sets out = Γ'(in) and terms to the per-value ∂Γ/∂γ = -⟨h²⟩/2
// and ∂Γ/∂θ = ⟨h⟩ of GradCGF, from one evaluation of the moments per
// value.
func (l *ReLULayer) MeanGrad(in, out []float64, terms [][]float64) {
	l.eval(in, out[:len(in)], nil, terms[0][:len(in)], terms[1][:len(in)])
}

// Mode sets out = max(0, (in + θ)/γ).
func (l *ReLULayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		return math.Max(0, (x+l.Theta[u])/l.Gamma[u])
	})
}

// Sample draws from the truncated Gaussian ∝ exp(beta(-γh²/2 + (I+θ)h)) on
// h ≥ 0 with a tail-safe sampler (exact for any input).
func (l *ReLULayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		out[k] = l.branch(k%n, x).sample(rng, beta)
	}
	return nil
}

// Energy sets out[b] = Σ_u γ_u h²/2 - θ_u h (+Inf if some h < 0).
func (l *ReLULayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 {
		if h < 0 {
			return math.Inf(1)
		}
		return 0.5*l.Gamma[u]*h*h - l.Theta[u]*h
	})
}

// ParamNames returns ["gamma", "theta"].
func (l *ReLULayer) ParamNames() []string { return []string{"gamma", "theta"} }

// Params returns [Gamma, Theta].
func (l *ReLULayer) Params() [][]float64 { return [][]float64{l.Gamma, l.Theta} }

// GradCGF sets grads = batch means of ∂Γ/∂γ = -⟨h²⟩/2 and ∂Γ/∂θ = ⟨h⟩.
func (l *ReLULayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) {
		m1, m2, _ := l.branch(u, x).moments()
		g[0], g[1] = -0.5*m2, m1
	})
}

// GradLogWeight sets grads = batch means of -h²/2 and h.
func (l *ReLULayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0], g[1] = -0.5*h*h, h })
}

// Validate checks finiteness and γ > 0.
func (l *ReLULayer) Validate() error {
	if len(l.Gamma) != len(l.Theta) {
		return fmt.Errorf("rbm: relu layer: gamma has %d entries, theta %d", len(l.Gamma), len(l.Theta))
	}
	return validateParams(l, "gamma")
}

// Clone returns a deep copy.
func (l *ReLULayer) Clone() Layer {
	return &ReLULayer{Gamma: cloneSlice(l.Gamma), Theta: cloneSlice(l.Theta)}
}

func init() {
	mustRegister(LayerKind{Name: "relu", New: func(n, _ int) (Layer, error) { return ReLU(n), nil }})
}

// Quadratic returns Gamma, Theta and the lower bound 0.
func (l *ReLULayer) Quadratic() (gamma, theta []float64, lower float64) {
	return l.Gamma, l.Theta, 0
}

// CGFForm returns FormHalfQuadratic.
func (l *ReLULayer) CGFForm() CGFForm { return FormHalfQuadratic }
