package train

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// updateBench is one training setting timed per update by BenchmarkUpdate.
type updateBench struct {
	name   string
	model  func() *rbm.RBM
	set    func() *data.Set
	method Method
	opt    Optimiser
	o      Options
}

// updateBenches are the settings of the notebooks whose training is
// dominated by the continuous hidden units' special functions:
//
//   - LatticeDReLU: notebooks/lattice-proteins.ipynb (Tubiana, Cocco &
//     Monasson 2019): Potts visible layer of 27 sites × 21 states, M = 100
//     dReLU hidden units, PCD with 1 sweep and 100 chains, minibatches of
//     100, RMSprop, λ₁² = 0.025, γ ≥ 0.2.
//   - MNISTReLU: notebooks/activation-functions.ipynb (Bulso & Roudi 2021):
//     784 binary pixels, M = 250 ReLU units with γ frozen at 1, CD-1 on
//     minibatches of 100, SGD, float32 products.
//
// The data are synthetic with the notebooks' shapes (sequences drawn from
// random site profiles; images from noisy random prototypes), so the
// benchmark needs no data files.
var updateBenches = []updateBench{
	{
		name:   "LatticeDReLU",
		model:  func() *rbm.RBM { return rbm.New(rbm.Potts(27, 21), rbm.DReLU(100), rbm.Seed(1)) },
		set:    func() *data.Set { return benchPottsSet(3000, 27, 21) },
		method: PCD{K: 1, Chains: 100},
		opt:    RMSprop{Rho: 0.99, Eps: 1e-3},
		o: Options{Batch: 100, LR: 5e-3, Seed: 1, Regularisers: []Regulariser{L1Squared{Lambda: 0.025}},
			Init: InitGaussian{}, MinGamma: 0.2, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}},
	},
	{
		name:   "MNISTReLU",
		model:  func() *rbm.RBM { return rbm.New(rbm.Binary(784), rbm.ReLU(250), rbm.Seed(1)) },
		set:    func() *data.Set { return benchBinarySet(2000, 784) },
		method: CD{K: 1},
		opt:    SGD{},
		o: Options{Batch: 100, LR: 0.05, Seed: 1, Init: InitCentred{}, Freeze: []string{"hidden.gamma"},
			Float32: true, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}},
	},
}

// BenchmarkUpdate times one training update (the minibatch's sweeps, the
// gradient and the optimiser step) in the settings of updateBenches, after
// 50 warm-up updates that move the parameters away from their
// initialisation.
func BenchmarkUpdate(b *testing.B) {
	for _, c := range updateBenches {
		b.Run(c.name, func(b *testing.B) {
			r := c.start(b)
			updates := func(n int) {
				for n > 0 {
					it, err := r.set.Minibatches(r.o.Batch, data.BatchOptions{Seed: uint64(n)})
					if err != nil {
						b.Fatal(err)
					}
					for ; n > 0 && it.Next(); n-- {
						if _, err := r.update(context.Background(), it, 1, r.k, r.o.LR); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			updates(50)
			b.ResetTimer()
			cpu0 := cpuSeconds()
			updates(b.N)
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N)*1e3, "cpu-ms/update")
		})
	}
}

// start returns the prepared run of the setting (what Fit does before its
// loop).
func (c updateBench) start(tb testing.TB) *run {
	tb.Helper()
	m := c.model()
	set := c.set()
	r, err := newRun(context.Background(), m, set, c.method, c.opt, c.o)
	if err != nil {
		tb.Fatal(err)
	}
	r.snapshot()
	if r.o.Init != nil {
		if err := r.o.Init.initialise(m, set, r.o.Seed, r.isFrozen); err != nil {
			tb.Fatal(err)
		}
	}
	r.constrain()
	if err := r.prepare(); err != nil {
		tb.Fatal(err)
	}
	return r
}

// benchPottsSet returns n one-hot sequences of sites sites and q states,
// each site drawn from its own random profile (a few states dominate).
func benchPottsSet(n, sites, q int) *data.Set {
	rng := rand.New(rand.NewPCG(7, 7))
	cum := make([][]float64, sites)
	for i := range cum {
		cum[i] = make([]float64, q)
		s := 0.0
		for a := range cum[i] {
			w := rng.ExpFloat64()
			s += w * w * w
			cum[i][a] = s
		}
		for a := range cum[i] {
			cum[i][a] /= s
		}
	}
	x := mat.NewDense(n, sites*q, nil)
	for r := 0; r < n; r++ {
		row := x.RawRowView(r)
		for i := 0; i < sites; i++ {
			u, a := rng.Float64(), 0
			for a < q-1 && cum[i][a] < u {
				a++
			}
			row[i*q+a] = 1
		}
	}
	return &data.Set{X: x, Kind: data.KindPotts, Q: q, Source: "synthetic Potts sequences"}
}

// benchBinarySet returns n binary images of width pixels: ten random
// prototypes (about a fifth of the pixels on) with 5 % of the pixels
// flipped.
func benchBinarySet(n, width int) *data.Set {
	rng := rand.New(rand.NewPCG(8, 8))
	protos := make([][]bool, 10)
	for k := range protos {
		protos[k] = make([]bool, width)
		for i := range protos[k] {
			protos[k][i] = rng.Float64() < 0.2
		}
	}
	x := mat.NewDense(n, width, nil)
	for r := 0; r < n; r++ {
		p := protos[rng.IntN(len(protos))]
		row := x.RawRowView(r)
		for i, on := range p {
			if on != (rng.Float64() < 0.05) {
				row[i] = 1
			}
		}
	}
	return &data.Set{X: x, Kind: data.KindBinary, Q: 1, Source: "synthetic binary images"}
}
