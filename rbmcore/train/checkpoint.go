package train

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// checkpointFormat identifies checkpoint files (gob-encoded checkpoint).
const checkpointFormat = "harmonium.checkpoint/2"

// checkpoint is everything needed to continue a run.
type checkpoint struct {
	Format         string
	Model          string // m.String(), to check the architecture on resume
	Names          []string
	Params         [][]float64
	Epoch, Updates int
	Elapsed        float64
	OptT           int
	OptM, OptV     [][]float64
	Streams        [][]byte    // states of the chains' random streams (CD, PCD)
	Chains         [][]float64 // visible states of the persistent chains (per replica)
	ChainsHidden   [][]float64 // hidden states of the PCD chains
	Mu, Lambda     []float64
	History        History
	Best           float64
	BestAt         int
	BestParams     [][]float64
}

// saveCheckpoint writes the run's state atomically to path.
func (r *run) saveCheckpoint(path string) error {
	streams, err := r.smp.streamStates()
	if err != nil {
		return fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	c := checkpoint{Format: checkpointFormat, Model: r.m.String(), Names: r.names, Params: r.params,
		Epoch: r.epoch, Updates: r.updates, Elapsed: r.elapsed + timeSince(r), OptT: r.opt.t, OptM: r.opt.m, OptV: r.opt.v,
		Streams: streams, Mu: r.mu, Lambda: r.lam, History: *r.hist, Best: r.best, BestAt: r.bestAt, BestParams: r.bestPar}
	c.Chains, c.ChainsHidden = r.smp.chainStates(), r.smp.hiddenStates()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&c); err != nil {
		return fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("train: writing checkpoint %s: %v %v", path, werr, cerr)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	return nil
}

// Resume continues the run saved in the checkpoint file path (written by a
// Trainer with Checkpoint set): it loads the parameters into m, which must
// have the architecture of the checkpointed model, restores the optimiser
// state, persistent chains, centring offsets, random state and history, and
// trains up to t.Epochs (which may be larger than in the original run).
// t should otherwise be the configuration of the original run; t.Init is
// ignored. CD and PCD save their chains' random streams, so with the same
// BLAS backend and core count a resumed run continues bitwise like an
// uninterrupted one; parallel tempering's replicas restart their streams
// from the seed (statistically, not bitwise, identical).
func (t *Trainer) Resume(ctx context.Context, path string, m *rbm.RBM, set *data.Set) (*History, error) {
	ctx = rbm.ContextOrDefault(ctx)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	var c checkpoint
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&c); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s is corrupt: %w", path, err)
	}
	if c.Format != checkpointFormat {
		return nil, fmt.Errorf("train: %s is not a checkpoint (format %q, want %q)", path, c.Format, checkpointFormat)
	}
	if c.Model != m.String() {
		return nil, fmt.Errorf("train: checkpoint %s holds a %s, the model given is a %s", path, c.Model, m.String())
	}
	r, err := t.newRun(m, set)
	if err != nil {
		return nil, err
	}
	params, names := r.params, r.names
	if len(params) != len(c.Params) {
		return nil, fmt.Errorf("train: checkpoint %s has %d parameter slices, the model %d", path, len(c.Params), len(params))
	}
	for p := range params {
		if names[p] != c.Names[p] || len(params[p]) != len(c.Params[p]) {
			return nil, fmt.Errorf("train: checkpoint %s: parameter %d is %s[%d], the model has %s[%d]", path, p, c.Names[p], len(c.Params[p]), names[p], len(params[p]))
		}
		copy(params[p], c.Params[p])
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	r.snapshot()
	if err := r.prepare(); err != nil {
		return nil, err
	}
	if err := r.smp.setStreamStates(c.Streams); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: random state: %w", path, err)
	}
	r.opt.t = c.OptT
	if err := copyShaped(r.opt.m, c.OptM); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: optimiser state (Optimizer %q?): %w", path, r.t.Optimizer, err)
	}
	if err := copyShaped(r.opt.v, c.OptV); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: optimiser state (Optimizer %q?): %w", path, r.t.Optimizer, err)
	}
	if err := copyShaped(r.smp.chainStates(), c.Chains); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: chains (Method %q, Chains %d?): %w", path, r.t.Method, r.t.Chains, err)
	}
	if err := copyShaped(r.smp.hiddenStates(), c.ChainsHidden); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: hidden chain states (Method %q, Chains %d?): %w", path, r.t.Method, r.t.Chains, err)
	}
	if r.t.Centred && len(c.Mu) == len(r.mu) && len(c.Lambda) == len(r.lam) {
		copy(r.mu, c.Mu)
		copy(r.lam, c.Lambda)
	}
	r.epoch, r.updates, r.elapsed = c.Epoch, c.Updates, c.Elapsed
	h := c.History
	r.hist = &h
	r.best, r.bestAt, r.bestPar = c.Best, c.BestAt, c.BestParams
	return r.loop(ctx)
}

// copyShaped copies src into dst when both have the same shape (both
// empty is fine).
func copyShaped(dst, src [][]float64) error {
	if len(dst) != len(src) {
		return fmt.Errorf("%d slices, want %d", len(src), len(dst))
	}
	for k := range dst {
		if len(dst[k]) != len(src[k]) {
			return fmt.Errorf("slice %d has %d entries, want %d", k, len(src[k]), len(dst[k]))
		}
		copy(dst[k], src[k])
	}
	return nil
}
