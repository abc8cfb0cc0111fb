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
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Update describes one completed parameter update (see Options.OnUpdate).
type Update struct {
	Epoch    int     // current epoch, from 1
	Update   int     // updates completed since the start of training
	K        int     // Gibbs sweeps used
	LR       float64 // learning rate used
	GradNorm float64 // Euclidean norm of the weight part of the ascent direction
}

// DivergenceError reports a training run stopped because a parameter
// became non-finite, a weight exceeded the Options.MaxWeight threshold or
// (with Options.MinGamma disabled) a curvature γ became ≤ 0. The model holds the
// parameters of the last good update.
type DivergenceError struct {
	// Epoch and Update locate the failed update (epochs from 1, updates
	// counted from the start of training).
	Epoch, Update int
	// Param names the parameter: "weights", "visible.theta", "hidden.gamma", ...
	Param string
	// Index is the flat index within the parameter (row-major for weights).
	Index int
	// Value is the offending value.
	Value float64
	// Limit is the threshold |Value| exceeded (weights), 0 otherwise.
	Limit float64
}

// Error describes the divergence and what to do about it.
func (e *DivergenceError) Error() string {
	beyond := ""
	if e.Limit > 0 {
		beyond = fmt.Sprintf(", beyond MaxWeight %g", e.Limit)
	}
	return fmt.Sprintf("train: diverged at epoch %d, update %d: %s[%d] = %v%s (the model keeps the parameters of the last good update; lower the learning rate or add regularisation)",
		e.Epoch, e.Update, e.Param, e.Index, e.Value, beyond)
}

// Default weight thresholds (Options.MaxWeight).
const (
	defaultMaxWeight = 1e3
	poissonMaxWeight = 34.5 // ≈ ln 1e15
)

// weightLimit returns the divergence threshold on |w| for m
// (Options.MaxWeight, resolved).
func weightLimit(maxWeight float64, m *rbm.RBM) float64 {
	switch {
	case maxWeight < 0:
		return math.Inf(1)
	case maxWeight > 0:
		return maxWeight
	case inputBounded(m.Visible) || inputBounded(m.Hidden):
		return poissonMaxWeight
	}
	return defaultMaxWeight
}

// inputBounded reports a layer whose units sample only below an input bound.
func inputBounded(l rbm.Layer) bool { _, ok := l.(rbm.InputBound); return ok }

// run is the state of one training run.
type run struct {
	o       Options // resolved
	method  Method
	k       int // the method's Gibbs sweeps per update, before the Schedule
	optim   Optimiser
	pen     penalties
	m       *rbm.RBM
	set     *data.Set
	prod    *products
	pos     *phase      // the data phase of the current minibatch
	terms   []term      // the products that make the weight gradient
	lg      *layerGrads // the layers' part of the gradient
	chains  chains      // the method's state: the model phase
	opt     optimiser   // the optimiser's state
	params  [][]float64
	names   []string
	frozen  []bool      // per params slice: listed in Options.Freeze
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
	elapsed float64 // seconds of the run before it was resumed
	best    bestSoFar
	monitor *monitor
	// The plain-SGD weight pass writes the new weights over r.dir.W, and
	// swapWeights then exchanges the arrays of W and r.dir.W: the old
	// weights are the backup, never copied (the last update swapped when
	// wpass.inDir and no weight went bad). wOrig is the model's own array,
	// which settleWeights gives back to W before a callback sees the model
	// and when Fit returns.
	wOrig []float64
	colL1 []float64 // the λ₁² penalty's per-column factors (direction)
	bn    bnStats   // the hidden units' data variances (Options.BatchNorm)
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

// Fit trains m on set with the given method and optimiser and returns
// the history; a nil method is PCD{} and a nil optimiser SGD{}. The model
// is modified in place. The settings are checked before the model is
// touched: an invalid one is an error naming the field, with m unchanged.
// On cancellation of ctx, divergence or an error the history so far is
// returned with the error; the model then holds the parameters of the last
// completed update.
func Fit(ctx context.Context, m *rbm.RBM, set *data.Set, method Method, opt Optimiser, o Options) (*History, error) {
	r, err := newRun(ctx, m, set, method, opt, o)
	if err != nil {
		return nil, err
	}
	r.snapshot()
	before := make([][]float64, len(r.params))
	for p, ps := range r.params {
		before[p] = slices.Clone(ps)
	}
	if r.o.Init != nil {
		err = r.o.Init.initialise(m, set, r.o.Seed, r.isFrozen)
	}
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

// newRun checks the arguments of Fit and Resume and returns the run with
// the options resolved.
func newRun(ctx context.Context, m *rbm.RBM, set *data.Set, method Method, opt Optimiser, o Options) (*run, error) {
	if ctx == nil {
		return nil, errors.New("train: nil context (pass the cell's ctx, or context.Background())")
	}
	if method == nil {
		method = PCD{}
	}
	if opt == nil {
		opt = SGD{}
	}
	cfg, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := method.validate(); err != nil {
		return nil, err
	}
	if _, err := opt.newState(nil); err != nil {
		return nil, err
	}
	pen, err := penaltiesOf(cfg.Regularisers)
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
	r := &run{o: cfg, method: method, k: method.sweeps(), optim: opt, pen: pen, m: m, set: set, hist: &History{}, best: bestSoFar{at: -1}, gauge: m}
	r.params, r.names = modelParams(m)
	r.frozen = make([]bool, len(r.names))
	for _, name := range cfg.Freeze {
		k := slices.Index(r.names, name)
		if k < 0 {
			return nil, fmt.Errorf("train: Options.Freeze: %q is not a parameter of the %s (its parameters are %s)", name, m, strings.Join(r.names, ", "))
		}
		r.frozen[k] = true
	}
	if r.isFrozen("weights") {
		// The gauge acts on the layers only (Potts fields centred): with W
		// fixed there are no colour means to move.
		nv, nh := m.W.Dims()
		r.gauge = &rbm.RBM{Visible: m.Visible, Hidden: m.Hidden, W: mat.NewDense(nv, nh, nil)}
	}
	if cfg.BatchNorm.on() {
		if cfg.Centred {
			return nil, errors.New("train: Options.BatchNorm and Options.Centred both centre the hidden thresholds: set one")
		}
		if err := cfg.BatchNorm.checkModel(m, r.isFrozen); err != nil {
			return nil, err
		}
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
// is listed in Options.Freeze.
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
	if floor := r.o.MinGamma; floor > 0 {
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

// prepare builds the buffers, the optimiser's state and the method's
// chains for the current model.
func (r *run) prepare() error {
	var err error
	r.backup = zerosLike(r.params)
	_, visSig := r.m.Visible.(sigmoidForm)
	_, hidSig := r.m.Hidden.(sigmoidForm)
	vis32 := !r.o.Float32 && !r.o.float64Visible && visSig && hidSig && r.method.gibbs()
	r.prod = newProducts(r.m, r.o.Float32, vis32)
	if r.chains, err = r.method.start(r); err != nil {
		return err
	}
	if r.terms == nil {
		r.terms = []term{r.pos.term(), r.chains.negative().term()}
	}
	if r.coef != nil {
		r.pos.coef = make([]float64, r.o.Batch)
	}
	r.lg = newLayerGrads(r.m)
	r.dir = newGradient(r.m)
	r.wOrig = r.m.W.RawMatrix().Data
	r.wpass.init(r)
	if r.opt, err = r.optim.newState(r.params); err != nil {
		return err
	}
	if r.o.Centred || r.o.BatchNorm.on() {
		r.mu = r.set.Mean()
	}
	if r.o.Centred {
		r.lam = make([]float64, rbm.Width(r.m.Hidden))
		h := r.m.MeanHidden(r.set.X)
		rows, _ := h.Dims()
		for b := 0; b < rows; b++ {
			for j, x := range h.RawRowView(b) {
				r.lam[j] += x / float64(rows)
			}
		}
	}
	r.monitor, err = newMonitor(r.o, r.set)
	return err
}

// loop runs the remaining epochs.
func (r *run) loop(ctx context.Context) (*History, error) {
	r.start = time.Now()
	defer r.settleWeights()
	if err := r.monitor.startTracking(ctx, r); err != nil {
		return r.hist, err
	}
	perEpoch := (r.set.Len() + r.o.Batch - 1) / r.o.Batch
	total := r.o.Epochs * perEpoch
	for r.epoch < r.o.Epochs {
		epoch := r.epoch + 1
		k, lr := r.o.Schedule(epoch, r.k, r.o.LR)
		if k < 1 || !(lr > 0) || math.IsInf(lr, 0) {
			return r.hist, fmt.Errorf("train: the schedule gave k = %d, η = %v at epoch %d", k, lr, epoch)
		}
		it, err := r.set.Minibatches(r.o.Batch, data.BatchOptions{Seed: r.o.Seed ^ uint64(epoch)*0x9e3779b97f4a7c15})
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
			if r.o.OnUpdate != nil {
				r.settleWeights()
				r.o.OnUpdate(Update{Epoch: epoch, Update: r.updates, K: k, LR: lr, GradNorm: gn})
			}
			if r.o.Progress != nil {
				r.o.Progress(r.updates, total)
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
		if r.o.OnEpoch != nil {
			r.settleWeights()
		}
		stop := r.o.OnEpoch != nil && !r.o.OnEpoch(rec)
		if r.earlyStop(rec) {
			stop = true
		}
		if r.o.Checkpoint != "" && (r.epoch%r.o.CheckpointEvery == 0 || r.epoch == r.o.Epochs || stop) {
			if err := r.saveCheckpoint(r.o.Checkpoint); err != nil {
				return r.hist, err
			}
		}
		if stop {
			break
		}
	}
	if r.o.EarlyStop.Patience > 0 && r.o.EarlyStop.RestoreBest && r.best.params != nil {
		for p := range r.params {
			copy(r.params[p], r.best.params[p])
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
	copy(pos.v.f, raw[:b*nv])
	if err := r.chains.advance(ctx, k, pos); err != nil {
		return 0, wrap(err)
	}
	pos.zeroTail()
	r.chains.negative().zeroTail()
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
	global := r.o.Centred || r.pen.l1sq > 0 || r.o.BatchNorm.on()
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
	if r.o.BatchNorm.on() {
		r.bn.compute(r.m.Hidden.(*rbm.DReLULayer), r.pos.in.f, r.pos.rows, r.pos.coef)
	}
	if r.o.Centred {
		// Running average of the data's hidden means.
		for j, x := range r.pos.hs {
			r.lam[j] = 0.99*r.lam[j] + 0.01*x
		}
	}
	r.lg.add(r.chains.negative())
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
	if r.o.BatchNorm.on() {
		followMeanInput(r.m.Hidden.(*rbm.DReLULayer), r.params[last], r.backup[last], r.mu)
		r.bn.rescale(r.m, r.o.BatchNorm.Rate)
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
	if r.o.Centred {
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
	if r.pen.l1sq > 0 {
		// ∂R/∂w_iµ = (λ₁²/(N q)) (Σ_j |w_jµ|) sign(w_iµ), N q = rows.
		// Each core takes a range of columns and walks W row by row (it
		// is row-major), so each column's sum keeps the order of its rows.
		if len(r.colL1) != nh {
			r.colL1 = make([]float64, nh)
		}
		c := r.colL1
		err := workers.ForRanges(nh, inputCols, func(j0, j1 int) error {
			cj := c[j0:j1]
			clear(cj)
			for i := 0; i < nv; i++ {
				for j, x := range w[i*nh+j0 : i*nh+j1] {
					cj[j] += math.Abs(x)
				}
			}
			for j, s := range cj {
				cj[j] = r.pen.l1sq * s / float64(nv)
			}
			f := cj
			if r.o.BatchNorm.on() {
				// The penalty of the normalised weights: v_µ R_µ.
				f = r.bn.pen[j0:j1]
				for j, x := range cj {
					f[j] = x * r.bn.v[j0+j]
				}
			}
			for i := 0; i < nv; i++ {
				row := wd[i*nh+j0 : i*nh+j1]
				for j, x := range w[i*nh+j0 : i*nh+j1] {
					row[j] -= f[j] * sign(x)
				}
			}
			return nil
		})
		if err != nil {
			panic(err) // an indexing bug above, recovered by ForRanges: re-raise it
		}
		if r.o.BatchNorm.on() {
			r.bn.penaltyGradient(d.W, d.Hidden, r.pos.v.f, r.pos.rows, c, r.pen.l1sq)
		}
	}
	if r.o.BatchNorm.on() {
		centreDirection(d.W, d.Hidden, r.mu)
	}
	if r.pen.fields > 0 {
		names := r.m.Visible.ParamNames()
		for p, ps := range r.m.Visible.Params() {
			if isField(names[p]) {
				for k, x := range ps {
					d.Visible[p][k] -= r.pen.fields * x
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

// bestSoFar is the state of EarlyStop: the best value of its metric (signed
// so that higher is better), the index of its record (−1: none yet) and,
// with RestoreBest, the parameters then.
type bestSoFar struct {
	value  float64
	at     int
	params [][]float64
}

// earlyStop records the stop metric and reports whether to stop.
func (r *run) earlyStop(rec Record) bool {
	es := r.o.EarlyStop
	if es.Patience <= 0 {
		return false
	}
	v := es.Metric.of(rec)
	if math.IsNaN(v) {
		return false
	}
	if r.best.at < 0 || v > r.best.value {
		r.best.value, r.best.at = v, len(r.hist.Records)-1
		if es.RestoreBest {
			if r.best.params == nil {
				r.best.params = zerosLike(r.params)
			}
			for p := range r.params {
				copy(r.best.params[p], r.params[p])
			}
		}
		return false
	}
	measured := 0
	for _, x := range r.hist.Records[r.best.at:] {
		if !math.IsNaN(es.Metric.of(x)) {
			measured++
		}
	}
	return measured > es.Patience
}

func timeSince(r *run) float64 { return time.Since(r.start).Seconds() }
