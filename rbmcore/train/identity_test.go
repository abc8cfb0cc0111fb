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

var updateIdentity = flag.Bool("update-identity", false, "rewrite testdata/identity_<backend>[_<kernel>].golden")

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
// hashes depend on the BLAS backend and, for OpenBLAS, on the CPU kernels it
// runs (rbm.BLASKernel), so each has its file; the Haswell and Zen kernels
// give the same bits.
func TestIdentity(t *testing.T) {
	set, err := data.BarsAndStripes(3)
	if err != nil {
		t.Fatal(err)
	}
	name := "identity_" + rbm.BLASBackend()
	if k := rbm.BLASKernel(); k != "" {
		name += "_" + strings.ToLower(k)
	}
	golden := filepath.Join("testdata", name+".golden")
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
		t.Skipf("no recorded hashes for the %s backend on these CPU kernels (%v); record them with -update-identity once the training code is known to be right", rbm.BLASBackend(), err)
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
	base := Options{Batch: 4, Epochs: 6, LR: 0.05, Seed: 11, Monitor: mon}
	fit := func(method Method, opt Optimiser, o Options) func(m *rbm.RBM, set *data.Set) error {
		return func(m *rbm.RBM, set *data.Set) error {
			_, err := Fit(context.Background(), m, set, method, opt, o)
			return err
		}
	}
	methods := []struct {
		name   string
		method Method
	}{
		{"cd", CD{K: 2}}, {"pcd", PCD{K: 2, Chains: 8}}, {"pt", PT{K: 2, Chains: 8}},
		{"ptt", PTT{K: 2, Chains: 8, Models: 3}}, {"exact", Exact{}},
	}
	optimisers := []struct {
		name string
		opt  Optimiser
	}{{"sgd", SGD{}}, {"momentum", Momentum{}}, {"adam", Adam{}}}
	for _, m := range methods {
		for _, o := range optimisers {
			cases = append(cases, identityCase{name: m.name + "-" + o.name, fit: fit(m.method, o.opt, base)})
		}
	}
	with := func(change func(o *Options)) Options {
		o := base
		change(&o)
		return o
	}
	pcd := PCD{Chains: 8}
	cases = append(cases,
		identityCase{name: "pcd-penalties", fit: fit(pcd, Momentum{Mu: 0.5}, with(func(o *Options) {
			o.Regularisers = []Regulariser{L2{Lambda: 1e-3}, L1{Lambda: 1e-3}, FieldsL2{Lambda: 1e-2}}
		}))},
		identityCase{name: "pcd-l1squared", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Regularisers = []Regulariser{L1Squared{Lambda: 0.025}} }))},
		identityCase{name: "pcd-centred", fit: fit(pcd, Adam{Beta1: 0.8, Beta2: 0.99, Eps: 1e-6}, with(func(o *Options) { o.Centred = true }))},
		identityCase{name: "pcd-float32", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Float32 = true }))},
		identityCase{name: "pcd-init-logit", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Init = InitCentred{Pseudocount: 1e-4} }))},
		identityCase{name: "pcd-init-gauss", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Init = InitGaussian{} }))},
		identityCase{name: "pcd-schedule", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Schedule, o.Epochs = GrowingK, 12 }))},
		identityCase{name: "pcd-geometric", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Schedule = GeometricDecay(6, 0.5, 0.1) }))},
		identityCase{name: "pcd-freeze", fit: fit(pcd, SGD{}, with(func(o *Options) { o.Freeze = []string{"visible.theta"} }))},
		identityCase{name: "pt-betas", fit: fit(PT{Chains: 8, Betas: []float64{0.5, 1}}, SGD{}, base)},
		identityCase{name: "cd-k3", fit: fit(CD{K: 3}, SGD{}, base)},
		identityCase{name: "pcd-relu-mingam", hidden: rbm.ReLU(5), fit: fit(pcd, SGD{}, with(func(o *Options) { o.MinGamma = 0.5 }))},
		// Early stopping on the reconstruction error, best parameters restored.
		identityCase{name: "pcd-earlystop", fit: fit(pcd, SGD{}, Options{Batch: 4, Epochs: 20, LR: 0.3, Seed: 11,
			Monitor: Monitor{PLEvery: -1}, EarlyStop: EarlyStop{Patience: 2, Metric: MetricRecon, RestoreBest: true}})},
		// A run continued from its checkpoint.
		identityCase{name: "pcd-resume", fit: func(m *rbm.RBM, set *data.Set) error {
			o := with(func(o *Options) {
				o.Epochs = 3
				o.Checkpoint = filepath.Join(os.TempDir(), fmt.Sprintf("identity-%d.ckpt", os.Getpid()))
			})
			defer os.Remove(o.Checkpoint)
			if _, err := Fit(context.Background(), m, set, pcd, Adam{}, o); err != nil {
				return err
			}
			o.Epochs = 6
			_, err := Resume(context.Background(), m, set, pcd, Adam{}, o)
			return err
		}},
	)
	return cases
}
