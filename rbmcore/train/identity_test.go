package train

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

var updateIdentity = flag.Bool("update-identity", false, "rewrite testdata/identity_<backend>.golden")

// identityCase is one training run of TestIdentity.
type identityCase struct {
	name   string
	hidden rbm.Layer
	fit    func(m *rbm.RBM, set *data.Set) error
}

// paramHash returns the SHA-256 of the bits of every parameter of m.
func paramHash(m *rbm.RBM) string {
	h := sha256.New()
	var b [8]byte
	params, _ := modelParams(m)
	for _, ps := range params {
		for _, x := range ps {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestIdentity trains small models with fixed seeds for every method and
// optimiser (and the penalties, initialisations and options) and compares
// the hashes of the final parameters with the recorded ones: a change of
// the training code that changes any bit of a result fails here. The
// hashes depend on the BLAS backend, so each backend has its file.
func TestIdentity(t *testing.T) {
	set, err := data.BarsAndStripes(3)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "identity_"+rbm.BLASBackend()+".golden")
	got := map[string]string{}
	for _, c := range identityCases() {
		hidden := c.hidden
		if hidden == nil {
			hidden = rbm.Binary(6)
		}
		m := rbm.New(rbm.Binary(9), hidden, rbm.Seed(3), rbm.WeightScale(0.1))
		if err := c.fit(m, set); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got[c.name] = paramHash(m)
	}
	if *updateIdentity {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s\n", n, got[n])
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(golden)
	if err != nil {
		t.Skipf("no recorded hashes for the %s backend: %v", rbm.BLASBackend(), err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, hash, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("%s: malformed line %q", golden, sc.Text())
		}
		want[name] = hash
	}
	if len(want) != len(got) {
		t.Errorf("%s has %d cases, the test runs %d", golden, len(want), len(got))
	}
	for name, h := range got {
		if want[name] != h {
			t.Errorf("%s: parameter hash %s, recorded %s", name, h, want[name])
		}
	}
}

// identityCases lists the runs of TestIdentity.
func identityCases() []identityCase {
	var cases []identityCase
	mon := Monitor{PLEvery: -1, ReconEvery: -1}
	for _, method := range []string{CD, PCD, PT, PTT, Exact} {
		for _, opt := range []string{SGD, Momentum, Adam} {
			tr := Trainer{Method: method, Optimizer: opt, K: 2, Chains: 8, Batch: 4, Epochs: 6, LR: 0.05, Seed: 11, Monitor: mon}
			if method == PTT {
				tr.Trajectory = TrajectoryOptions{Models: 3}
			}
			cases = append(cases, identityCase{name: method + "-" + opt, fit: func(m *rbm.RBM, set *data.Set) error {
				_, err := tr.Fit(context.Background(), m, set)
				return err
			}})
		}
	}
	extra := map[string]Trainer{
		"pcd-penalties":   {L2: 1e-3, L1: 1e-3, L2Fields: 1e-2, Momentum: 0.5, Optimizer: Momentum},
		"pcd-l1squared":   {L1Squared: 0.025},
		"pcd-centred":     {Centred: true, Optimizer: Adam, Beta1: 0.8, Beta2: 0.99, Epsilon: 1e-6},
		"pcd-float32":     {Float32: true},
		"pcd-init-logit":  {Init: InitSeed001, Pseudocount: 1e-4},
		"pcd-init-gauss":  {Init: InitSeed000},
		"pcd-schedule":    {Schedule: Seed001, Epochs: 12},
		"pcd-geometric":   {Schedule: GeometricDecay(6, 0.5, 0.1)},
		"pcd-freeze":      {Freeze: []string{"visible.theta"}},
		"pt-betas":        {Method: PT, Betas: []float64{0.5, 1}},
		"cd-k3":           {Method: CD, K: 3},
		"pcd-relu-mingam": {MinGamma: 0.5},
	}
	for name, tr := range extra {
		if tr.Method == "" {
			tr.Method = PCD
		}
		if tr.Chains == 0 {
			tr.Chains = 8
		}
		if tr.Epochs == 0 {
			tr.Epochs = 6
		}
		tr.Batch, tr.LR, tr.Seed, tr.Monitor = 4, 0.05, 11, mon
		c := identityCase{name: name, fit: func(m *rbm.RBM, set *data.Set) error {
			_, err := tr.Fit(context.Background(), m, set)
			return err
		}}
		if strings.Contains(name, "relu") {
			c.hidden = rbm.ReLU(5)
		}
		cases = append(cases, c)
	}
	// Early stopping on the reconstruction error, best parameters restored.
	cases = append(cases, identityCase{name: "pcd-earlystop", fit: func(m *rbm.RBM, set *data.Set) error {
		tr := Trainer{Method: PCD, Chains: 8, Batch: 4, Epochs: 20, LR: 0.3, Seed: 11, Monitor: Monitor{PLEvery: -1},
			Patience: 2, StopMetric: "recon", RestoreBest: true}
		_, err := tr.Fit(context.Background(), m, set)
		return err
	}})
	// A run continued from its checkpoint.
	cases = append(cases, identityCase{name: "pcd-resume", fit: func(m *rbm.RBM, set *data.Set) error {
		ck := filepath.Join(os.TempDir(), fmt.Sprintf("identity-%d.ckpt", os.Getpid()))
		defer os.Remove(ck)
		tr := Trainer{Method: PCD, Optimizer: Adam, Chains: 8, Batch: 4, Epochs: 3, LR: 0.05, Seed: 11, Monitor: mon, Checkpoint: ck}
		if _, err := tr.Fit(context.Background(), m, set); err != nil {
			return err
		}
		tr.Epochs = 6
		_, err := tr.Resume(context.Background(), ck, m, set)
		return err
	}})
	return cases
}
