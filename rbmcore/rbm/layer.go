package rbm

import (
	"math/rand/v2"
)

// Layer is one family of units of an RBM, vectorised over a batch.
//
// Conventions (shared by every algorithm in rbmcore): a unit with value h and
// input I has weight exp(-U(h) + I*h), where U is the unit's potential and
// contains -θh (θ is a field). The cumulant generating function of a unit is
// Γ(I) = log Σ_h exp(-U(h) + I*h) (an integral for continuous units), so
// Γ'(I) is the conditional mean and Γ″(I) the conditional variance.
//
// Batched methods take row-major matrices flattened into slices: a batch of B
// rows has B*Width() entries, Width() = Len()*States(). Potts units are one-hot
// coded: unit i occupies columns i*q .. i*q+q-1 of a row, both for states and
// for inputs. The batch size is len(in)/Width; out slices must have the size
// stated per method.
//
// Parameters: Params returns views of the layer's parameter slices (the
// exported fields, in the order of ParamNames; for Potts each has Len*Q
// entries, otherwise Len), so a trainer updates a layer by writing into them.
// GradCGF and GradLogWeight return gradients laid out the same way.
type Layer interface {
	// Kind is the model-file name of the layer: binary, spin, potts,
	// gaussian, relu, drelu or poisson.
	Kind() string
	// Len is the number of units.
	Len() int
	// States is the one-hot width of a unit: q for Potts, 1 otherwise.
	States() int

	// UnitCGF sets out[k] = Γ_u(in[k]) for the single scalar unit u
	// (the unit's own parameters included). Not defined for Potts layers
	// (it panics); use CGF.
	UnitCGF(u int, in, out []float64)

	// CGF sets out[b] = Σ_u Γ_u(I_bu) for each row b of the input batch
	// (len(out) = batch size).
	CGF(in, out []float64)
	// Mean sets out = Γ'(in) elementwise: the conditional mean of each unit
	// (for Potts the one-hot probabilities). len(out) = len(in).
	Mean(in, out []float64)
	// Var sets out = Γ″(in) elementwise: the conditional variance (for
	// Potts the diagonal p(1-p) of the one-hot covariance).
	Var(in, out []float64)
	// Mode sets out to the most probable state given the input (the
	// activation function). Ties go to the larger state (binary: 1,
	// spin: +1, Poisson: λ for integer λ; Potts: the first colour).
	Mode(in, out []float64)
	// Sample draws out ~ P(h | in) at inverse temperature beta, i.e. from
	// ∝ exp(beta*(-U(h) + in*h)), independently for every unit and row.
	// beta must be positive; Poisson layers accept only beta = 1. An error
	// is returned when a unit's distribution overflows (Poisson mean).
	Sample(rng *rand.Rand, in, out []float64, beta float64) error
	// Energy sets out[b] = Σ_u U_u(x_bu) for each row b of the states x
	// (+Inf for a state outside the support).
	Energy(x, out []float64)

	// ParamNames names the parameter slices in the order of Params; the
	// names are the model-file keys (theta, gamma, gamma_plus, ...).
	ParamNames() []string
	// Params returns the layer's parameter slices (not copies).
	Params() [][]float64
	// GradCGF sets grads[p] to the batch average of ∂Γ/∂ξ for every
	// parameter ξ of Params()[p], at the inputs in. (∂Γ/∂ξ = ⟨-∂U/∂ξ⟩.)
	GradCGF(in []float64, grads [][]float64)
	// GradLogWeight sets grads[p] to the batch average of -∂U(x)/∂ξ at the
	// states x: the sufficient statistics of the layer, whose data average
	// minus model average is the log-likelihood gradient of a visible
	// layer's parameters.
	GradLogWeight(x []float64, grads [][]float64)
	// Validate reports a parameter that is out of its domain (non-finite,
	// or a non-positive γ), naming it and the unit.
	Validate() error
	// Clone returns a deep copy.
	Clone() Layer
}

// Width is the row width of a layer's batched matrices: Len()*States().
func Width(l Layer) int { return l.Len() * l.States() }

// NewGrads allocates gradient slices shaped like l.Params().
func NewGrads(l Layer) [][]float64 {
	ps := l.Params()
	g := make([][]float64, len(ps))
	for i, p := range ps {
		g[i] = make([]float64, len(p))
	}
	return g
}
