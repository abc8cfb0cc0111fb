package train

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Checkpoint files: the magic "HCKP", a little-endian uint32 version, the
// gob encoding of a checkpoint, and a CRC-32 (IEEE) of everything before
// it, so that any single-bit (indeed any burst of up to 32 bits) corruption
// is detected before the checkpoint is used.
const (
	checkpointMagic   = "HCKP"
	checkpointVersion = 3
	// oldCheckpointFormat marks the checkpoints of version 2 (a bare gob
	// stream without checksum), which are refused with a clear error.
	oldCheckpointFormat = "harmonium.checkpoint/2"
)

// checkpoint is everything needed to continue a run.
type checkpoint struct {
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

// saveCheckpoint writes the run's state to path atomically (a synced
// temporary file renamed over path, the directory synced).
func (r *run) saveCheckpoint(path string) error {
	streams, err := r.chains.streamStates()
	if err != nil {
		return fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	steps, om, ov := r.opt.saved()
	c := checkpoint{Model: r.m.String(), Names: r.names, Params: r.params,
		Epoch: r.epoch, Updates: r.updates, Elapsed: r.elapsed + timeSince(r), OptT: *steps, OptM: om, OptV: ov,
		Streams: streams, Mu: r.mu, Lambda: r.lam, History: *r.hist, Best: r.best.value, BestAt: r.best.at, BestParams: r.best.params}
	c.Chains, c.ChainsHidden = r.chains.chainStates(), r.chains.hiddenStates()
	if err := atomicfile.Write(path, c.write); err != nil {
		return fmt.Errorf("train: writing checkpoint %s: %w", path, err)
	}
	return nil
}

// write writes c in the checkpoint file format.
func (c *checkpoint) write(w io.Writer) error {
	sum := crc32.NewIEEE()
	mw := io.MultiWriter(w, sum)
	head := binary.LittleEndian.AppendUint32([]byte(checkpointMagic), checkpointVersion)
	if _, err := mw.Write(head); err != nil {
		return err
	}
	if err := gob.NewEncoder(mw).Encode(c); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32()))
	return err
}

// decodeCheckpoint checks and decodes the content raw of a checkpoint
// file; errors say what is wrong (the caller names the file).
func decodeCheckpoint(raw []byte) (*checkpoint, error) {
	if len(raw) < len(checkpointMagic)+8 || string(raw[:len(checkpointMagic)]) != checkpointMagic {
		if bytes.Contains(raw[:min(len(raw), 256)], []byte(oldCheckpointFormat)) {
			return nil, fmt.Errorf("written in the format %s of an earlier Harmonium, which had no checksum; this version reads only version %d: restart the run (e.g. from the model saved with rbm Save)",
				oldCheckpointFormat, checkpointVersion)
		}
		return nil, fmt.Errorf("not a checkpoint (no %q header)", checkpointMagic)
	}
	body, stored := raw[:len(raw)-4], binary.LittleEndian.Uint32(raw[len(raw)-4:])
	if got := crc32.ChecksumIEEE(body); got != stored {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): the file is corrupt or truncated", stored, got)
	}
	if v := binary.LittleEndian.Uint32(body[4:8]); v != checkpointVersion {
		return nil, fmt.Errorf("byte offset 4: version %d, this version of Harmonium reads version %d", v, checkpointVersion)
	}
	rd := bytes.NewReader(body[8:])
	var c checkpoint
	if err := gob.NewDecoder(rd).Decode(&c); err != nil {
		return nil, fmt.Errorf("corrupt content: %w", err)
	}
	if rd.Len() != 0 {
		return nil, fmt.Errorf("%d unexpected bytes after the content at byte offset %d", rd.Len(), len(body)-rd.Len())
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// check verifies that c is consistent in itself (Resume checks it against
// the model and the trainer): counts are non-negative, every number is
// finite, and the parallel slices line up.
func (c *checkpoint) check() error {
	switch {
	case c.Epoch < 0 || c.Updates < 0 || c.OptT < 0:
		return fmt.Errorf("negative count (Epoch %d, Updates %d, optimiser step %d)", c.Epoch, c.Updates, c.OptT)
	case !(c.Elapsed >= 0) || math.IsInf(c.Elapsed, 0):
		return fmt.Errorf("elapsed time = %v seconds", c.Elapsed)
	case len(c.Names) != len(c.Params):
		return fmt.Errorf("%d parameter names for %d parameter slices", len(c.Names), len(c.Params))
	case c.BestAt < -1 || c.BestAt >= len(c.History.Records):
		return fmt.Errorf("BestAt = %d, the history has %d records", c.BestAt, len(c.History.Records))
	case c.BestParams != nil && shapeError(c.Params, c.BestParams) != nil:
		return fmt.Errorf("best parameters: %w", shapeError(c.Params, c.BestParams))
	}
	for name, s := range map[string][][]float64{"Params": c.Params, "BestParams": c.BestParams, "OptM": c.OptM, "OptV": c.OptV,
		"Chains": c.Chains, "ChainsHidden": c.ChainsHidden, "Mu": {c.Mu}, "Lambda": {c.Lambda}} {
		for k, xs := range s {
			for i, x := range xs {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("%s[%d][%d] = %v", name, k, i, x)
				}
			}
		}
	}
	return nil
}

// Resume continues the run saved in the checkpoint file o.Checkpoint
// (written by a Fit with that option set): it loads the parameters into
// m, which must have the architecture of the checkpointed model, restores
// the optimiser state, persistent chains, centring offsets, random state
// and history, and trains up to o.Epochs (which may be larger than in the
// original run). The method, optimiser and other options should otherwise
// be those of the original run; o.Init is ignored. CD and PCD save their
// chains' random streams, so with the same BLAS backend a resumed run
// continues bitwise like an uninterrupted one; parallel tempering's
// replicas restart their streams from the seed (statistically, not
// bitwise, identical).
//
// The file is verified (checksum, version, consistency, match with m and
// the settings) before training starts; when it is refused m is left
// unchanged.
func Resume(ctx context.Context, m *rbm.RBM, set *data.Set, method Method, opt Optimiser, o Options) (*History, error) {
	path := o.Checkpoint
	if path == "" {
		return nil, errors.New("train: Resume: Options.Checkpoint is empty (the file to continue from)")
	}
	r, err := newRun(ctx, m, set, method, opt, o)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	c, err := decodeCheckpoint(raw)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	if c.Model != m.String() {
		return nil, fmt.Errorf("train: checkpoint %s holds a %s, the model given is a %s", path, c.Model, m.String())
	}
	if err := c.restore(r); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	return r.loop(ctx)
}

// restore puts the state of c into the new run r. When it fails, the model
// is put back as it was.
func (c *checkpoint) restore(r *run) (err error) {
	params, names := r.params, r.names
	if len(params) != len(c.Params) {
		return fmt.Errorf("%d parameter slices, the model has %d", len(c.Params), len(params))
	}
	for p := range params {
		if names[p] != c.Names[p] || len(params[p]) != len(c.Params[p]) {
			return fmt.Errorf("parameter %d is %s[%d], the model has %s[%d]", p, c.Names[p], len(c.Params[p]), names[p], len(params[p]))
		}
	}
	old := make([][]float64, len(params))
	for p := range params {
		old[p] = slices.Clone(params[p])
		copy(params[p], c.Params[p])
	}
	defer func() {
		if err != nil {
			for p := range params {
				copy(params[p], old[p])
			}
		}
	}()
	if err := r.m.Validate(); err != nil {
		return err
	}
	r.snapshot()
	if err := r.prepare(); err != nil {
		return err
	}
	if err := r.chains.setStreamStates(c.Streams); err != nil {
		return fmt.Errorf("random state: %w", err)
	}
	steps, om, ov := r.opt.saved()
	for _, s := range []struct {
		dst, src [][]float64
		what     string
	}{
		{om, c.OptM, fmt.Sprintf("optimiser state (saved by another optimiser than %v?)", r.optim)},
		{ov, c.OptV, fmt.Sprintf("optimiser state (saved by another optimiser than %v?)", r.optim)},
		{r.chains.chainStates(), c.Chains, fmt.Sprintf("chains (saved by another method or number of chains than %#v?)", r.method)},
		{r.chains.hiddenStates(), c.ChainsHidden, fmt.Sprintf("hidden chain states (saved by another method or number of chains than %#v?)", r.method)},
	} {
		if err := shapeError(s.dst, s.src); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		for k := range s.dst {
			copy(s.dst[k], s.src[k])
		}
	}
	*steps = c.OptT
	if r.o.Centred && len(c.Mu) == len(r.mu) && len(c.Lambda) == len(r.lam) {
		copy(r.mu, c.Mu)
		copy(r.lam, c.Lambda)
	}
	r.epoch, r.updates, r.elapsed = c.Epoch, c.Updates, c.Elapsed
	h := c.History
	r.hist = &h
	r.best = bestSoFar{value: c.Best, at: c.BestAt, params: c.BestParams}
	return nil
}

// shapeError reports how src differs in shape from dst (both empty is
// fine), nil when they have the same shape.
func shapeError(dst, src [][]float64) error {
	if len(dst) != len(src) {
		return fmt.Errorf("%d slices, want %d", len(src), len(dst))
	}
	for k := range dst {
		if len(dst[k]) != len(src[k]) {
			return fmt.Errorf("slice %d has %d entries, want %d", k, len(src[k]), len(dst[k]))
		}
	}
	return nil
}
