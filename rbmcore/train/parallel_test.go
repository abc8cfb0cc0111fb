package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// randomBinarySet returns rows×cols uniformly random 0/1 data (stream seed).
func randomBinarySet(rows, cols int, seed uint64) *data.Set {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	x := mat.NewDense(rows, cols, nil)
	for i, raw := 0, x.RawMatrix().Data; i < len(raw); i++ {
		raw[i] = float64(rng.IntN(2))
	}
	return &data.Set{X: x, Kind: data.KindBinary, Q: 1, Source: "random"}
}

// TestCoresDoNotChangeResults trains the same runs with GOMAXPROCS 1, 2
// and 3 (one range of rows with multi-threaded BLAS, or several ranges
// with single-threaded BLAS per worker) and requires bit-identical
// parameters and gradient norms: the random streams belong to fixed blocks
// of chains and the per-block reductions are combined in block order. The
// sizes are not multiples of the blocks (batch 30 leaves a last minibatch
// of 10; 37 chains) and the products are large enough for OpenBLAS to
// thread them.
//
// With OpenBLAS a matrix product's last bits depend on how its rows are
// split between calls and on its thread count, so there the runs stop
// after one update and must agree to rounding (1e-9 relative, 1e-5 with
// float32 products, whose rounding differs in the 7th digit): a random
// stream tied to a worker instead of a block of chains would change the
// update at order one.
func TestCoresDoNotChangeResults(t *testing.T) {
	exact := rbm.BLASBackend() != "openblas"
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	set := randomBinarySet(100, 70, 7)
	for _, tr := range []setup{
		{method: PCD{K: 2, Chains: 37}, opt: Adam{}, Options: Options{Batch: 30, Epochs: 2, LR: 0.05, Seed: 4, Regularisers: []Regulariser{L2{Lambda: 1e-3}}}},
		{method: CD{K: 1}, opt: Momentum{}, Options: Options{Batch: 30, Epochs: 2, LR: 0.05, Seed: 5}},
		{method: PCD{K: 1, Chains: 37}, Options: Options{Batch: 30, Epochs: 2, LR: 0.05, Float32: true, Seed: 6}},
	} {
		tr.Monitor = Monitor{PLEvery: -1, ReconEvery: -1}
		tol := 0.0
		if !exact {
			tr.Epochs, tr.Batch = 1, 100
			tol = map[bool]float64{false: 1e-9, true: 1e-5}[tr.Float32]
		}
		var want [][]float64
		var wantNorms []float64
		for _, procs := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(procs)
			m := rbm.New(rbm.Binary(70), rbm.Binary(50), rbm.Seed(3), rbm.WeightScale(0.1))
			var norms []float64
			tr.OnUpdate = func(u Update) { norms = append(norms, u.GradNorm) }
			if _, err := tr.fit(context.Background(), m, set); err != nil {
				t.Fatal(err)
			}
			if procs == 1 {
				want, wantNorms = paramsOf(m), norms
				continue
			}
			if d := maxRelDiff(paramsOf(m), want); d > tol {
				t.Errorf("%s (Float32 %v): parameters with GOMAXPROCS %d differ from those with 1 (relative %.3g)", tr.method, tr.Float32, procs, d)
			}
			for k := range norms {
				if math.Abs(norms[k]-wantNorms[k]) > tol*wantNorms[k] {
					t.Errorf("%s: gradient norm of update %d with GOMAXPROCS %d: %v, with 1: %v", tr.method, k+1, procs, norms[k], wantNorms[k])
					break
				}
			}
		}
	}
}

// maxRelDiff returns the largest |a−b|/(|b|+1e-3) over the parameters.
func maxRelDiff(a, b [][]float64) float64 {
	d := 0.0
	for p := range a {
		for k := range a[p] {
			d = math.Max(d, math.Abs(a[p][k]-b[p][k])/(math.Abs(b[p][k])+1e-3))
		}
	}
	return d
}

// TestForChunks: every item is covered once, by chunks whose bounds are
// multiples of the size, on one core or several; an error is returned.
func TestForChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct{ n, size int }{{784, 200}, {7, 8}, {16, 8}, {1, 1}} {
			var mu sync.Mutex
			seen := make([]int, c.n)
			if err := forChunks(c.n, c.size, func(c0, c1 int) error {
				mu.Lock()
				defer mu.Unlock()
				if c0%c.size != 0 || (c1 != c.n && c1-c0 != c.size) {
					t.Errorf("n=%d size=%d: chunk [%d, %d)", c.n, c.size, c0, c1)
				}
				for i := c0; i < c1; i++ {
					seen[i]++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("procs %d, n=%d size=%d: item %d covered %d times", procs, c.n, c.size, i, s)
				}
			}
		}
		boom := errors.New("boom")
		if err := forChunks(10, 2, func(c0, _ int) error {
			if c0 == 4 {
				return boom
			}
			return nil
		}); !errors.Is(err, boom) {
			t.Errorf("procs %d: error %v, want boom", procs, err)
		}
	}
}

// TestPCDChainsSampleTheModel runs the trainer's PCD chains (the (v, h)
// state, per-block streams, row-parallel sweeps) with a learning rate too
// small to change the model and compares the frequencies of the chains'
// visible states with the exact probabilities by enumeration: a wrong
// conditional, a stale input or a shared stream would bias them.
func TestPCDChainsSampleTheModel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	m := rbm.New(rbm.Binary(4), rbm.Binary(3), rbm.Seed(12), rbm.WeightScale(1))
	copy(m.Visible.Params()[0], []float64{0.5, -1, 0.2, 0})
	copy(m.Hidden.Params()[0], []float64{-0.5, 0.3, 1})
	states, err := allStates(m.Visible)
	if err != nil {
		t.Fatal(err)
	}
	f := m.FreeEnergy(states)
	p := make([]float64, len(f))
	tot := 0.0
	for i, x := range f {
		p[i] = math.Exp(-x)
		tot += p[i]
	}
	set := &data.Set{X: states, Kind: data.KindBinary, Q: 1, Source: "states"}
	tr := setup{method: PCD{Chains: 64}, Options: Options{Batch: 16, LR: 1e-300, Seed: 9, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
	r := preparedRun(t, tr, m, set)
	count := make([]float64, len(p))
	n := 0
	for epoch := 1; epoch <= 400; epoch++ {
		it, _ := set.Minibatches(16, data.BatchOptions{InOrder: true})
		it.Next()
		if _, err := r.update(context.Background(), it, epoch, 1, tr.LR); err != nil {
			t.Fatal(err)
		}
		if epoch <= 20 {
			continue // burn-in
		}
		v := r.chains.negative().v.f
		for c := 0; c < 64; c++ {
			s := 0
			for i := 3; i >= 0; i-- {
				s = 2*s + int(v[c*4+i])
			}
			count[s]++
			n++
		}
	}
	for s := range p {
		want := p[s] / tot
		got := count[s] / float64(n)
		// Consecutive sweeps are correlated: allow for an effective sample
		// size of n/4 (5 standard errors).
		if sd := math.Sqrt(want * (1 - want) / (float64(n) / 4)); math.Abs(got-want) > 5*sd {
			t.Errorf("state %d: chain frequency %.4f, exact probability %.4f (±%.4f)", s, got, want, sd)
		}
	}
}

// preparedRun returns the run of tr on m and set, ready for update or loop
// (without Fit's initialisation, so the model is trained as given).
func preparedRun(t *testing.T, tr setup, m *rbm.RBM, set *data.Set) *run {
	t.Helper()
	r, err := newRun(context.Background(), m, set, tr.method, tr.opt, tr.Options)
	if err != nil {
		t.Fatal(err)
	}
	r.snapshot()
	if err := r.prepare(); err != nil {
		t.Fatal(err)
	}
	return r
}
