package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Monitor selects what the History records. Measurements use HeldOut (or,
// when it is nil, a fixed random subset of the training data) limited to
// Subset rows. The zero value records the pseudo-likelihood and the
// reconstruction error every epoch on up to 1000 rows, and never the
// likelihood.
type Monitor struct {
	// HeldOut is the evaluation set ([BR21] use the test set).
	HeldOut *data.Set
	// Subset is the number of evaluation rows used (default 1000; ≤ 0 or
	// larger than the set: all rows).
	Subset int
	// PLEvery is the number of epochs between pseudo-likelihood
	// measurements (default 1; negative: never).
	PLEvery int
	// ReconEvery is the number of epochs between reconstruction errors
	// (default 1; negative: never).
	ReconEvery int
	// LogLikEvery, when positive, measures the average log-likelihood of
	// the evaluation rows every LogLikEvery epochs: exactly when the model
	// is small enough for rbm's ExactLogZ, otherwise by AIS with AISRuns
	// runs over AISBetas inverse temperatures (defaults 100 and 10000).
	LogLikEvery       int
	AISRuns, AISBetas int
	// Track, when set, measures the log-likelihood of LogLikEvery by
	// tracking log Z along the training run (rbm's LogZTracker, started at
	// the model at the start of Fit or Resume by population annealing from
	// a base fitted to the training data, and moved from one measured
	// epoch's model to the next) instead of AIS from scratch. Track is used
	// and updated in place: its ChainSweeps is the cost. It uses its own
	// chains and random streams, so training is the same with or without
	// it. Moving it after every update instead makes the path as long as
	// the minibatch noise makes the trajectory: on MNIST that was both
	// costlier and far less accurate (tests/bench_sampling.sh).
	Track *rbm.LogZTracker
	// UpdatePL, when positive, also measures the pseudo-likelihood after
	// every update on UpdatePL random evaluation rows ([BR21] Fig. 5a use
	// 100) into History.UpdatePL.
	UpdatePL int
	// StochasticPL measures the pseudo-likelihoods (per epoch and per
	// update) with rbm's StochasticPseudoLikelihood: per row N·log P(v_i |
	// v_−i) for one site i drawn at random, an unbiased estimate of the
	// exact value at 1/N of its cost (the exact one costs N conditionals per
	// row: seconds per epoch for ReLU hidden units with M = 200 on 1000
	// MNIST rows). Its standard deviation per row is of order N times that
	// of one conditional, so average over enough rows (Subset).
	StochasticPL bool
}

// Record is one row of the History: the state after an epoch. Quantities
// not measured at that epoch are NaN.
type Record struct {
	Epoch   int     // the epoch, from 1
	Updates int     // updates completed
	Seconds float64 // wall-clock time since the start of training
	K       int     // Gibbs sweeps per update in this epoch
	LR      float64 // learning rate of this epoch
	// PseudoLikelihood is the mean log pseudo-likelihood per sample (nats)
	// of the evaluation rows.
	PseudoLikelihood float64
	// ReconError is the mean squared difference per unit between the
	// evaluation rows and their mean-field reconstruction E[v | E[h|v]].
	ReconError float64
	// LogLik is the mean log-likelihood per sample (nats) of the evaluation
	// rows; LogLikLow and LogLikHigh bound it (equal for the exact value,
	// ±3 standard errors of AIS).
	LogLik, LogLikLow, LogLikHigh float64
	// LogZ is the log Z behind LogLik and LogZStdErr its standard error
	// when Monitor.Track measured it (NaN otherwise).
	LogZ, LogZStdErr float64
	// WeightNorm is the Frobenius norm of W, MaxWeight the largest |w|.
	WeightNorm, MaxWeight float64
	// GradNorm is the mean norm of the weight part of the ascent direction.
	GradNorm float64
	// ChainMean is the mean visible value of the persistent (β = 1) chains.
	ChainMean float64
	// SwapRate is the acceptance rate of parallel-tempering swaps.
	SwapRate float64
}

// History is the table of per-epoch records of a training run.
type History struct {
	// Records has one entry per completed epoch, in order.
	Records []Record
	// UpdatePL is the per-update pseudo-likelihood (Monitor.UpdatePL).
	UpdatePL []float64
}

// Columns lists the names accepted by History.Column and History.Plot.
var Columns = []string{"seconds", "k", "lr", "pl", "recon", "loglik", "loglik_low", "loglik_high",
	"weight_norm", "max_weight", "grad_norm", "chain_mean", "swap_rate", "logz", "update_pl"}

// Column returns the named column (see Columns) against the epoch, or for
// "update_pl" against the update number, skipping unmeasured (NaN) entries.
func (h *History) Column(name string) (x, y []float64, err error) {
	if name == "update_pl" {
		for k, v := range h.UpdatePL {
			x, y = append(x, float64(k+1)), append(y, v)
		}
		return x, y, nil
	}
	get := map[string]func(r Record) float64{
		"seconds": func(r Record) float64 { return r.Seconds }, "k": func(r Record) float64 { return float64(r.K) },
		"lr": func(r Record) float64 { return r.LR }, "pl": func(r Record) float64 { return r.PseudoLikelihood },
		"recon": func(r Record) float64 { return r.ReconError }, "loglik": func(r Record) float64 { return r.LogLik },
		"loglik_low": func(r Record) float64 { return r.LogLikLow }, "loglik_high": func(r Record) float64 { return r.LogLikHigh },
		"weight_norm": func(r Record) float64 { return r.WeightNorm }, "max_weight": func(r Record) float64 { return r.MaxWeight },
		"grad_norm": func(r Record) float64 { return r.GradNorm }, "chain_mean": func(r Record) float64 { return r.ChainMean },
		"swap_rate": func(r Record) float64 { return r.SwapRate }, "logz": func(r Record) float64 { return r.LogZ },
	}[name]
	if get == nil {
		return nil, nil, fmt.Errorf("train: unknown history column %q (want one of %s)", name, strings.Join(Columns, ", "))
	}
	for _, r := range h.Records {
		if v := get(r); !math.IsNaN(v) {
			x, y = append(x, float64(r.Epoch)), append(y, v)
		}
	}
	return x, y, nil
}

// Last returns the last record (the zero Record when there is none).
func (h *History) Last() Record {
	if len(h.Records) == 0 {
		return Record{}
	}
	return h.Records[len(h.Records)-1]
}

// String formats the history as a text table.
func (h *History) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%5s %8s %7s %3s %9s %10s %9s %10s %9s %9s\n", "epoch", "updates", "sec", "k", "lr", "pl", "recon", "loglik", "‖W‖", "max|w|")
	for _, r := range h.Records {
		fmt.Fprintf(&b, "%5d %8d %7.1f %3d %9.3g %10.4f %9.5f %10.4f %9.4g %9.4g\n", r.Epoch, r.Updates, r.Seconds, r.K, r.LR,
			r.PseudoLikelihood, r.ReconError, r.LogLik, r.WeightNorm, r.MaxWeight)
	}
	return b.String()
}

// monitor holds the evaluation rows of a run.
type monitor struct {
	cfg  Monitor
	eval *mat.Dense
	rng  *rand.Rand
}

func newMonitor(o Options, train *data.Set) (*monitor, error) {
	cfg := o.Monitor
	set := cfg.HeldOut
	if set == nil {
		set = train
	} else if set.Width() != train.Width() {
		return nil, fmt.Errorf("train: Monitor.HeldOut (%s) has %d columns, the training data %d", set.Source, set.Width(), train.Width())
	}
	if cfg.Subset == 0 {
		cfg.Subset = 1000
	}
	if cfg.PLEvery == 0 {
		cfg.PLEvery = 1
	}
	if cfg.ReconEvery == 0 {
		cfg.ReconEvery = 1
	}
	if cfg.AISRuns == 0 {
		cfg.AISRuns = 100
	}
	if cfg.AISBetas == 0 {
		cfg.AISBetas = 10000
	}
	mo := &monitor{cfg: cfg, rng: rand.New(rand.NewPCG(o.Seed, 0x3011))}
	n := set.Len()
	if cfg.Subset > 0 && cfg.Subset < n {
		idx := mo.rng.Perm(n)[:cfg.Subset]
		mo.eval = set.Subset(idx).X
	} else {
		mo.eval = set.X
	}
	return mo, nil
}

// afterUpdate records the per-update pseudo-likelihood when asked for.
func (mo *monitor) afterUpdate(ctx context.Context, r *run) error {
	if mo.cfg.UpdatePL <= 0 {
		return nil
	}
	rows, _ := mo.eval.Dims()
	idx := make([]int, min(mo.cfg.UpdatePL, rows))
	for k := range idx {
		idx[k] = mo.rng.IntN(rows)
	}
	sub := mat.NewDense(len(idx), r.set.Width(), nil)
	for k, i := range idx {
		copy(sub.RawRowView(k), mo.eval.RawRowView(i))
	}
	pl, err := pseudoLikelihood(ctx, r.m, sub, mo.plRNG())
	if err != nil {
		return fmt.Errorf("train: update %d: %w", r.updates, err)
	}
	r.hist.UpdatePL = append(r.hist.UpdatePL, pl)
	return nil
}

// plRNG returns the random source of the stochastic pseudo-likelihood, nil
// for the exact one.
func (mo *monitor) plRNG() *rand.Rand {
	if mo.cfg.StochasticPL {
		return mo.rng
	}
	return nil
}

func due(every, epoch, last int) bool {
	return every > 0 && (epoch%every == 0 || epoch == last)
}

// endOfEpoch measures the record of the epoch just completed.
func (mo *monitor) endOfEpoch(ctx context.Context, r *run, k int, lr, grad float64) (Record, error) {
	nan := math.NaN()
	rec := Record{Epoch: r.epoch, Updates: r.updates, Seconds: r.elapsed + time.Since(r.start).Seconds(), K: k, LR: lr,
		PseudoLikelihood: nan, ReconError: nan, LogLik: nan, LogLikLow: nan, LogLikHigh: nan, LogZ: nan, LogZStdErr: nan,
		GradNorm: grad, ChainMean: chainMean(r.chains), SwapRate: r.chains.swapRate()}
	for _, w := range r.m.W.RawMatrix().Data {
		rec.WeightNorm += w * w
		rec.MaxWeight = math.Max(rec.MaxWeight, math.Abs(w))
	}
	rec.WeightNorm = math.Sqrt(rec.WeightNorm)
	announced := false
	phase := func(what string) {
		if r.o.Phase != nil {
			r.o.Phase(fmt.Sprintf("epoch %d: %s", r.epoch, what))
			announced = true
		}
	}
	defer func() {
		if announced {
			r.o.Phase("")
		}
	}()
	var err error
	if due(mo.cfg.PLEvery, r.epoch, r.o.Epochs) {
		phase("measuring the held-out pseudo-likelihood")
		if rec.PseudoLikelihood, err = pseudoLikelihood(ctx, r.m, mo.eval, mo.plRNG()); err != nil {
			return rec, fmt.Errorf("train: epoch %d: %w", r.epoch, err)
		}
	}
	if due(mo.cfg.ReconEvery, r.epoch, r.o.Epochs) {
		phase("measuring the reconstruction error")
		rec.ReconError = reconError(r.m, mo.eval)
	}
	if due(mo.cfg.LogLikEvery, r.epoch, r.o.Epochs) && mo.cfg.Track != nil {
		phase("tracking log Z to the held-out log-likelihood")
		if err := mo.tracked(ctx, r, &rec); err != nil {
			return rec, fmt.Errorf("train: epoch %d: log Z tracking: %w", r.epoch, err)
		}
	} else if due(mo.cfg.LogLikEvery, r.epoch, r.o.Epochs) {
		phase("estimating the held-out log-likelihood (AIS)")
		if rec.LogLik, rec.LogLikLow, rec.LogLikHigh, err = logLikelihood(ctx, r.m, mo.eval, r.set, mo.cfg, r.o.Seed+uint64(r.epoch)); err != nil {
			return rec, fmt.Errorf("train: epoch %d: log-likelihood: %w", r.epoch, err)
		}
	}
	return rec, nil
}

// startTracking starts Monitor.Track at the current model (see
// Monitor.Track); it does nothing without it.
func (mo *monitor) startTracking(ctx context.Context, r *run) error {
	if mo.cfg.Track == nil || mo.cfg.LogLikEvery <= 0 {
		return nil
	}
	base, err := rbm.BaseFromData(r.m.Visible, r.set.X, 1e-3)
	if err == nil {
		err = mo.cfg.Track.Start(ctx, r.m, base)
	}
	if err != nil {
		return fmt.Errorf("train: starting log Z tracking: %w", err)
	}
	return nil
}

// tracked moves Monitor.Track to the current model and fills the
// likelihood fields of rec.
func (mo *monitor) tracked(ctx context.Context, r *run, rec *Record) error {
	z, se, err := mo.cfg.Track.Next(ctx, r.m)
	if err != nil {
		return err
	}
	ll, err := r.m.LogLikelihood(mo.eval, z)
	if err != nil {
		return err
	}
	rec.LogZ, rec.LogZStdErr = z, se
	rec.LogLik, rec.LogLikLow, rec.LogLikHigh = ll, ll-3*se, ll+3*se
	return nil
}

// reconError returns the mean squared error per unit of E[v | E[h|v]].
func reconError(m *rbm.RBM, v *mat.Dense) float64 {
	rec := m.MeanVisible(m.MeanHidden(v))
	rows, cols := v.Dims()
	s := 0.0
	for b := 0; b < rows; b++ {
		rr := rec.RawRowView(b)
		for i, x := range v.RawRowView(b) {
			s += (x - rr[i]) * (x - rr[i])
		}
	}
	if m.Visible.States() > 1 { // one-hot: per unit, not per column
		cols /= m.Visible.States()
	}
	return s / float64(rows*cols)
}

// chainMean returns the mean visible value of the β = 1 chains (NaN for CD
// and Exact).
func chainMean(c chains) float64 {
	states := c.chainStates()
	if len(states) == 0 {
		return math.NaN()
	}
	v := states[len(states)-1]
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}
