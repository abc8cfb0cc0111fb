package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DoubleWellLayer is a layer of real units in the symmetric double-well
// potential of Harsh, Tubiana, Cocco & Monasson 2020 (Sec. 2.1), with a
// field θ in the convention of the other layers:
//
//	U(h) = h²/2 + t|h| - θh.
//
// t is the paper's θ_µ (Threshold here, so that Theta stays the field of
// every layer): t = 0 is a Gaussian unit, t < 0 puts two minima at
// h = ±|t| and t → -∞ makes the unit binary; t > 0 is a single well with a
// cusp at h = 0. The paper holds the fields at zero; train.Options.Freeze
// with "hidden.theta" does that, and its trained parameter is then one
// threshold per unit.
//
// It is the dReLU unit (DReLULayer) with γ± = 1, θ₊ = θ - t and
// θ₋ = θ + t, evaluated by the same kernels, with the gradient of the tied
// threshold: ∂Γ/∂t = -⟨|h|⟩ = ⟨h₋⟩ - ⟨h₊⟩.
type DoubleWellLayer struct {
	// Theta holds the fields θ (zero: no preferred sign).
	Theta []float64
	// Threshold holds the thresholds t, the paper's θ_µ (zero: a Gaussian
	// unit).
	Threshold []float64
}

// DoubleWell returns n double-well units with θ = t = 0 (standard Gaussians).
func DoubleWell(n int) *DoubleWellLayer {
	return &DoubleWellLayer{Theta: make([]float64, n), Threshold: make([]float64, n)}
}

// Kind returns "doublewell".
func (l *DoubleWellLayer) Kind() string { return "doublewell" }

// Len returns the number of units.
func (l *DoubleWellLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *DoubleWellLayer) States() int { return 1 }

// unit returns unit u as a dReLU unit.
func (l *DoubleWellLayer) unit(u int) dreluUnit {
	return newDReLUUnit(1, 1, l.Theta[u]-l.Threshold[u], l.Theta[u]+l.Threshold[u])
}

// units returns every unit as a dReLU unit.
func (l *DoubleWellLayer) units() []dreluUnit {
	us := make([]dreluUnit, len(l.Theta))
	for u := range us {
		us[u] = l.unit(u)
	}
	return us
}

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *DoubleWellLayer) UnitCGF(u int, in, out []float64) { l.unit(u).unitCGF(in, out) }

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *DoubleWellLayer) CGF(in, out []float64) { dreluCGF(l.units(), in, out) }

// Mean sets out = Γ'(in).
func (l *DoubleWellLayer) Mean(in, out []float64) {
	dreluEval(l.units(), in, out[:len(in)], nil, doubleWellGrads, nil)
}

// Var sets out = Γ″(in).
func (l *DoubleWellLayer) Var(in, out []float64) {
	dreluEval(l.units(), in, nil, out[:len(in)], doubleWellGrads, nil)
}

// MeanGrad sets out = Γ'(in) and terms to the per-value ∂Γ/∂θ = ⟨h⟩ and
// ∂Γ/∂t = -⟨|h|⟩ of GradCGF, from one evaluation of the branch moments per
// value.
func (l *DoubleWellLayer) MeanGrad(in, out []float64, terms [][]float64) {
	dreluEval(l.units(), in, out[:len(in)], nil, doubleWellGrads, terms)
}

// Mode sets out to the argmax of -U(h) + I h: sign(I+θ)·max(|I+θ| - t, 0)
// (the positive branch on ties).
func (l *DoubleWellLayer) Mode(in, out []float64) { dreluMode(l.units(), in, out) }

// Sample picks a branch with its probability at inverse temperature beta
// and draws the truncated Gaussian of that branch (tail-safe).
func (l *DoubleWellLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	return dreluSample(l.units(), rng, in, out, beta)
}

// Energy sets out[b] = Σ_u U_u(h_bu).
func (l *DoubleWellLayer) Energy(x, out []float64) { dreluEnergy(l.units(), x, out) }

// ParamNames returns ["theta", "threshold"].
func (l *DoubleWellLayer) ParamNames() []string { return []string{"theta", "threshold"} }

// Params returns [Theta, Threshold].
func (l *DoubleWellLayer) Params() [][]float64 { return [][]float64{l.Theta, l.Threshold} }

// GradCGF sets grads to the batch means of ∂Γ/∂θ = ⟨h⟩ and
// ∂Γ/∂t = -⟨|h|⟩.
func (l *DoubleWellLayer) GradCGF(in []float64, grads [][]float64) {
	us := l.units()
	scalarGrad(len(us), in, grads, func(u int, x float64, g []float64) {
		s := us[u].moments(x)
		s.grads(doubleWellGrads, g)
	})
}

// GradLogWeight sets grads to the batch means of h and -|h|.
func (l *DoubleWellLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) {
		g[0], g[1] = h, -math.Abs(h)
	})
}

// Validate checks that both parameters have one finite value per unit.
func (l *DoubleWellLayer) Validate() error {
	if len(l.Threshold) != len(l.Theta) {
		return fmt.Errorf("rbm: doublewell layer: parameter lengths differ (theta %d, threshold %d)", len(l.Theta), len(l.Threshold))
	}
	return validateParams(l)
}

// Clone returns a deep copy.
func (l *DoubleWellLayer) Clone() Layer {
	return &DoubleWellLayer{Theta: cloneSlice(l.Theta), Threshold: cloneSlice(l.Threshold)}
}

func init() {
	mustRegister(LayerKind{Name: "doublewell", New: func(n, _ int) (Layer, error) { return DoubleWell(n), nil }})
}
