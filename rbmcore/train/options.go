package train

import (
	"fmt"
	"math"
)

// Options configures a training run beyond its Method and Optimiser. The
// zero value of every field is a usable default (noted per field).
type Options struct {
	// Epochs is the number of passes over the data (0: 10).
	Epochs int
	// Batch is the minibatch size (0: 100).
	Batch int
	// LR is the base learning rate η₀ (0: 0.01).
	LR float64
	// Schedule sets k and η per epoch from the method's K and LR (nil:
	// Constant; see GrowingK and GeometricDecay).
	Schedule Schedule
	// Seed seeds every random choice (initialisation, shuffling, chains,
	// monitoring).
	Seed uint64

	// Regularisers are the penalties subtracted from the log-likelihood
	// (nil: none): L2, L1, L1Squared, FieldsL2.
	Regularisers []Regulariser
	// Init, when set, initialises the model from the data before training
	// (InitCentred, InitGaussian); nil keeps the model's parameters.
	Init Initialiser

	// Centred uses centred gradients (Melchior, Fischer & Wiskott 2016):
	// the weight gradient is taken on v − µ and h − λ, with µ the data mean
	// and λ a running average (rate 0.01) of the data's hidden means, and
	// the fields are corrected so the update is that of the centred
	// parametrisation.
	Centred bool
	// Float32 computes the matrix products of the statistics and of the
	// CD/PCD sweeps (hidden and visible inputs, v hᵀ sums) in single
	// precision with a float32 copy of W (sgemm is 2–3× faster than dgemm
	// with OpenBLAS); parameters, updates and layer computations stay in
	// float64, and PT's replicas (rbm.Tempering) stay float64. The rounding
	// (relative 6e-8) is far below the sampling noise of the gradient.
	//
	// Without Float32 every result is that of float64 products. CD/PCD runs
	// whose two layers are binary or spin still compute the visible inputs
	// of the sweeps in float32, but only to sample from them, with a
	// rigorous error bound under which each sample is decided for every
	// input the bound allows; the rare undecided ones are recomputed in
	// float64, so every sample is the one float64 products give (the
	// engine's certified products, rbm.Chains.Products).
	Float32 bool

	// Freeze names parameters that training leaves exactly as they are,
	// by their model-file keys: "visible.theta", "hidden.gamma",
	// "hidden.theta_plus", … (the side, a dot and the layer's ParamNames
	// entry) and "weights" for W (nil: none). Init, the optimiser, the
	// penalties, MinGamma and the zero-sum gauge all leave them untouched
	// ([BR21] fix γ = 1 of their Linear and ReLU units; [HTCM20] hold the
	// fields at 0). With a Potts layer the gauge moves the colour means of
	// the weights into the other layer's fields; when those fields are
	// frozen the weights are projected onto Σ_a w = 0 instead (their colour
	// means would otherwise act as fields), and frozen weights are not
	// centred. A name the model does not have is an error.
	Freeze []string
	// BatchNorm keeps dReLU hidden units at unit variance over the data,
	// by their exact scale symmetry, and evaluates the λ₁² penalty on the
	// weights of the normalised units, as the batch normalisation of
	// [TCM19]'s reference implementation does (zero value: off; see
	// BatchNorm).
	BatchNorm BatchNorm
	// MinGamma is the floor of the curvatures (gamma of Gaussian and ReLU
	// layers, gamma_plus and gamma_minus of dReLU layers, on either side):
	// after every update a γ below MinGamma is set to MinGamma, i.e.
	// projected gradient ascent on γ ≥ MinGamma, so that no optimiser step
	// makes a layer unnormalisable. 0: 0.05 (the papers give no value;
	// [TCM19]'s reference implementation clips γ from below the same way);
	// negative disables the projection, and a γ ≤ 0 then stops training
	// with a DivergenceError.
	MinGamma float64
	// MaxWeight is the divergence threshold on |w|; negative disables it.
	// 0: 1e3, but ln(1e15) ≈ 34.5 when either layer is Poisson ([BR21]'s
	// Exponential units), whose mean exp(input) then changes by a factor
	// beyond 1e15, the largest mean rbm samples, when the unit a weight
	// couples it to switches on: such runs explode (weights in the
	// hundreds, dead units, a ruined pseudo-likelihood) long before |w|
	// reaches 1e3. Non-finite parameters always count as divergence.
	MaxWeight float64

	// Monitor selects the per-epoch measurements of the History.
	Monitor Monitor
	// EarlyStop stops training when a monitored quantity stops improving
	// (zero value: never).
	EarlyStop EarlyStop

	// Checkpoint, if set, is a file written (atomically) every
	// CheckpointEvery epochs and at the end; Resume continues from it.
	Checkpoint string
	// CheckpointEvery is the number of epochs between checkpoints (0: 1).
	CheckpointEvery int

	// Progress, if set, is called after every update with the number of
	// updates done and the total planned (for a progress bar).
	Progress func(done, total int)
	// Phase, if set, is called with what Fit measures between updates when
	// that takes noticeable time ("epoch 3: measuring held-out
	// pseudo-likelihood", "epoch 3: estimating the log-likelihood", …) and
	// with "" when the updates resume after one, so a progress bar can say why it is
	// not moving (display.Progress's PhaseFunc). Zero: no calls.
	Phase func(what string)
	// OnUpdate, if set, is called after every parameter update.
	OnUpdate func(u Update)
	// OnEpoch, if set, is called with each epoch's record; returning false
	// stops training after that epoch.
	OnEpoch func(r Record) bool

	// float64Visible turns the certified float32 visible inputs off (tests
	// compare the two).
	float64Visible bool
}

// withDefaults returns a copy of o with the defaults filled in, or an
// error naming the first invalid field.
func (o Options) withDefaults() (Options, error) {
	if o.Epochs == 0 {
		o.Epochs = 10
	}
	if o.Batch == 0 {
		o.Batch = 100
	}
	if o.LR == 0 {
		o.LR = 0.01
	}
	if o.Schedule == nil {
		o.Schedule = Constant
	}
	if o.MinGamma == 0 {
		o.MinGamma = 0.05
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = 1
	}
	switch {
	case o.Epochs < 1:
		return o, fmt.Errorf("train: Options.Epochs = %d, want ≥ 1 (0: 10)", o.Epochs)
	case o.Batch < 1:
		return o, fmt.Errorf("train: Options.Batch = %d, want ≥ 1 (0: 100)", o.Batch)
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return o, fmt.Errorf("train: Options.LR = %v, want a positive finite value (0: 0.01)", o.LR)
	case o.CheckpointEvery < 1:
		return o, fmt.Errorf("train: Options.CheckpointEvery = %d, want ≥ 1 (0: every epoch)", o.CheckpointEvery)
	case math.IsNaN(o.MaxWeight):
		return o, fmt.Errorf("train: Options.MaxWeight is NaN (want a threshold, 0 for the default or negative for none)")
	case math.IsNaN(o.MinGamma) || math.IsInf(o.MinGamma, 0):
		return o, fmt.Errorf("train: Options.MinGamma = %v, want a finite value (negative: no floor)", o.MinGamma)
	case o.EarlyStop.Patience < 0:
		return o, fmt.Errorf("train: Options.EarlyStop.Patience = %d, want ≥ 0 (0: no early stopping)", o.EarlyStop.Patience)
	case o.EarlyStop.Metric < MetricPL || o.EarlyStop.Metric > MetricRecon:
		return o, fmt.Errorf("train: Options.EarlyStop.Metric = %d, want MetricPL, MetricLogLik or MetricRecon", o.EarlyStop.Metric)
	}
	if err := o.BatchNorm.validate(); err != nil {
		return o, err
	}
	if o.Init != nil {
		if err := o.Init.validate(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// EarlyStop stops training when Metric has not improved for Patience
// consecutive measurements (epochs where the Monitor measured it). The
// zero value never stops.
type EarlyStop struct {
	// Patience is the number of measurements without improvement that
	// stops training (0: early stopping off).
	Patience int
	// Metric is the quantity watched (zero value: MetricPL).
	Metric Metric
	// RestoreBest puts back, when training ends, the parameters of the
	// best measurement.
	RestoreBest bool
}

// Metric is a monitored quantity EarlyStop watches (higher is better after
// the sign noted).
type Metric int

// The metrics of EarlyStop.
const (
	// MetricPL is the held-out pseudo-likelihood (Record.PseudoLikelihood).
	MetricPL Metric = iota
	// MetricLogLik is the held-out log-likelihood (Record.LogLik).
	MetricLogLik
	// MetricRecon is the reconstruction error (Record.ReconError; lower
	// is better).
	MetricRecon
)

// of returns the value of the metric in rec, signed so that higher is
// better, NaN when it was not measured.
func (mt Metric) of(rec Record) float64 {
	switch mt {
	case MetricLogLik:
		return rec.LogLik
	case MetricRecon:
		return -rec.ReconError
	}
	return rec.PseudoLikelihood
}

// A Regulariser is a penalty subtracted from the log-likelihood
// (Options.Regularisers): L2, L1, L1Squared or FieldsL2. A zero strength
// is no penalty; several penalties of one type add up.
type Regulariser interface {
	// addTo adds the penalty's strength to p, or returns an error naming
	// the invalid strength.
	addTo(p *penalties) error
}

// L2 is the weight decay (Lambda/2) Σ w² on the weights.
type L2 struct {
	// Lambda is the strength ≥ 0 (0: no penalty).
	Lambda float64
}

// L1 is the penalty Lambda Σ |w| on the weights.
type L1 struct {
	// Lambda is the strength ≥ 0 (0: no penalty).
	Lambda float64
}

// L1Squared is the penalty of [TCM19] (their Eq. 15, λ₁²)
// (Lambda/(2 N q)) Σ_µ (Σ_{i,a} |w_iµ(a)|)², with N q the number of weight
// rows: an L1 penalty per hidden unit whose strength grows with the unit's
// weights, which makes the hidden units' weights sparse and of similar
// size. [TCM19] use 0.025.
type L1Squared struct {
	// Lambda is the strength λ₁² ≥ 0 (0: no penalty).
	Lambda float64
}

// FieldsL2 is the penalty (Lambda/2) Σ θ² on the visible fields ([TCM19]'s
// λ_f Σ g² is FieldsL2{Lambda: 2λ_f}).
type FieldsL2 struct {
	// Lambda is the strength ≥ 0 (0: no penalty).
	Lambda float64
}

// penalties are the strengths of the Regularisers of a run.
type penalties struct {
	l2, l1, l1sq, fields float64
}

func checkStrength(name string, x float64) error {
	if !(x >= 0) || math.IsInf(x, 0) {
		return fmt.Errorf("train: %s.Lambda = %v, want a finite value ≥ 0", name, x)
	}
	return nil
}

func (r L2) addTo(p *penalties) error {
	p.l2 += r.Lambda
	return checkStrength("L2", r.Lambda)
}

func (r L1) addTo(p *penalties) error {
	p.l1 += r.Lambda
	return checkStrength("L1", r.Lambda)
}

func (r L1Squared) addTo(p *penalties) error {
	p.l1sq += r.Lambda
	return checkStrength("L1Squared", r.Lambda)
}

func (r FieldsL2) addTo(p *penalties) error {
	p.fields += r.Lambda
	return checkStrength("FieldsL2", r.Lambda)
}

// penaltiesOf sums the strengths of rs.
func penaltiesOf(rs []Regulariser) (penalties, error) {
	var p penalties
	for k, r := range rs {
		if r == nil {
			return p, fmt.Errorf("train: Options.Regularisers[%d] is nil", k)
		}
		if err := r.addTo(&p); err != nil {
			return p, err
		}
	}
	return p, nil
}
