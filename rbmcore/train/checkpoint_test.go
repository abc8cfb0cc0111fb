package train

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// smallCheckpoint trains a small PCD run with Adam for two epochs and
// returns its checkpoint file, the trainer (with Epochs raised so that
// Resume trains on) and a fresh model of the same architecture.
func smallCheckpoint(tb testing.TB, set *data.Set) (string, setup, func() *rbm.RBM) {
	mk := func() *rbm.RBM { return rbm.New(rbm.Binary(9), rbm.Binary(2), rbm.Seed(5), rbm.WeightScale(0.2)) }
	path := filepath.Join(tb.TempDir(), "run.ckpt")
	tr := setup{method: PCD{Chains: 3}, opt: Adam{}, Options: Options{Batch: 6, Epochs: 2, LR: 0.02, Seed: 3, Monitor: Monitor{ReconEvery: -1}, Checkpoint: path}}
	if _, err := tr.fit(context.Background(), mk(), set); err != nil {
		tb.Fatal(err)
	}
	tr.Checkpoint, tr.Epochs = "", 3
	return path, tr, mk
}

// TestCheckpointBitFlips: every single-bit flip of a checkpoint is refused
// (12 of 25 flips used to be accepted with a changed parameter): all of
// them by the decoder Resume starts with, and a random sample through
// Resume itself, which must name the file and leave the model as it was.
func TestCheckpointBitFlips(t *testing.T) {
	set := basSet(t)
	path, tr, mk := smallCheckpoint(t, set)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.resume(context.Background(), path, mk(), set); err != nil {
		t.Fatalf("the intact checkpoint: %v", err)
	}
	flip := func(bit int) []byte {
		bad := bytes.Clone(raw)
		bad[bit/8] ^= 1 << (bit % 8)
		return bad
	}
	for bit := 0; bit < 8*len(raw); bit++ {
		if _, err := decodeCheckpoint(flip(bit)); err == nil {
			t.Fatalf("flipping bit %d of %d went unnoticed", bit, 8*len(raw))
		}
	}
	for n := 0; n < len(raw); n++ {
		if _, err := decodeCheckpoint(raw[:n]); err == nil {
			t.Fatalf("checkpoint truncated to %d bytes accepted", n)
		}
	}
	flipped := filepath.Join(t.TempDir(), "flipped.ckpt")
	m := mk()
	before := paramsOf(m)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		bit := rng.IntN(8 * len(raw))
		if err := os.WriteFile(flipped, flip(bit), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := tr.resume(context.Background(), flipped, m, set)
		if err == nil || !strings.Contains(err.Error(), flipped) {
			t.Fatalf("Resume with bit %d flipped: error %v, want one naming the file", bit, err)
		}
		if !sameParams(paramsOf(m), before) {
			t.Fatalf("bit %d: the refused checkpoint changed the model", bit)
		}
	}
	t.Logf("%d single-bit flips and %d truncations of a %d-byte checkpoint refused", 8*len(raw), len(raw), len(raw))
}

// TestCheckpointWriteIsAtomic: the checkpoint replaces the old one whole,
// leaves no temporary file, and removes those a killed run left behind.
func TestCheckpointWriteIsAtomic(t *testing.T) {
	set := basSet(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ckpt")
	crashed := filepath.Join(dir, ".run.ckpt.tmp1234567")
	if err := os.WriteFile(crashed, []byte("HCKP half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(crashed, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	tr := setup{method: CD{}, Options: Options{Batch: 8, Epochs: 2, Checkpoint: path, Monitor: Monitor{ReconEvery: -1}}}
	if _, err := tr.fit(context.Background(), rbm.New(rbm.Binary(9), rbm.Binary(2), rbm.Seed(1)), set); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "run.ckpt" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only run.ckpt", names)
	}
	raw, _ := os.ReadFile(path)
	if _, err := decodeCheckpoint(raw); err != nil {
		t.Error(err)
	}
}

// TestOldCheckpointFormat: a checkpoint of the earlier unchecksummed format
// gets a clear error, not "corrupt".
func TestOldCheckpointFormat(t *testing.T) {
	old := append([]byte("\x1f\xff\x81\x03\x01\x01\x0acheckpoint\x01\xff\x82\x00\x01\x10\x01\x06Format\x01\x0c\x00\x01\x16"),
		oldCheckpointFormat...)
	_, err := decodeCheckpoint(old)
	if err == nil || !strings.Contains(err.Error(), oldCheckpointFormat) || !strings.Contains(err.Error(), "restart") {
		t.Errorf("old format: %v", err)
	}
	_, err = decodeCheckpoint([]byte("something else entirely"))
	if err == nil || !strings.Contains(err.Error(), "not a checkpoint") {
		t.Errorf("other file: %v", err)
	}
}

// TestInvalidOptionsLeaveModel: an invalid setting is an error naming the
// field, before the model is touched (Pseudocount -1 used to leave ±Inf
// fields behind an error saying the last good update was kept). Settings
// only the model can refute (Exact on a continuous layer) also leave it
// unchanged.
func TestInvalidOptionsLeaveModel(t *testing.T) {
	set := basSet(t)
	for _, c := range []struct {
		tr   setup
		want string
	}{
		{setup{Options: Options{Init: InitCentred{Pseudocount: -1}}}, "Pseudocount = -1"},
		{setup{Options: Options{Init: InitGaussian{Pseudocount: math.NaN()}}}, "Pseudocount = NaN"},
		{setup{Options: Options{Init: InitGaussian{Pseudocount: math.Inf(1)}}}, "Pseudocount = +Inf"},
		{setup{opt: Momentum{Mu: 1.5}, Options: Options{Init: InitCentred{}}}, "Momentum.Mu = 1.5"},
		{setup{opt: Adam{Beta2: 2}, Options: Options{Init: InitCentred{}}}, "Beta2: 2"},
		{setup{method: PCD{K: -1}, Options: Options{Init: InitCentred{}}}, "PCD.K = -1"},
		{setup{Options: Options{Init: InitCentred{}, EarlyStop: EarlyStop{Metric: 7}}}, "Metric = 7"},
		{setup{Options: Options{Regularisers: []Regulariser{L2{Lambda: math.NaN()}}, Init: InitCentred{}}}, "L2.Lambda = NaN"},
		{setup{Options: Options{Regularisers: []Regulariser{L1Squared{Lambda: -1}}, Init: InitCentred{}}}, "L1Squared.Lambda = -1"},
		{setup{Options: Options{CheckpointEvery: -2, Init: InitCentred{}}}, "CheckpointEvery = -2"},
		{setup{method: PT{Betas: []float64{0.5, 0.9}}, Options: Options{Init: InitCentred{}}}, "Betas"},
		{setup{method: Exact{}, Options: Options{Init: InitGaussian{}}}, "Exact"},
	} {
		m := rbm.New(rbm.Binary(9), rbm.ReLU(3), rbm.Seed(2))
		if c.tr.method == (Exact{}) {
			m = rbm.New(rbm.Gaussian(9), rbm.Binary(3), rbm.Seed(2))
		}
		before := paramsOf(m)
		_, err := c.tr.fit(context.Background(), m, set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to mention %q", c.tr, err, c.want)
		}
		if !sameParams(paramsOf(m), before) {
			t.Errorf("%+v: the refused run changed the model", c.tr)
		}
	}
}

// fuzzCheckpointSeeds are checkpoints of the four methods.
func fuzzCheckpointSeeds(f *testing.F, set *data.Set) [][]byte {
	var seeds [][]byte
	for _, method := range []Method{CD{}, PCD{Chains: 2}, PT{Chains: 2}, Exact{}} {
		path := filepath.Join(f.TempDir(), method.String()+".ckpt")
		tr := setup{method: method, opt: Momentum{}, Options: Options{Batch: 6, Epochs: 1, Centred: method == CD{}, Checkpoint: path, Monitor: Monitor{ReconEvery: -1}, EarlyStop: EarlyStop{Patience: 3, RestoreBest: true}}}
		if _, err := tr.fit(context.Background(), rbm.New(rbm.Binary(9), rbm.Binary(2), rbm.Seed(1)), set); err != nil {
			f.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, raw)
	}
	return seeds
}

// FuzzCheckpoint: decoding never panics; each input is also tried with a
// valid checksum in place of its last four bytes, so that the fuzzer
// reaches the decoder and the consistency checks behind it; whatever
// decodes is restored into a fresh PCD run, which either works or leaves
// the model unchanged.
func FuzzCheckpoint(f *testing.F) {
	set, err := data.BarsAndStripes(3)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range fuzzCheckpointSeeds(f, set) {
		f.Add(s)
	}
	f.Add([]byte("HCKP\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		inputs := [][]byte{raw}
		if len(raw) >= 4 {
			body := raw[:len(raw)-4]
			inputs = append(inputs, binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.ChecksumIEEE(body)))
		}
		for _, in := range inputs {
			c, err := decodeCheckpoint(in)
			if err != nil {
				continue
			}
			m := rbm.New(rbm.Binary(9), rbm.Binary(2), rbm.Seed(1))
			before := paramsOf(m)
			tr := setup{method: PCD{Chains: 2}, opt: Momentum{}, Options: Options{Batch: 6, EarlyStop: EarlyStop{Patience: 3, RestoreBest: true}}}
			r, err := newRun(context.Background(), m, set, tr.method, tr.opt, tr.Options)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.restore(r); err != nil && !sameParams(paramsOf(m), before) {
				t.Fatalf("a refused checkpoint (%v) changed the model", err)
			}
		}
	})
}
