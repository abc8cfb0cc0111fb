package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// PoissonLayer is a layer of count units h ∈ ℕ with U(h) = -θh + ln h!
// (the Exponential unit of Bulso & Roudi 2021 with threshold c is θ = -c):
// Γ(I) = λ = exp(I+θ) = mean = variance; the mode is ⌊λ⌋.
type PoissonLayer struct {
	Theta []float64
}

// Poisson returns n Poisson units with θ = 0.
func Poisson(n int) *PoissonLayer { return &PoissonLayer{Theta: make([]float64, n)} }

// Kind returns "poisson".
func (l *PoissonLayer) Kind() string { return "poisson" }

// Len returns the number of units.
func (l *PoissonLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *PoissonLayer) States() int { return 1 }

func (l *PoissonLayer) lambda(u int, x float64) float64 { return math.Exp(x + l.Theta[u]) }

// UnitCGF sets out[k] = exp(in[k] + θ_u) (+Inf when it overflows).
func (l *PoissonLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.lambda(u, x)
	}
}

// CGF sets out[b] = Σ_u exp(I_bu + θ_u).
func (l *PoissonLayer) CGF(in, out []float64) { scalarCGF(len(l.Theta), in, out, l.lambda) }

// Mean sets out = exp(in + θ).
func (l *PoissonLayer) Mean(in, out []float64) { scalarMap(len(l.Theta), in, out, l.lambda) }

// Var sets out = exp(in + θ).
func (l *PoissonLayer) Var(in, out []float64) { scalarMap(len(l.Theta), in, out, l.lambda) }

// Mode sets out = ⌊exp(in + θ)⌋.
func (l *PoissonLayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return math.Floor(l.lambda(u, x)) })
}

// Sample draws out ~ Poisson(exp(in + θ)). Only beta = 1 is supported (the
// tempered distribution is not Poisson); a mean above mathx's limit 1e15
// (input + θ > 34.5) is reported as an error naming the unit.
func (l *PoissonLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if beta != 1 {
		return fmt.Errorf("rbm: poisson layer: sampling at beta = %v is not supported (only 1)", beta)
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		v, err := mathx.Poisson(rng, l.lambda(k%n, x))
		if err != nil {
			return fmt.Errorf("rbm: poisson unit %d (row %d): %w", k%n, k/n, err)
		}
		out[k] = v
	}
	return nil
}

// Energy sets out[b] = Σ_u -θ_u h + ln h! (+Inf for a negative or
// non-integer h).
func (l *PoissonLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 {
		if h < 0 || h != math.Floor(h) {
			return math.Inf(1)
		}
		lg, _ := math.Lgamma(h + 1)
		return -l.Theta[u]*h + lg
	})
}

// ParamNames returns ["theta"].
func (l *PoissonLayer) ParamNames() []string { return []string{"theta"} }

// Params returns [Theta].
func (l *PoissonLayer) Params() [][]float64 { return [][]float64{l.Theta} }

// GradCGF sets grads[0] = batch mean of exp(in + θ).
func (l *PoissonLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) { g[0] = l.lambda(u, x) })
}

// GradLogWeight sets grads[0] = batch mean of h.
func (l *PoissonLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0] = h })
}

// Validate checks that the fields are finite.
func (l *PoissonLayer) Validate() error { return validateParams(l) }

// Clone returns a deep copy.
func (l *PoissonLayer) Clone() Layer { return &PoissonLayer{Theta: cloneSlice(l.Theta)} }

func init() {
	mustRegister(LayerKind{Name: "poisson", New: func(n, _ int) (Layer, error) { return Poisson(n), nil }})
}

// CGFForm returns FormExp.
func (l *PoissonLayer) CGFForm() CGFForm { return FormExp }

// MaxInput returns ln 1e15 ≈ 34.5: beyond it the mean e^{I+θ} exceeds
// the sampler's limit and Sample returns an error.
func (l *PoissonLayer) MaxInput() float64 { return math.Log(1e15) }
