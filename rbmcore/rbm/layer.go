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
	// Kind is the name of the layer's kind, under which it is registered
	// (RegisterLayer) and stored in model files.
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

// The optional interfaces below carry what particular algorithms need
// beyond Layer. An algorithm asks for one with a type assertion and falls
// back to the generic Layer methods (or reports that it does not apply)
// when a layer does not implement it, so a new kind of layer lives in one
// file: it implements Layer, registers itself with RegisterLayer, and adds
// whichever of these its units allow.

// Discrete is implemented by layers whose units take finitely many values.
// Exact enumeration (ExactLogZ, exact likelihoods, exact training),
// pseudo-likelihood and the interaction mapping of the visible layer use it.
type Discrete interface {
	// UnitValues returns the values one unit can take, each as a row of
	// States() entries (the one-hot codes for units with colours). The
	// configuration numbered s of a layer gives unit i value d_i, the i-th
	// digit of s in base len(UnitValues()).
	UnitValues() [][]float64
}

// DataStats are per-column statistics of data rows, the input of
// DataFitter.FitData.
type DataStats struct {
	// Sum holds the per-column sums of the rows (Width entries).
	Sum []float64
	// SumSq holds the per-column sums of squares. Nil means: fit the
	// fields only and keep the layer's curvatures (γ).
	SumSq []float64
	// Rows is the number of rows summed (1 when Sum holds means).
	Rows float64
	// Eps is the pseudocount added to the count of each value of a
	// discrete unit, so that a value absent from the data gets a large
	// finite field rather than an infinite one.
	Eps float64
}

// DataFitter is implemented by layers that can set their parameters so that
// the layer on its own (zero input) reproduces data statistics: the
// independent-site model. BaseFromData (the base model of AIS) and the
// data-based initialisation of trainers use it.
type DataFitter interface {
	// FitData sets the layer's parameters from s. It reports statistics
	// the layer cannot reproduce (e.g. a zero variance), naming the column.
	FitData(s DataStats) error
}

// QuadraticPotential is implemented by layers of real units with the
// potential U(h) = γh²/2 − θh on h ≥ Lower (+∞ below): Gaussian units
// (Lower = −∞) and ReLU units (Lower = 0). The pseudo-likelihood of such a
// visible layer is computed by quadrature of each site's conditional.
type QuadraticPotential interface {
	// Quadratic returns the per-unit curvatures γ and fields θ (the
	// layer's own slices) and the lower end of the support.
	Quadratic() (gamma, theta []float64, lower float64)
}

// CGFForm names a closed form of the cumulant generating function of a
// scalar unit, for algorithms that have specialised numerics for it. With
// x = I + θ (θ and γ the layer's parameters named "theta" and "gamma"):
type CGFForm int

const (
	// FormNone: Γ is known only through the Layer methods.
	FormNone CGFForm = iota
	// FormSoftplus: Γ = log(1 + eˣ) (binary units).
	FormSoftplus
	// FormLogCosh: Γ = log 2cosh x (±1 units).
	FormLogCosh
	// FormQuadratic: Γ = x²/(2γ) + ½ log(2π/γ) (Gaussian units).
	FormQuadratic
	// FormHalfQuadratic: Γ = log(Φ(y)/φ(y)) − ½ log γ, y = x/√γ (ReLU
	// units, a Gaussian truncated to h ≥ 0).
	FormHalfQuadratic
	// FormExp: Γ = eˣ (Poisson units).
	FormExp
)

// ClosedForm is implemented by scalar layers whose Γ has one of the closed
// forms of CGFForm. The interaction mapping (Bulso & Roudi 2021, Eq. 14)
// uses it for exact finite differences and Taylor series of Γ; layers
// without it are mapped through UnitCGF, Mean and Var.
type ClosedForm interface {
	// CGFForm returns the form of Γ shared by all units of the layer.
	CGFForm() CGFForm
}

// InputBound is implemented by layers whose units can be sampled only
// while the input plus field stays below a bound, because Γ grows
// exponentially (Poisson units: a mean e^{I+θ} beyond 1e15). Trainers use
// a tighter default weight limit for models with such a layer.
type InputBound interface {
	// MaxInput returns the largest I + θ at which Sample works.
	MaxInput() float64
}

// MeanGrader is implemented by layers whose conditional means and CGF
// gradients come from the same special functions (ReLU and dReLU units:
// the truncated Gaussians' normalisers and moments), so that a trainer
// needing both at the same inputs (the positive and negative phases)
// evaluates them once.
type MeanGrader interface {
	// MeanGrad sets out = Γ'(in) as Mean does, and for every parameter p
	// (in the order of Params) terms[p][k] = ∂Γ_u/∂ξ_p at in[k], u the
	// unit of column k (len(terms[p]) = len(in)): the per-row values whose
	// batch mean GradCGF returns.
	MeanGrad(in, out []float64, terms [][]float64)
}
