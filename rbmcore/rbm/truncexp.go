package rbm

import (
	"math"
	"math/rand/v2"
)

// TruncExpLayer is a layer of bounded real units h ∈ [0, 1] with the linear
// potential U(h) = −θh (+∞ outside [0, 1]). Given its input I, a unit
// follows an exponential distribution truncated to [0, 1],
//
//	P(h | I) = x e^{xh} / (e^x − 1),  x = I + θ  (uniform at x = 0),
//
// a graded unit between a binary unit, whose two states are the ends of
// the interval, and a ReLU, which it resembles for moderate positive x but
// saturates at 1. Its cumulant generating function and derivatives are
//
//	Γ(I)  = log((e^x − 1)/x)           (0 at x = 0)
//	Γ'(I) = 1/(1 − e^{−x}) − 1/x       (the mean; ½ at x = 0)
//	Γ″(I) = 1/x² − 1/(4 sinh²(x/2))    (the variance; 1/12 at x = 0)
//
// evaluated through expm1 away from 0 and their Taylor series near 0, where
// the closed forms cancel. The mode is 1 for x ≥ 0 and 0 otherwise.
type TruncExpLayer struct {
	Theta []float64
}

func init() {
	mustRegister(LayerKind{Name: "truncexp", New: func(n, _ int) (Layer, error) { return TruncExp(n), nil }})
}

// TruncExp returns n truncated-exponential units on [0, 1] with θ = 0.
func TruncExp(n int) *TruncExpLayer { return &TruncExpLayer{Theta: make([]float64, n)} }

// Kind returns "truncexp".
func (l *TruncExpLayer) Kind() string { return "truncexp" }

// Len returns the number of units.
func (l *TruncExpLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *TruncExpLayer) States() int { return 1 }

// truncExpSeries is the |x| below which Γ, Γ' and Γ″ are summed from their
// Taylor series at 0 (truncated where the next term is below 1e-17).
const truncExpSeries = 0.1

// truncExpCGF is Γ as a function of x = I + θ:
// x/2 + log(sinh(x/2)/(x/2)) = x/2 + x²/24 − x⁴/2880 + x⁶/181440 − … near 0.
func truncExpCGF(x float64) float64 {
	switch {
	case math.Abs(x) < truncExpSeries:
		x2 := x * x
		return x/2 + x2*(1.0/24+x2*(-1.0/2880+x2*(1.0/181440-x2/9676800)))
	case x > 0:
		return x + math.Log(-math.Expm1(-x)/x)
	}
	return math.Log(math.Expm1(x) / x)
}

// truncExpMean is Γ'(x) = ½ + x/12 − x³/720 + x⁵/30240 − … near 0.
func truncExpMean(x float64) float64 {
	if math.Abs(x) < truncExpSeries {
		x2 := x * x
		return 0.5 + x*(1.0/12+x2*(-1.0/720+x2*(1.0/30240-x2/1209600)))
	}
	return -1/math.Expm1(-x) - 1/x
}

// truncExpVar is Γ″(x) = 1/12 − x²/240 + x⁴/6048 − x⁶/172800 + … near 0.
func truncExpVar(x float64) float64 {
	if math.Abs(x) < truncExpSeries {
		x2 := x * x
		return 1.0/12 + x2*(-1.0/240+x2*(1.0/6048+x2*(-1.0/172800+x2/5322240)))
	}
	s := math.Sinh(x / 2)
	return 1/(x*x) - 1/(4*s*s)
}

// truncExpDraw inverts the distribution function (e^{xh} − 1)/(e^x − 1)
// at u ∈ [0, 1). For x > 0 it draws 1 − h at −x (the law of 1 − h at x is
// the law of h at −x), so that e^x never overflows.
func truncExpDraw(u, x float64) float64 {
	switch {
	case x == 0:
		return u
	case x > 0:
		return 1 - truncExpDraw(u, -x)
	}
	return math.Min(math.Log1p(u*math.Expm1(x))/x, 1)
}

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *TruncExpLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = truncExpCGF(x + l.Theta[u])
	}
}

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *TruncExpLayer) CGF(in, out []float64) {
	scalarCGF(len(l.Theta), in, out, func(u int, x float64) float64 { return truncExpCGF(x + l.Theta[u]) })
}

// Mean sets out = Γ'(in), the mean of the truncated exponential.
func (l *TruncExpLayer) Mean(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return truncExpMean(x + l.Theta[u]) })
}

// Var sets out = Γ″(in), the variance of the truncated exponential.
func (l *TruncExpLayer) Var(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return truncExpVar(x + l.Theta[u]) })
}

// Mode sets out = 1 where in + θ ≥ 0, else 0.
func (l *TruncExpLayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		if x+l.Theta[u] >= 0 {
			return 1
		}
		return 0
	})
}

// Sample draws out from ∝ exp(beta(in + θ)h) on [0, 1] by inverting its
// distribution function (exact for any input).
func (l *TruncExpLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		out[k] = truncExpDraw(rng.Float64(), beta*(x+l.Theta[k%n]))
	}
	return nil
}

// Energy sets out[b] = −Σ_u θ_u h (+Inf if some h is outside [0, 1]).
func (l *TruncExpLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 {
		if !(h >= 0 && h <= 1) {
			return math.Inf(1)
		}
		return -l.Theta[u] * h
	})
}

// ParamNames returns ["theta"].
func (l *TruncExpLayer) ParamNames() []string { return []string{"theta"} }

// Params returns [Theta].
func (l *TruncExpLayer) Params() [][]float64 { return [][]float64{l.Theta} }

// GradCGF sets grads[0] = batch mean of Γ'(in) (∂Γ/∂θ = ⟨h⟩).
func (l *TruncExpLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) { g[0] = truncExpMean(x + l.Theta[u]) })
}

// GradLogWeight sets grads[0] = batch mean of h.
func (l *TruncExpLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0] = h })
}

// Validate checks that the fields are finite.
func (l *TruncExpLayer) Validate() error { return validateParams(l) }

// Clone returns a deep copy.
func (l *TruncExpLayer) Clone() Layer { return &TruncExpLayer{Theta: cloneSlice(l.Theta)} }
