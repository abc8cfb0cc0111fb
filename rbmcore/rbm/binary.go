package rbm

import (
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/bernoulli"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// BinaryLayer is a layer of {0,1} units with fields Theta:
// U(h) = -θh, Γ(I) = softplus(I + θ), mean σ(I + θ).
type BinaryLayer struct {
	Theta []float64
}

// Binary returns n binary units with zero fields.
func Binary(n int) *BinaryLayer { return &BinaryLayer{Theta: make([]float64, n)} }

// Kind returns "binary".
func (l *BinaryLayer) Kind() string { return "binary" }

// Len returns the number of units.
func (l *BinaryLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *BinaryLayer) States() int { return 1 }

// UnitCGF sets out[k] = softplus(in[k] + θ_u).
func (l *BinaryLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = mathx.Softplus(x + l.Theta[u])
	}
}

// CGF sets out[b] = Σ_u softplus(I_bu + θ_u).
func (l *BinaryLayer) CGF(in, out []float64) {
	scalarCGF(len(l.Theta), in, out, func(u int, x float64) float64 { return mathx.Softplus(x + l.Theta[u]) })
}

// Mean sets out = σ(in + θ).
func (l *BinaryLayer) Mean(in, out []float64) {
	n := len(l.Theta)
	b := rowsOf(len(in), n)
	out = out[:len(in)]
	for r := 0; r < b; r++ { // the trainer's hot path: AVX2 where available
		mathx.SigmoidAdd(out[r*n:(r+1)*n], in[r*n:(r+1)*n], l.Theta)
	}
}

// Var sets out = σ(x)σ(-x), x = in + θ.
func (l *BinaryLayer) Var(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		x += l.Theta[u]
		return sigmoid(x) * sigmoid(-x)
	})
}

// Mode sets out = 1 where in + θ ≥ 0, else 0.
func (l *BinaryLayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		if x+l.Theta[u] >= 0 {
			return 1
		}
		return 0
	})
}

// Sample sets out = 1 with probability σ(beta*(in + θ)).
func (l *BinaryLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	rowsOf(len(in), len(l.Theta))
	theta, scale, lo, hi := l.SigmoidForm(beta)
	bernoulli.Sample(rng, theta, in, out, scale, lo, hi, nil)
	return nil
}

// SigmoidForm returns the form of a binary unit at inverse temperature β:
// Bernoulli(σ(scale·(I + θ))) on {lo, hi} = {0, 1} with scale = β.
func (l *BinaryLayer) SigmoidForm(beta float64) (theta []float64, scale, lo, hi float64) {
	return l.Theta, beta, 0, 1
}

// Energy sets out[b] = -Σ_u θ_u x_bu.
func (l *BinaryLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 { return -l.Theta[u] * h })
}

// ParamNames returns ["theta"].
func (l *BinaryLayer) ParamNames() []string { return []string{"theta"} }

// Params returns [Theta].
func (l *BinaryLayer) Params() [][]float64 { return [][]float64{l.Theta} }

// GradCGF sets grads[0] = batch mean of σ(in + θ).
func (l *BinaryLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) { g[0] = sigmoid(x + l.Theta[u]) })
}

// GradLogWeight sets grads[0] = batch mean of x.
func (l *BinaryLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0] = h })
}

// Validate checks that the fields are finite.
func (l *BinaryLayer) Validate() error { return validateParams(l) }

// Clone returns a deep copy.
func (l *BinaryLayer) Clone() Layer { return &BinaryLayer{Theta: cloneSlice(l.Theta)} }

func init() {
	mustRegister(LayerKind{Name: "binary", New: func(n, _ int) (Layer, error) { return Binary(n), nil }})
}

// UnitValues returns the values {0} and {1}.
func (l *BinaryLayer) UnitValues() [][]float64 { return [][]float64{{0}, {1}} }

// CGFForm returns FormSoftplus.
func (l *BinaryLayer) CGFForm() CGFForm { return FormSoftplus }

// FitData sets θ to the logit of each column's frequency of 1,
// p = (Sum + Eps)/(Rows + 2 Eps).
func (l *BinaryLayer) FitData(s DataStats) error {
	for j, x := range s.Sum {
		p := (x + s.Eps) / (s.Rows + 2*s.Eps)
		l.Theta[j] = math.Log(p) - math.Log1p(-p)
	}
	return nil
}
