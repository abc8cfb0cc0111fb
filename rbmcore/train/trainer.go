// Package train fits RBMs to data the way the seed papers do: CD-k, PCD,
// PCD with parallel tempering or with parallel trajectory tempering (PTT),
// or the exact model average for small models,
// minibatch stochastic gradient ascent with per-epoch shuffling, the SGD,
// momentum and Adam optimisers, constant / seed-001 / user-defined
// schedules, L2 and L1 weight penalties, seed 000's λ₁² penalty, L2 on the
// fields, seed 001 and seed 000 initialisations, gradients for every
// parameter of both layers (ReLU and dReLU γ, θ included), the Potts
// zero-sum gauge kept, curvatures kept ≥ MinGamma, frozen parameters
// (Freeze), centred gradients and data sample weights.
//
// A Trainer is a plain struct: set its fields and call Fit. Fit reports
// progress through callbacks, records a History (held-out pseudo-likelihood,
// reconstruction error, log-likelihood by AIS or by log Z tracked across
// epochs, weight norms, chain statistics) with plot helpers, stops early,
// detects divergence (the last good parameters are kept), stops within one minibatch when its context is
// cancelled (the model is left at the last completed update) and can write
// checkpoints that Resume continues from.
//
// Guarantees: a nil context is context.Background(), and the callbacks (Schedule, OnUpdate,
// OnEpoch, Progress) are only ever called on the goroutine that called Fit
// or Resume, between updates, so a panic in one unwinds through Fit like any
// other and leaves the model at the last completed update.
//
// During Fit, plain SGD keeps the weights in two arrays taken in turn (the
// new weights are written over the gradient, and the old ones are the
// backup for a divergence): the model's W always holds the current
// weights, and from OnUpdate, OnEpoch and once Fit returns they are in W's
// own array again, so a slice of it taken before Fit stays valid there
// (not from Progress or Schedule).
package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Trainer configures a training run. The zero value of every field is a
// usable default (noted per field); only the model and data are required.
type Trainer struct {
	// Method is CD, PCD (default), PT, PTT or Exact.
	Method string
	// K is the number of Gibbs sweeps per update (default 1); the Schedule
	// may change it per epoch.
	K int
	// Chains is the number of persistent chains (PCD, and per temperature
	// for PT); default Batch.
	Chains int
	// Betas is the increasing ladder of inverse temperatures for PT, ending
	// at 1 (default 0.25, 0.5, 0.75, 1).
	Betas []float64
	// Trajectory configures PTT (parallel trajectory tempering).
	Trajectory TrajectoryOptions
	// Epochs is the number of passes over the data (default 10).
	Epochs int
	// Batch is the minibatch size (default 100).
	Batch int
	// LR is the base learning rate η₀ (default 0.01).
	LR float64
	// Schedule sets k and η per epoch (nil: Constant; see Seed001).
	Schedule Schedule

	// Optimizer is SGD (default), Momentum or Adam.
	Optimizer string
	// Momentum is the momentum coefficient µ (default 0.9).
	Momentum float64
	// Beta1, Beta2, Epsilon are Adam's parameters (defaults 0.9, 0.999, 1e-8).
	Beta1, Beta2, Epsilon float64

	// L2 adds the penalty (L2/2) Σ w² on the weights.
	L2 float64
	// L1 adds the penalty L1 Σ |w| on the weights.
	L1 float64
	// L1Squared is seed 000's λ₁² (Eq. 15): the penalty
	// (λ₁²/(2 N q)) Σ_µ (Σ_{i,a} |w_iµ(a)|)², with N q the number of weight
	// rows. Seed 000 uses 0.025.
	L1Squared float64
	// L2Fields adds the penalty (L2Fields/2) Σ θ² on the visible fields
	// (seed 000's λ_f Σ g² is L2Fields = 2λ_f).
	L2Fields float64
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
	// Centred uses centred gradients (Melchior, Fischer & Wiskott 2016):
	// the weight gradient is taken on v − µ and h − λ, with µ the data mean
	// and λ a running average (rate 0.01) of the data's hidden means, and
	// the fields are corrected so the update is that of the centred
	// parametrisation.
	Centred bool

	// Init, when set, initialises the model from the data before training:
	// InitSeed001 or InitSeed000. Empty keeps the model's parameters.
	Init string
	// Pseudocount is the ε of the initialisation (0: the Init's default).
	Pseudocount float64
	// Seed seeds every random choice (initialisation, shuffling, chains).
	Seed uint64

	// Monitor selects the per-epoch measurements of the History.
	Monitor Monitor
	// OnUpdate, if set, is called after every parameter update.
	OnUpdate func(u Update)
	// OnEpoch, if set, is called with each epoch's record; returning false
	// stops training after that epoch.
	OnEpoch func(r Record) bool
	// Progress, if set, is called after every update with the number of
	// updates done and the total planned (for a progress bar).
	Progress func(done, total int)

	// Patience > 0 enables early stopping: training stops when StopMetric
	// ("pl" (default), "loglik" or "recon") has not improved for Patience
	// consecutive measurements. RestoreBest then puts back the parameters
	// of the best measurement.
	Patience    int
	StopMetric  string
	RestoreBest bool

	// Freeze names parameters that training leaves exactly as they are,
	// by their model-file keys: "visible.theta", "hidden.gamma",
	// "hidden.theta_plus", … (the side, a dot and the layer's ParamNames
	// entry) and "weights" for W. Init, the optimiser, the penalties,
	// MinGamma and the zero-sum gauge all leave them untouched (seed 001
	// fixes γ = 1 of its Linear and ReLU units; seeds 003 and 004 hold the
	// fields at 0). With a Potts layer the gauge moves the colour means of
	// the weights into the other layer's fields; when those fields are
	// frozen the weights are projected onto Σ_a w = 0 instead (their colour
	// means would otherwise act as fields: catalogue 004-Q2), and frozen
	// weights are not centred. A name the model does not have is an error.
	Freeze []string
	// MinGamma is the floor of the curvatures (gamma of Gaussian and ReLU
	// layers, gamma_plus and gamma_minus of dReLU layers, on either side):
	// after every update a γ below MinGamma is set to MinGamma, i.e.
	// projected gradient ascent on γ ≥ MinGamma, so that no optimiser step
	// makes a layer unnormalisable. Default 0.05 (the seed papers give no
	// value; the reference code of seed 000 clips γ from below the same
	// way); negative disables the projection, and a γ ≤ 0 then stops
	// training with a DivergenceError.
	MinGamma float64

	// MaxWeight is the divergence threshold on |w|; negative disables it.
	// The default depends on the layers: 1e3, but ln(1e15) ≈ 34.5 when
	// either layer is Poisson (seed 001's Exponential units), whose mean
	// exp(input) then changes by a factor beyond 1e15, the largest mean
	// rbm samples, when the unit a weight couples it to switches on: such
	// runs explode (weights in the hundreds, dead units, a ruined
	// pseudo-likelihood) long before |w| reaches 1e3. Non-finite parameters
	// always count as divergence.
	MaxWeight float64

	// Checkpoint, if set, is a file written (atomically) every
	// CheckpointEvery epochs (default 1) and at the end; Resume continues
	// from it.
	Checkpoint      string
	CheckpointEvery int

	// float64Visible turns the certified float32 visible inputs off (tests
	// compare the two).
	float64Visible bool
}

// Update describes one completed parameter update (see Trainer.OnUpdate).
type Update struct {
	Epoch    int     // current epoch, from 1
	Update   int     // updates completed since the start of training
	K        int     // Gibbs sweeps used
	LR       float64 // learning rate used
	GradNorm float64 // Euclidean norm of the weight part of the ascent direction
}

// DivergenceError reports a training run stopped because a parameter
// became non-finite, a weight exceeded the MaxWeight threshold or (with
// MinGamma disabled) a curvature γ became ≤ 0. The model holds the
// parameters of the last good update.
type DivergenceError struct {
	Epoch, Update int
	// Param names the parameter: "weights", "visible.theta", "hidden.gamma", ...
	Param string
	// Index is the flat index within the parameter (row-major for weights).
	Index int
	Value float64
	// Limit is the threshold |Value| exceeded (weights), 0 otherwise.
	Limit float64
}

func (e *DivergenceError) Error() string {
	beyond := ""
	if e.Limit > 0 {
		beyond = fmt.Sprintf(", beyond MaxWeight %g", e.Limit)
	}
	return fmt.Sprintf("train: diverged at epoch %d, update %d: %s[%d] = %v%s (the model keeps the parameters of the last good update; lower the learning rate or add regularisation)",
		e.Epoch, e.Update, e.Param, e.Index, e.Value, beyond)
}

// withDefaults returns a copy of t with defaults filled in.
func (t Trainer) withDefaults() (Trainer, error) {
	if t.Method == "" {
		t.Method = PCD
	}
	if t.K == 0 {
		t.K = 1
	}
	if t.Epochs == 0 {
		t.Epochs = 10
	}
	if t.Batch == 0 {
		t.Batch = 100
	}
	if t.Chains == 0 {
		t.Chains = t.Batch
	}
	if t.LR == 0 {
		t.LR = 0.01
	}
	if t.Schedule == nil {
		t.Schedule = Constant
	}
	if t.MinGamma == 0 {
		t.MinGamma = 0.05
	}
	if t.CheckpointEvery == 0 {
		t.CheckpointEvery = 1
	}
	if t.StopMetric == "" {
		t.StopMetric = "pl"
	}
	switch {
	case t.K < 1:
		return t, fmt.Errorf("train: K = %d, want ≥ 1", t.K)
	case t.Epochs < 1:
		return t, fmt.Errorf("train: Epochs = %d, want ≥ 1", t.Epochs)
	case t.Batch < 1:
		return t, fmt.Errorf("train: Batch = %d, want ≥ 1", t.Batch)
	case t.Chains < 1:
		return t, fmt.Errorf("train: Chains = %d, want ≥ 1", t.Chains)
	case !(t.LR > 0) || math.IsInf(t.LR, 0):
		return t, fmt.Errorf("train: LR = %v, want a positive finite value", t.LR)
	case t.CheckpointEvery < 1:
		return t, fmt.Errorf("train: CheckpointEvery = %d, want ≥ 1 (0: every epoch)", t.CheckpointEvery)
	case math.IsNaN(t.MaxWeight):
		return t, fmt.Errorf("train: MaxWeight is NaN (want a threshold, 0 for the default or negative for none)")
	case math.IsNaN(t.MinGamma) || math.IsInf(t.MinGamma, 0):
		return t, fmt.Errorf("train: MinGamma = %v, want a finite value (negative: no floor)", t.MinGamma)
	case !(t.Pseudocount >= 0) || math.IsInf(t.Pseudocount, 0):
		return t, fmt.Errorf("train: Pseudocount = %v, want a finite value ≥ 0 (0: the Init's default)", t.Pseudocount)
	case t.StopMetric != "pl" && t.StopMetric != "loglik" && t.StopMetric != "recon":
		return t, fmt.Errorf("train: StopMetric %q, want pl, loglik or recon", t.StopMetric)
	case t.Method != CD && t.Method != PCD && t.Method != PT && t.Method != PTT && t.Method != Exact:
		return t, fmt.Errorf("train: unknown Method %q (want cd, pcd, pt, ptt or exact)", t.Method)
	case t.Init != "" && t.Init != InitSeed001 && t.Init != InitSeed000:
		return t, fmt.Errorf("train: unknown Init %q (want %q or %q)", t.Init, InitSeed001, InitSeed000)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"L2", t.L2}, {"L1", t.L1}, {"L1Squared", t.L1Squared}, {"L2Fields", t.L2Fields}} {
		if !(p.v >= 0) || math.IsInf(p.v, 0) {
			return t, fmt.Errorf("train: %s = %v, want a finite value ≥ 0", p.name, p.v)
		}
	}
	// The optimiser's settings (no state is allocated for no parameters).
	if _, err := newOptimizer(&t, nil); err != nil {
		return t, err
	}
	return t, nil
}

// Default weight thresholds (Trainer.MaxWeight).
const (
	defaultMaxWeight = 1e3
	poissonMaxWeight = 34.5 // ≈ ln 1e15
)

// weightLimit returns the divergence threshold on |w| for m
// (Trainer.MaxWeight, resolved).
func weightLimit(maxWeight float64, m *rbm.RBM) float64 {
	switch {
	case maxWeight < 0:
		return math.Inf(1)
	case maxWeight > 0:
		return maxWeight
	case m.Visible.Kind() == "poisson" || m.Hidden.Kind() == "poisson":
		return poissonMaxWeight
	}
	return defaultMaxWeight
}

// run is the state of one training run.
type run struct {
	t       Trainer
	m       *rbm.RBM
	set     *data.Set
	prod    *products
	pos     *phase      // the data phase of the current minibatch
	all     *phase      // CD, PCD: pos and the chains stacked (pos first)
	terms   []term      // the products that make the weight gradient
	lg      *layerGrads // the layers' part of the gradient
	smp     *sampler
	opt     *optimizer
	params  [][]float64
	names   []string
	frozen  []bool      // per params slice: listed in Trainer.Freeze
	fixed   [][]float64 // the values of the frozen slices (nil for the others)
	gauge   *rbm.RBM    // the model the zero-sum gauge acts on (see constrain)
	backup  [][]float64
	dir     *Gradient // ascent direction after regularisation
	wpass   weightPass
	coef    []float64 // data weights normalised to mean 1
	mu, lam []float64 // centring offsets
	hist    *History
	epoch   int // last completed epoch
	updates int
	start   time.Time
	elapsed float64 // seconds of earlier sessions (resume)
	best    float64
	bestAt  int
	bestPar [][]float64
	monitor *monitor
	// The plain-SGD weight pass writes the new weights over r.dir.W, and
	// swapWeights then exchanges the arrays of W and r.dir.W: the old
	// weights are the backup, never copied (the last update swapped when
	// wpass.inDir and no weight went bad). wOrig is the model's own array,
	// which settleWeights gives back to W before a callback sees the model
	// and when Fit returns.
	wOrig []float64
}

// swapWeights exchanges the arrays of the weights and of the direction.
func (r *run) swapWeights() {
	w, d := r.m.W.RawMatrix(), r.dir.W.RawMatrix()
	r.m.W.SetRawMatrix(d)
	r.dir.W.SetRawMatrix(w)
	r.params[len(r.params)-1] = d.Data
}

// settleWeights puts the current weights back in the model's own array.
func (r *run) settleWeights() {
	if w := r.m.W.RawMatrix().Data; len(w) > 0 && &w[0] != &r.wOrig[0] {
		copy(r.wOrig, w)
		r.swapWeights()
	}
}

// Fit trains m on set and returns the history. The model is modified in
// place. The settings of t are checked before the model is touched: an
// invalid one is an error naming the field, with m unchanged. On
// cancellation of ctx, divergence or an error the history so far is
// returned with the error; the model then holds the parameters of the last
// completed (and valid) update.
func (t *Trainer) Fit(ctx context.Context, m *rbm.RBM, set *data.Set) (*History, error) {
	ctx = rbm.ContextOrDefault(ctx)
	r, err := t.newRun(m, set)
	if err != nil {
		return nil, err
	}
	r.snapshot()
	before := make([][]float64, len(r.params))
	for p, ps := range r.params {
		before[p] = slices.Clone(ps)
	}
	err = initialise(&r.t, m, set, r.isFrozen)
	if err == nil {
		r.constrain()
		err = r.prepare()
	}
	if err != nil {
		// A setting only the model or data can refute (e.g. Exact on a
		// large layer): give the model back as it was.
		for p, ps := range r.params {
			copy(ps, before[p])
		}
		return nil, err
	}
	return r.loop(ctx)
}

func (t *Trainer) newRun(m *rbm.RBM, set *data.Set) (*run, error) {
	cfg, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	if m == nil || set == nil {
		return nil, errors.New("train: nil model or data set")
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if set.Width() != rbm.Width(m.Visible) {
		return nil, fmt.Errorf("train: the data (%s) have %d columns, the visible layer %s needs %d",
			set.Source, set.Width(), m.Visible.Kind(), rbm.Width(m.Visible))
	}
	if set.Len() == 0 {
		return nil, fmt.Errorf("train: the data set %s is empty", set.Source)
	}
	r := &run{t: cfg, m: m, set: set, hist: &History{}, bestAt: -1, gauge: m}
	r.params, r.names = modelParams(m)
	r.frozen = make([]bool, len(r.names))
	for _, name := range cfg.Freeze {
		k := slices.Index(r.names, name)
		if k < 0 {
			return nil, fmt.Errorf("train: Freeze: %q is not a parameter of the %s (its parameters are %s)", name, m, strings.Join(r.names, ", "))
		}
		r.frozen[k] = true
	}
	if r.isFrozen("weights") {
		// The gauge acts on the layers only (Potts fields centred): with W
		// fixed there are no colour means to move.
		nv, nh := m.W.Dims()
		r.gauge = &rbm.RBM{Visible: m.Visible, Hidden: m.Hidden, W: mat.NewDense(nv, nh, nil)}
	}
	if set.Weights != nil {
		c, err := normalisedCoef(set.Weights)
		if err != nil {
			return nil, fmt.Errorf("train: data set %s: %w", set.Source, err)
		}
		for i := range c {
			c[i] *= float64(len(c))
		}
		r.coef = c
	}
	return r, nil
}

// isFrozen reports whether the parameter named name (a modelParams name)
// is listed in Trainer.Freeze.
func (r *run) isFrozen(name string) bool {
	k := slices.Index(r.names, name)
	return k >= 0 && r.frozen[k]
}

// snapshot records the current values of the frozen parameters.
func (r *run) snapshot() {
	r.fixed = make([][]float64, len(r.params))
	for p, f := range r.frozen {
		if f {
			r.fixed[p] = slices.Clone(r.params[p])
		}
	}
}

// constrain puts the parameters back into the set training keeps them in,
// after an update or the initialisation: curvatures γ ≥ MinGamma, Potts
// layers in the zero-sum gauge, frozen parameters at their values.
// Restoring frozen fields after the gauge has moved colour means into them
// leaves exactly the projection of the weights onto the gauge.
func (r *run) constrain() {
	if floor := r.t.MinGamma; floor > 0 {
		for p, ps := range r.params {
			if isCurvature(r.names[p]) {
				for k, x := range ps {
					if x < floor { // NaN stays, for checkDivergence
						ps[k] = floor
					}
				}
			}
		}
	}
	r.gauge.ZeroSumGauge()
	for p, v := range r.fixed {
		if v != nil {
			copy(r.params[p], v)
		}
	}
}

// isCurvature reports whether a modelParams name is a curvature γ, γ₊ or γ₋
// (which must stay positive).
func isCurvature(name string) bool {
	_, p, _ := strings.Cut(name, ".")
	return strings.HasPrefix(p, "gamma")
}

// prepare builds the buffers, optimiser and chains for the current model.
func (r *run) prepare() error {
	var err error
	r.backup = zerosLike(r.params)
	_, visSig := r.m.Visible.(sigmoidForm)
	_, hidSig := r.m.Hidden.(sigmoidForm)
	vis32 := !r.t.Float32 && !r.t.float64Visible && visSig && hidSig && (r.t.Method == CD || r.t.Method == PCD)
	r.prod = newProducts(r.m, r.t.Float32, vis32)
	nv, nh, batch := r.prod.nv, r.prod.nh, r.t.Batch
	var neg *phase
	switch r.t.Method {
	case CD, PCD:
		// The minibatch and the chains are stacked in one set of buffers,
		// so that the weight gradient is a single product over both.
		chains := batch
		if r.t.Method == PCD {
			chains = r.t.Chains
		}
		r.all = newPhase(nil, batch+chains, nv, nh, r.t.Float32, 0)
		r.pos, neg = r.all.slice(0, batch, 1), r.all.slice(batch, batch+chains, -1)
		r.terms = []term{r.all.term()}
	default:
		r.pos = newPhase(nil, batch, nv, nh, r.t.Float32, 1)
	}
	if r.coef != nil {
		r.pos.coef = make([]float64, batch)
	}
	r.lg = newLayerGrads(r.m)
	r.dir = newGradient(r.m)
	r.wOrig = r.m.W.RawMatrix().Data
	r.wpass.init(r)
	if r.opt, err = newOptimizer(&r.t, r.params); err != nil {
		return err
	}
	if r.smp, err = newSampler(&r.t, r.m, r.prod, neg); err != nil {
		return err
	}
	if r.terms == nil {
		r.terms = []term{r.pos.term(), r.smp.neg.term()}
	}
	if r.t.Centred {
		r.mu = r.set.Mean()
		r.lam = make([]float64, rbm.Width(r.m.Hidden))
		h := r.m.MeanHidden(r.set.X)
		rows, _ := h.Dims()
		for b := 0; b < rows; b++ {
			for j, x := range h.RawRowView(b) {
				r.lam[j] += x / float64(rows)
			}
		}
	}
	r.monitor, err = newMonitor(&r.t, r.set)
	return err
}

// loop runs the remaining epochs.
func (r *run) loop(ctx context.Context) (*History, error) {
	r.start = time.Now()
	defer r.settleWeights()
	if err := r.monitor.startTracking(ctx, r); err != nil {
		return r.hist, err
	}
	perEpoch := (r.set.Len() + r.t.Batch - 1) / r.t.Batch
	total := r.t.Epochs * perEpoch
	for r.epoch < r.t.Epochs {
		epoch := r.epoch + 1
		k, lr := r.t.Schedule(epoch, r.t.K, r.t.LR)
		if k < 1 || !(lr > 0) || math.IsInf(lr, 0) {
			return r.hist, fmt.Errorf("train: the schedule gave k = %d, η = %v at epoch %d", k, lr, epoch)
		}
		it, err := r.set.Minibatches(r.t.Batch, data.BatchOptions{Seed: r.t.Seed ^ uint64(epoch)*0x9e3779b97f4a7c15})
		if err != nil {
			return r.hist, err
		}
		gradSum, n := 0.0, 0
		for it.Next() {
			if err := ctx.Err(); err != nil {
				return r.hist, fmt.Errorf("train: stopped in epoch %d after %d updates: %w", epoch, r.updates, err)
			}
			gn, err := r.update(ctx, it, epoch, k, lr)
			if err != nil {
				return r.hist, err
			}
			gradSum += gn
			n++
			if r.t.OnUpdate != nil {
				r.settleWeights()
				r.t.OnUpdate(Update{Epoch: epoch, Update: r.updates, K: k, LR: lr, GradNorm: gn})
			}
			if r.t.Progress != nil {
				r.t.Progress(r.updates, total)
			}
			if err := r.monitor.afterUpdate(ctx, r); err != nil {
				return r.hist, err
			}
		}
		r.epoch = epoch
		rec, err := r.monitor.endOfEpoch(ctx, r, k, lr, gradSum/float64(max(n, 1)))
		if err != nil {
			return r.hist, err
		}
		r.hist.Records = append(r.hist.Records, rec)
		if r.t.OnEpoch != nil {
			r.settleWeights()
		}
		stop := r.t.OnEpoch != nil && !r.t.OnEpoch(rec)
		if r.earlyStop(rec) {
			stop = true
		}
		if r.t.Checkpoint != "" && (r.epoch%r.t.CheckpointEvery == 0 || r.epoch == r.t.Epochs || stop) {
			if err := r.saveCheckpoint(r.t.Checkpoint); err != nil {
				return r.hist, err
			}
		}
		if stop {
			break
		}
	}
	if r.t.Patience > 0 && r.t.RestoreBest && r.bestPar != nil {
		for p := range r.params {
			copy(r.params[p], r.bestPar[p])
		}
	}
	return r.hist, nil
}

// update performs one minibatch update and returns the weight-gradient norm.
//
// Its work is split over the cores (workers.ForRanges, OpenBLAS
// single-threaded in each worker): the sweeps take ranges of chains for the
// sampling and ranges of hidden units for the products v·W (sampler.sweep);
// then each core takes a range of visible units and computes those rows of
// the weight gradient, the penalties, the optimiser step, the backup and
// the divergence scan of W in one pass (weightPass).
func (r *run) update(ctx context.Context, it *data.Iterator, epoch, k int, lr float64) (float64, error) {
	batch := it.Batch()
	b, _ := batch.Dims()
	pos := r.pos
	raw := batch.RawMatrix().Data
	nv := r.prod.nv
	pos.rows = b
	if r.coef != nil {
		pos.coef = pos.coef[:b]
		for i, row := range it.Indices() {
			pos.coef[i] = r.coef[row] / float64(b)
		}
	}
	wrap := func(err error) error { return fmt.Errorf("train: epoch %d, update %d: %w", epoch, r.updates+1, err) }
	smp := r.smp
	switch r.t.Method {
	case CD, PCD:
		if r.t.Method == CD {
			smp.neg.rows = b
		}
		copy(pos.v.f, raw[:b*nv])
		pos.v.sync32(0, b)
		if err := smp.sweep(ctx, k, pos, r.all); err != nil {
			return 0, wrap(err)
		}
	default:
		copy(pos.v.f, raw[:b*nv])
		if err := pos.fill(r.prod); err != nil {
			return 0, wrap(err)
		}
		if err := smp.modelPhase(ctx, k); err != nil {
			return 0, wrap(err)
		}
	}
	pos.zeroTail()
	smp.neg.zeroTail()
	if err := r.step(epoch, lr); err != nil {
		return 0, err
	}
	return r.wpass.norm(), nil
}

// step turns the gradient into the ascent direction (penalties, centring),
// applies the optimiser, keeps the constraints and checks for divergence
// (restoring the last good parameters). The weight rows are done by
// weightPass; centring and the λ₁² penalty need whole columns of the
// gradient or of W, and a Potts gauge or frozen weights change W after the
// step, so those runs split the pass around the serial parts.
func (r *run) step(epoch int, lr float64) error {
	last := len(r.params) - 1 // the weights
	for p := 0; p < last; p++ {
		copy(r.backup[p], r.params[p])
	}
	wp := &r.wpass
	wp.lr, wp.terms = lr, r.terms
	global := r.t.Centred || r.t.L1Squared > 0
	local := !global && !r.frozen[last] && r.m.Visible.States() == 1 && r.m.Hidden.States() == 1
	r.opt.begin()
	if local {
		if err := wp.run(true, true, true); err != nil {
			return err
		}
		if wp.inDir && wp.firstBad() < 0 {
			r.swapWeights()
		}
	} else if err := wp.run(true, false, false); err != nil {
		return err
	}
	// The layers' gradients, from the phase means the pass summed.
	r.lg.reset()
	r.lg.add(r.pos)
	if r.t.Centred {
		// Running average of the data's hidden means.
		for j, x := range r.pos.hs {
			r.lam[j] = 0.99*r.lam[j] + 0.01*x
		}
	}
	r.lg.add(r.smp.neg)
	r.direction()
	if !local {
		if err := wp.run(false, true, false); err != nil {
			return err
		}
	}
	dirs := r.dir.slices()
	for p := 0; p < last; p++ {
		r.opt.apply(p, 0, len(r.params[p]), r.params[p], dirs[p], lr)
	}
	r.constrain()
	if !local {
		if err := wp.run(false, false, true); err != nil {
			return err
		}
	}
	r.updates++
	return r.checkDivergence(epoch)
}

// direction turns the layers' accumulated gradient into their part of the
// ascent direction r.dir, and applies the corrections of the weight part
// that need whole columns (centring, λ₁²); r.dir.W holds the weight
// gradient. The elementwise weight penalties (L2, L1) are applied per row
// by weightPass.
func (r *run) direction() {
	g := r.lg
	d := r.dir
	for p := range g.vis {
		copy(d.Visible[p], g.vis[p])
	}
	for p := range g.hid {
		copy(d.Hidden[p], g.hid[p])
	}
	nv, nh := d.W.Dims()
	wd := d.W.RawMatrix().Data
	if r.t.Centred {
		// ∇W_c = ∇W − µ ∇hᵀ − ∇v λᵀ; the fields get −∇W_c λ (visible) and
		// −∇W_cᵀ µ (hidden).
		dv, dh := r.lg.vMean, r.lg.hMean
		for i := 0; i < nv; i++ {
			for j := 0; j < nh; j++ {
				wd[i*nh+j] -= r.mu[i]*dh[j] + dv[i]*r.lam[j]
			}
		}
		cv := make([]float64, nv)
		ch := make([]float64, nh)
		for i := 0; i < nv; i++ {
			for j := 0; j < nh; j++ {
				cv[i] -= wd[i*nh+j] * r.lam[j]
				ch[j] -= wd[i*nh+j] * r.mu[i]
			}
		}
		addToFields(r.m.Visible, d.Visible, cv)
		addToFields(r.m.Hidden, d.Hidden, ch)
	}
	w := r.m.W.RawMatrix().Data
	if r.t.L1Squared > 0 {
		// ∂R/∂w_iµ = (λ₁²/(N q)) (Σ_j |w_jµ|) sign(w_iµ), N q = rows.
		for j := 0; j < nh; j++ {
			s := 0.0
			for i := 0; i < nv; i++ {
				s += math.Abs(w[i*nh+j])
			}
			c := r.t.L1Squared * s / float64(nv)
			for i := 0; i < nv; i++ {
				wd[i*nh+j] -= c * sign(w[i*nh+j])
			}
		}
	}
	if r.t.L2Fields > 0 {
		names := r.m.Visible.ParamNames()
		for p, ps := range r.m.Visible.Params() {
			if isField(names[p]) {
				for k, x := range ps {
					d.Visible[p][k] -= r.t.L2Fields * x
				}
			}
		}
	}
}

// addToFields adds delta (one entry per batch column of l) to the gradient
// of every field parameter of l.
func addToFields(l rbm.Layer, grads [][]float64, delta []float64) {
	names := l.ParamNames()
	for p := range grads {
		if isField(names[p]) {
			for k := range grads[p] {
				grads[p][k] += delta[k]
			}
		}
	}
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// checkDivergence restores the last good parameters and returns a
// DivergenceError when a parameter is not finite or a weight is too large
// (the weights were scanned by weightPass), or an error when a layer
// parameter left its domain (e.g. γ ≤ 0).
func (r *run) checkDivergence(epoch int) error {
	last := len(r.params) - 1
	restore := func() {
		for q := range r.params {
			if q < last || !r.wpass.inDir {
				copy(r.params[q], r.backup[q])
			} else if r.wpass.firstBad() < 0 { // this update swapped
				r.swapWeights() // the old weights are still in the other array
			}
		}
		r.prod.refresh(r.params[last], 0, r.prod.nv)
	}
	for p, ps := range r.params[:last] {
		positive := isCurvature(r.names[p]) // curvatures must stay > 0
		for k, x := range ps {
			if math.IsNaN(x) || math.IsInf(x, 0) || (positive && !(x > 0)) {
				restore()
				return &DivergenceError{Epoch: epoch, Update: r.updates, Param: r.names[p], Index: k, Value: x}
			}
		}
	}
	if k := r.wpass.firstBad(); k >= 0 {
		x := r.params[last][k]
		if r.wpass.inDir {
			x = r.dir.W.RawMatrix().Data[k] // the rejected step was not swapped in
		}
		restore()
		de := &DivergenceError{Epoch: epoch, Update: r.updates, Param: r.names[last], Index: k, Value: x}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			de.Limit = r.wpass.limit
		}
		return de
	}
	for _, l := range []rbm.Layer{r.m.Visible, r.m.Hidden} {
		if err := l.Validate(); err != nil {
			restore()
			return fmt.Errorf("train: diverged at epoch %d, update %d (the last good parameters are kept): %s layer: %w", epoch, r.updates, l.Kind(), err)
		}
	}
	return nil
}

// earlyStop records the stop metric and reports whether to stop.
func (r *run) earlyStop(rec Record) bool {
	if r.t.Patience <= 0 {
		return false
	}
	var v float64
	switch r.t.StopMetric {
	case "pl":
		v = rec.PseudoLikelihood
	case "loglik":
		v = rec.LogLik
	case "recon":
		v = -rec.ReconError
	}
	if math.IsNaN(v) {
		return false
	}
	if r.bestAt < 0 || v > r.best {
		r.best, r.bestAt = v, len(r.hist.Records)-1
		if r.t.RestoreBest {
			if r.bestPar == nil {
				r.bestPar = zerosLike(r.params)
			}
			for p := range r.params {
				copy(r.bestPar[p], r.params[p])
			}
		}
		return false
	}
	measured := 0
	for _, x := range r.hist.Records[r.bestAt:] {
		if !math.IsNaN(metricOf(x, r.t.StopMetric)) {
			measured++
		}
	}
	return measured > r.t.Patience
}

func metricOf(rec Record, name string) float64 {
	switch name {
	case "pl":
		return rec.PseudoLikelihood
	case "loglik":
		return rec.LogLik
	}
	return rec.ReconError
}

func timeSince(r *run) float64 { return time.Since(r.start).Seconds() }
