package train

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// LogZTracker follows log Z of a model through a sequence of nearby
// models (the checkpoints of a training run) by chaining estimates of
// log(Z_t/Z_{t−1}) between successive models (rbm.Bridge: AIS between the
// two models in both directions combined by Bennett's acceptance ratio),
// the approach of RestrictedBoltzmannMachines.jl's log Z tracking. Each
// step costs 2·Steps·Chains Gibbs sweeps of one chain (plus Sweeps·Chains
// to refresh the samples), against about Runs·Betas for AIS from scratch;
// the standard errors of the steps add in quadrature.
//
// It keeps its own chains: samples of the last model, carried to the next
// one by the forward bridge and Sweeps Gibbs sweeps. The zero value of
// every field is a usable default; call Start once, then Next for every
// new model.
type LogZTracker struct {
	// Chains is the number of annealing runs per direction (default 100).
	Chains int
	// Steps is the number of intermediate models of each bridge
	// (default 50).
	Steps int
	// Sweeps is the number of Gibbs sweeps that turn the forward bridge's
	// end states into samples of the new model (default 10).
	Sweeps int
	// BurnIn is the number of Gibbs sweeps that produce the first samples
	// in Start (default 1000).
	BurnIn int
	// MaxStdErr is the standard error of one step above which the step is
	// redone with twice as many annealing steps, up to MaxSteps (defaults
	// 0.05 nats and 16·Steps): models far apart (early training, sparse
	// checkpoints) get a finer bridge, whose error bar then shows it.
	MaxStdErr float64
	MaxSteps  int
	// Seed seeds the chains and bridges.
	Seed uint64

	prev    *rbm.RBM
	samples *mat.Dense
	logZ    float64
	varLogZ float64
	steps   int
	sweeps  int64
}

// Start sets the first model (copied) and its log Z with standard error
// stdErr (exact: 0; from rbm's PopulationAnnealing or AIS otherwise), and
// draws the first samples by BurnIn Gibbs sweeps of Chains chains.
func (t *LogZTracker) Start(ctx context.Context, m *rbm.RBM, logZ, stdErr float64) error {
	ctx = rbm.ContextOrDefault(ctx)
	t.defaults()
	if t.Chains < 2 || t.Steps < 1 || t.Sweeps < 0 || t.BurnIn < 0 {
		return fmt.Errorf("train: LogZTracker: Chains = %d (want ≥ 2), Steps = %d (≥ 1), Sweeps = %d, BurnIn = %d (≥ 0)", t.Chains, t.Steps, t.Sweeps, t.BurnIn)
	}
	if math.IsNaN(logZ) || math.IsInf(logZ, 0) || !(stdErr >= 0) {
		return fmt.Errorf("train: LogZTracker.Start: log Z = %v ± %v, want finite values", logZ, stdErr)
	}
	c, err := rbm.NewChains(m, t.Chains, t.Seed^0x10c2)
	if err != nil {
		return fmt.Errorf("train: LogZTracker.Start: %w", err)
	}
	if err := c.Run(ctx, t.BurnIn, nil); err != nil {
		return fmt.Errorf("train: LogZTracker.Start: burn-in: %w", err)
	}
	t.prev, t.samples = m.Clone(), mat.DenseCopyOf(c.V)
	t.logZ, t.varLogZ, t.steps = logZ, stdErr*stdErr, 0
	t.sweeps = int64(t.BurnIn) * int64(t.Chains)
	return nil
}

func (t *LogZTracker) defaults() {
	if t.Chains == 0 {
		t.Chains = 100
	}
	if t.Steps == 0 {
		t.Steps = 50
	}
	if t.Sweeps == 0 {
		t.Sweeps = 10
	}
	if t.BurnIn == 0 {
		t.BurnIn = 1000
	}
	if t.MaxStdErr == 0 {
		t.MaxStdErr = 0.05
	}
	if t.MaxSteps == 0 {
		t.MaxSteps = 16 * t.Steps
	}
}

// Next moves the tracker to model m (copied), which must have the shape of
// the previous one, and returns the estimate of its log Z and standard
// error.
func (t *LogZTracker) Next(ctx context.Context, m *rbm.RBM) (logZ, stdErr float64, err error) {
	ctx = rbm.ContextOrDefault(ctx)
	if t.prev == nil {
		return 0, 0, fmt.Errorf("train: LogZTracker.Next before Start")
	}
	if t.MaxStdErr <= 0 || t.MaxSteps < t.Steps {
		return 0, 0, fmt.Errorf("train: LogZTracker: MaxStdErr = %v (want > 0), MaxSteps = %d (want ≥ Steps = %d)", t.MaxStdErr, t.MaxSteps, t.Steps)
	}
	var d, se float64
	var samples *mat.Dense
	for steps := t.Steps; ; steps *= 2 {
		var err error
		if d, se, samples, err = t.step(ctx, m, steps); err != nil {
			return 0, 0, fmt.Errorf("train: LogZTracker step %d: %w", t.steps+1, err)
		}
		if se <= t.MaxStdErr || 2*steps > t.MaxSteps {
			break
		}
	}
	t.logZ += d
	t.varLogZ += se * se
	t.prev, t.samples = m.Clone(), samples
	t.steps++
	return t.LogZ()
}

// step estimates log(Z_m/Z_prev) with bridges of the given number of
// steps, returning it, its standard error and the samples of m.
func (t *LogZTracker) step(ctx context.Context, m *rbm.RBM, steps int) (d, se float64, samples *mat.Dense, err error) {
	br := rbm.Bridge{Steps: steps, Seed: t.Seed + uint64(t.steps+1)*0x9e3779b97f4a7c15 + uint64(steps)}
	fwd, err := br.Run(ctx, t.prev, m, t.samples, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	c, err := rbm.NewChains(m, t.Chains, br.Seed^0x5a3)
	if err != nil {
		return 0, 0, nil, err
	}
	if err := c.SetStates(fwd.EndForward, nil); err != nil {
		return 0, 0, nil, err
	}
	if err := c.Run(ctx, t.Sweeps, nil); err != nil {
		return 0, 0, nil, err
	}
	samples = mat.DenseCopyOf(c.V)
	back, err := rbm.Bridge{Steps: steps, Seed: br.Seed ^ 0xbac}.Run(ctx, m, t.prev, samples, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	t.sweeps += int64(t.Chains) * int64(2*steps+t.Sweeps)
	d, se = rbm.BennettAcceptanceRatio(fwd.Forward, back.Forward)
	if math.IsNaN(d) || math.IsInf(d, 0) || math.IsNaN(se) {
		return 0, 0, nil, fmt.Errorf("log-ratio %v ± %v (the models are too far apart: raise Steps)", d, se)
	}
	return d, se, samples, nil
}

// LogZ returns the current estimate and its standard error.
func (t *LogZTracker) LogZ() (logZ, stdErr float64, err error) {
	if t.prev == nil {
		return 0, 0, fmt.Errorf("train: LogZTracker.LogZ before Start")
	}
	return t.logZ, math.Sqrt(t.varLogZ), nil
}

// ChainSweeps returns the Gibbs sweeps of one chain spent so far (the cost
// to compare with AIS from scratch: Runs·Betas per estimate).
func (t *LogZTracker) ChainSweeps() int64 { return t.sweeps }

// startLogZ returns log Z of m and its standard error for the start of a
// tracking run: exact when a layer is small enough to enumerate, else from
// rbm's PopulationAnnealing with a base fitted to the training data.
func startLogZ(ctx context.Context, m *rbm.RBM, train *mat.Dense, seed uint64) (float64, float64, error) {
	if configurations(m.Visible) > 0 || configurations(m.Hidden) > 0 {
		z, err := m.ExactLogZ(ctx)
		return z, 0, err
	}
	base, err := rbm.BaseFromData(m.Visible, train, 1e-3)
	if err != nil {
		return 0, 0, err
	}
	res, err := rbm.PopulationAnnealing{Base: base, Seed: seed}.Run(ctx, m, nil)
	if err != nil {
		return 0, 0, err
	}
	return res.LogZ, res.StdErr, nil
}
