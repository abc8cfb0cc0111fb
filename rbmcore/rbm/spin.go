package rbm

import (
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/bernoulli"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// SpinLayer is a layer of ±1 units with fields Theta: U(h) = -θh,
// Γ(I) = log 2cosh(I + θ), mean tanh(I + θ).
type SpinLayer struct {
	Theta []float64
}

// Spin returns n ±1 units with zero fields.
func Spin(n int) *SpinLayer { return &SpinLayer{Theta: make([]float64, n)} }

// Kind returns "spin".
func (l *SpinLayer) Kind() string { return "spin" }

// Len returns the number of units.
func (l *SpinLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *SpinLayer) States() int { return 1 }

// UnitCGF sets out[k] = log 2cosh(in[k] + θ_u).
func (l *SpinLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = mathx.LogCosh2(x + l.Theta[u])
	}
}

// CGF sets out[b] = Σ_u log 2cosh(I_bu + θ_u).
func (l *SpinLayer) CGF(in, out []float64) {
	scalarCGF(len(l.Theta), in, out, func(u int, x float64) float64 { return mathx.LogCosh2(x + l.Theta[u]) })
}

// Mean sets out = tanh(in + θ).
func (l *SpinLayer) Mean(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return math.Tanh(x + l.Theta[u]) })
}

// Var sets out = 1 - tanh²(in + θ) = 4σ(2x)σ(-2x).
func (l *SpinLayer) Var(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		x = 2 * (x + l.Theta[u])
		return 4 * sigmoid(x) * sigmoid(-x)
	})
}

// Mode sets out = +1 where in + θ ≥ 0, else -1.
func (l *SpinLayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		if x+l.Theta[u] >= 0 {
			return 1
		}
		return -1
	})
}

// Sample sets out = +1 with probability σ(2 beta (in + θ)), else -1.
func (l *SpinLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	rowsOf(len(in), len(l.Theta))
	theta, scale, lo, hi := l.SigmoidForm(beta)
	bernoulli.Sample(rng, theta, in, out, scale, lo, hi, nil)
	return nil
}

// SigmoidForm returns the form of a spin at inverse temperature β:
// −1 + 2·Bernoulli(σ(scale·(I + θ))), so lo = −1, hi = 1, scale = 2β.
func (l *SpinLayer) SigmoidForm(beta float64) (theta []float64, scale, lo, hi float64) {
	return l.Theta, 2 * beta, -1, 1
}

// Energy sets out[b] = -Σ_u θ_u x_bu.
func (l *SpinLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 { return -l.Theta[u] * h })
}

// ParamNames returns ["theta"].
func (l *SpinLayer) ParamNames() []string { return []string{"theta"} }

// Params returns [Theta].
func (l *SpinLayer) Params() [][]float64 { return [][]float64{l.Theta} }

// GradCGF sets grads[0] = batch mean of tanh(in + θ).
func (l *SpinLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) { g[0] = math.Tanh(x + l.Theta[u]) })
}

// GradLogWeight sets grads[0] = batch mean of x.
func (l *SpinLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0] = h })
}

// Validate checks that the fields are finite.
func (l *SpinLayer) Validate() error { return validateParams(l) }

// Clone returns a deep copy.
func (l *SpinLayer) Clone() Layer { return &SpinLayer{Theta: cloneSlice(l.Theta)} }

func init() {
	mustRegister(LayerKind{Name: "spin", New: func(n, _ int) (Layer, error) { return Spin(n), nil }})
}

// UnitValues returns the values {-1} and {+1}.
func (l *SpinLayer) UnitValues() [][]float64 { return [][]float64{{-1}, {1}} }

// CGFForm returns FormLogCosh.
func (l *SpinLayer) CGFForm() CGFForm { return FormLogCosh }

// FitData sets θ = atanh of each column's mean, through the frequency of
// +1 p = ((Sum + Rows)/2 + Eps)/(Rows + 2 Eps): θ = ½ logit p.
func (l *SpinLayer) FitData(s DataStats) error {
	for j, x := range s.Sum {
		p := ((x+s.Rows)/2 + s.Eps) / (s.Rows + 2*s.Eps)
		l.Theta[j] = 0.5 * (math.Log(p) - math.Log1p(-p))
	}
	return nil
}
