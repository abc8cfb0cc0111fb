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
}

// Next moves the tracker to model m (copied), which must have the shape of
// the previous one, and returns the estimate of its log Z and standard
// error.
func (t *LogZTracker) Next(ctx context.Context, m *rbm.RBM) (logZ, stdErr float64, err error) {
	ctx = rbm.ContextOrDefault(ctx)
	if t.prev == nil {
		return 0, 0, fmt.Errorf("train: LogZTracker.Next before Start")
	}
	br := rbm.Bridge{Steps: t.Steps, Seed: t.Seed + uint64(t.steps+1)*0x9e3779b97f4a7c15}
	fwd, err := br.Run(ctx, t.prev, m, t.samples, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("train: LogZTracker step %d: %w", t.steps+1, err)
	}
	c, err := rbm.NewChains(m, t.Chains, br.Seed^0x5a3)
	if err != nil {
		return 0, 0, fmt.Errorf("train: LogZTracker step %d: %w", t.steps+1, err)
	}
	if err := c.SetStates(fwd.EndForward, nil); err != nil {
		return 0, 0, fmt.Errorf("train: LogZTracker step %d: %w", t.steps+1, err)
	}
	if err := c.Run(ctx, t.Sweeps, nil); err != nil {
		return 0, 0, fmt.Errorf("train: LogZTracker step %d: %w", t.steps+1, err)
	}
	samples := mat.DenseCopyOf(c.V)
	back, err := rbm.Bridge{Steps: t.Steps, Seed: br.Seed ^ 0xbac}.Run(ctx, m, t.prev, samples, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("train: LogZTracker step %d: %w", t.steps+1, err)
	}
	d, se := rbm.BennettAcceptanceRatio(fwd.Forward, back.Forward)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return 0, 0, fmt.Errorf("train: LogZTracker step %d: log-ratio %v (the models are too far apart: raise Steps)", t.steps+1, d)
	}
	t.logZ += d
	t.varLogZ += se * se
	t.prev, t.samples = m.Clone(), samples
	t.steps++
	t.sweeps += int64(t.Chains) * int64(2*t.Steps+t.Sweeps)
	return t.LogZ()
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
