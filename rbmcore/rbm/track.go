package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// LogZTracker follows log Z of a model along a sequence of nearby models,
// such as the parameter updates or checkpoints of a training run, by
// treating the sequence itself as an annealing path: the training
// trajectory replaces AIS's temperatures (Jarzynski 1997; Neal 2001; the
// per-update AIS weights of Decelle, Seoane and co-workers), with the
// resampling of population annealing.
//
// Start draws Populations independent populations of Chains replicas of
// the first model by PopulationAnnealing, with their estimates of log Z.
// Next(m) then moves every replica from the previous model θ to m along
// the straight line between their parameters, in steps chosen so that the
// conditional effective sample size of each step's weights is TargetESS
// (one step when the models are close, as successive updates are). At a
// step from s to s′ a replica's log-weight gains log f_s′(v) − log f_s(v)
// (the hidden layer summed out: minus the change of its free energy) and
// the replica then makes Sweeps Gibbs sweeps of the model at s′, which
// leave that model invariant; a population whose effective sample size
// falls below ResampleESS folds its mean weight into its estimate and is
// resampled. Each population's product of mean weights is then an unbiased
// estimate of Z_m whatever the chains' lag behind equilibrium, unlike
// chained ratio estimates that treat the chains as samples of the current
// model. The result is log mean_p Z_p with the standard error from the
// spread of the independent populations.
//
// The lag still costs variance, and where a model puts mass that no
// replica's Gibbs moves reach, that mass is missed: the estimate is then
// low and its error bar too small, as for AIS with too few temperatures.
// Models trained by PCD on MNIST do this (tests/bench_sampling.sh measures
// the drift against exact log Z), so check the tracked values against AIS
// from scratch now and then. Moving the tracker after every parameter
// update makes the path as long as the minibatch noise makes the
// trajectory; moving it between checkpoints, in as many steps as each
// needs, was both cheaper and more accurate there.
//
// The zero value of every field is a usable default; call Start once,
// then Next for every new model.
type LogZTracker struct {
	// Populations is the number of independent populations (default 8;
	// at least 2 for an error bar).
	Populations int
	// Chains is the number of replicas per population (default 32).
	Chains int
	// Sweeps is the number of Gibbs sweeps per annealing step (default 1).
	Sweeps int
	// TargetESS is the conditional effective sample size fraction each
	// step aims at (default 0.9, in (0, 1)); models further apart get more
	// steps.
	TargetESS float64
	// ResampleESS is the effective sample size fraction below which a
	// population is resampled (default 0.5, in (0, 1]).
	ResampleESS float64
	// MaxSteps bounds the annealing steps of one Next (default 10000).
	MaxSteps int
	// Seed seeds every random choice; a run is reproducible from it.
	Seed uint64

	prev   *RBM
	v, lw  []float64
	logZ   []float64 // log Z_p up to the last resampling of population p
	rngs   []*rand.Rand
	resRNG []*rand.Rand
	sweeps int64
	steps  int
}

func (t *LogZTracker) defaults() error {
	if t.Populations == 0 {
		t.Populations = 8
	}
	if t.Chains == 0 {
		t.Chains = 32
	}
	if t.Sweeps == 0 {
		t.Sweeps = 1
	}
	if t.TargetESS == 0 {
		t.TargetESS = 0.9
	}
	if t.ResampleESS == 0 {
		t.ResampleESS = 0.5
	}
	if t.MaxSteps == 0 {
		t.MaxSteps = 10000
	}
	switch {
	case t.Populations < 2:
		return fmt.Errorf("rbm: LogZTracker: Populations = %d, need at least 2 for an error bar", t.Populations)
	case t.Chains < 2:
		return fmt.Errorf("rbm: LogZTracker: Chains = %d, need at least 2", t.Chains)
	case t.Sweeps < 1:
		return fmt.Errorf("rbm: LogZTracker: Sweeps = %d, want ≥ 1", t.Sweeps)
	case !(t.TargetESS > 0 && t.TargetESS < 1):
		return fmt.Errorf("rbm: LogZTracker: TargetESS = %v, want a fraction in (0, 1)", t.TargetESS)
	case !(t.ResampleESS > 0 && t.ResampleESS <= 1):
		return fmt.Errorf("rbm: LogZTracker: ResampleESS = %v, want a fraction in (0, 1]", t.ResampleESS)
	case t.MaxSteps < 1:
		return fmt.Errorf("rbm: LogZTracker: MaxSteps = %d, want ≥ 1", t.MaxSteps)
	}
	return nil
}

// Start begins tracking at model m (copied): population annealing from
// the independent-site model with visible layer base (nil: m's visible
// layer, i.e. m with its weights switched off; BaseFromData makes the
// annealing shorter) gives the first populations and their log Z.
func (t *LogZTracker) Start(ctx context.Context, m *RBM, base Layer) error {
	ctx = ContextOrDefault(ctx)
	if err := t.defaults(); err != nil {
		return err
	}
	pa, err := PopulationAnnealing{Replicas: t.Chains, Populations: t.Populations, Sweeps: t.Sweeps,
		TargetESS: t.TargetESS, ResampleESS: t.ResampleESS, Base: base, Seed: t.Seed}.Run(ctx, m, nil)
	if err != nil {
		return fmt.Errorf("rbm: LogZTracker.Start: %w", err)
	}
	n := t.Populations * t.Chains
	t.prev = m.Clone()
	t.v = append([]float64(nil), pa.V.RawMatrix().Data...)
	t.lw = make([]float64, n)
	t.logZ = pa.PopulationLogZ
	t.rngs = streams(t.Seed, n, 0x7ac)
	t.resRNG = make([]*rand.Rand, t.Populations)
	for q := range t.resRNG {
		t.resRNG[q] = NewRNG(t.Seed, 0x7ad<<32|uint64(q))
	}
	t.sweeps = int64(pa.Sweeps) * int64(n)
	t.steps = 0
	return nil
}

// Next moves the populations to model m (copied), which must have the
// shape of the previous one, and returns the estimate of its log Z and
// standard error. ctx is checked between steps.
func (t *LogZTracker) Next(ctx context.Context, m *RBM) (logZ, stdErr float64, err error) {
	ctx = ContextOrDefault(ctx)
	if t.prev == nil {
		return 0, 0, fmt.Errorf("rbm: LogZTracker.Next before Start")
	}
	if err := m.Validate(); err != nil {
		return 0, 0, fmt.Errorf("rbm: LogZTracker.Next: %w", err)
	}
	a := t.prev
	if a.Visible.Kind() != m.Visible.Kind() || a.Hidden.Kind() != m.Hidden.Kind() || Width(a.Visible) != Width(m.Visible) || Width(a.Hidden) != Width(m.Hidden) {
		return 0, 0, fmt.Errorf("rbm: LogZTracker.Next: model %v differs in shape from the tracked %v", m, a)
	}
	n := len(t.lw)
	path := newLinePath(a, m, n)
	cur, next := make([]float64, n), make([]float64, n)
	ess := func(s float64) float64 {
		path.logF(s, next)
		worst := 1.0
		for q := 0; q < t.Populations; q++ {
			r0, r1 := q*t.Chains, (q+1)*t.Chains
			worst = math.Min(worst, conditionalESS(next[r0:r1], cur[r0:r1], t.lw[r0:r1]))
		}
		return worst
	}
	vOld := make([]float64, len(t.v))
	nv := Width(m.Visible)
	path.inputs(t.v)
	for s, k := 0.0, 0; s < 1; k++ {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		if k >= t.MaxSteps {
			return 0, 0, fmt.Errorf("rbm: LogZTracker.Next: at s = %.6g of the way to the new model after MaxSteps = %d steps", s, t.MaxSteps)
		}
		path.logF(s, cur)
		ns := 1.0
		if ess(1) < t.TargetESS {
			ns, _ = nextStep(s, t.TargetESS, ess)
		}
		path.logF(ns, next)
		for r := range t.lw {
			t.lw[r] += next[r] - cur[r]
		}
		if err := checkFinite(t.lw, "tracking log-weight"); err != nil {
			return 0, 0, fmt.Errorf("rbm: LogZTracker.Next: %w", err)
		}
		copy(vOld, t.v)
		moved := false
		for q := 0; q < t.Populations; q++ {
			r0 := q * t.Chains
			w := t.lw[r0 : r0+t.Chains]
			if essOf(w) >= t.ResampleESS {
				continue
			}
			est, _, _ := logMeanExp(w)
			t.logZ[q] += est
			resample(t.resRNG[q], w, est, func(dst, src int) {
				copy(t.v[(r0+dst)*nv:(r0+dst+1)*nv], vOld[(r0+src)*nv:(r0+src+1)*nv])
			})
			clear(w)
			moved = true
		}
		for sw := 0; sw < t.Sweeps; sw++ {
			if sw > 0 || moved {
				path.inputs(t.v)
			}
			if err := path.sweep(ns, t.v, t.rngs); err != nil {
				return 0, 0, fmt.Errorf("rbm: LogZTracker.Next: %w", err)
			}
		}
		t.sweeps += int64(t.Sweeps) * int64(n)
		t.steps++
		s = ns
		if s < 1 {
			path.inputs(t.v)
		}
	}
	t.prev = m.Clone()
	return t.LogZ()
}

// LogZ returns the current estimate of log Z and its standard error.
func (t *LogZTracker) LogZ() (logZ, stdErr float64, err error) {
	if t.prev == nil {
		return 0, 0, fmt.Errorf("rbm: LogZTracker.LogZ before Start")
	}
	logZ, stdErr = logMeanExpSE(t.PopulationLogZ())
	return logZ, stdErr, nil
}

// PopulationLogZ returns the current estimates of log Z of the independent
// populations (nil before Start).
func (t *LogZTracker) PopulationLogZ() []float64 {
	if t.prev == nil {
		return nil
	}
	out := make([]float64, t.Populations)
	for q := range out {
		est, _, _ := logMeanExp(t.lw[q*t.Chains : (q+1)*t.Chains])
		out[q] = t.logZ[q] + est
	}
	return out
}

// Samples returns a copy of the replicas' current states (one per row,
// population p in rows p·Chains …) and their normalised weights (summing
// to 1 within each population); nil before Start.
func (t *LogZTracker) Samples() (*mat.Dense, []float64) {
	if t.prev == nil {
		return nil, nil
	}
	w := make([]float64, len(t.lw))
	for q := 0; q < t.Populations; q++ {
		r0, r1 := q*t.Chains, (q+1)*t.Chains
		est, _, _ := logMeanExp(t.lw[r0:r1])
		for r := r0; r < r1; r++ {
			w[r] = math.Exp(t.lw[r]-est) / float64(t.Chains)
		}
	}
	return mat.NewDense(len(t.lw), Width(t.prev.Visible), append([]float64(nil), t.v...)), w
}

// ChainSweeps returns the Gibbs sweeps of one chain spent so far,
// including Start's population annealing (the cost to compare with AIS
// from scratch: Runs·Betas per estimate). Each annealing step also
// evaluates the free energies of every replica under both end models.
func (t *LogZTracker) ChainSweeps() int64 { return t.sweeps }

// Steps returns the number of annealing steps made by Next so far.
func (t *LogZTracker) Steps() int { return t.steps }
