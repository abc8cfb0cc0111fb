package rbm_test

import (
	"context"
	"fmt"
	"os"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// A layer's Γ, mean and variance at a few inputs (ReLU unit, γ = 1, θ = 0):
// Γ(0) = log √(π/2), mean √(2/π), and a large negative input is handled
// without overflow (mean ≈ 1/|I|).
func ExampleReLULayer() {
	l := rbm.ReLU(1)
	in := []float64{0, 2, -1e4}
	g, m, v := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	l.UnitCGF(0, in, g)
	l.Mean(in, m)
	l.Var(in, v)
	for k := range in {
		fmt.Printf("I=%g Γ=%.6f mean=%.6g var=%.6g\n", in[k], g[k], m[k], v[k])
	}
	// Output:
	// I=0 Γ=0.225791 mean=0.797885 var=0.36338
	// I=2 Γ=2.895926 mean=2.05525 var=0.886452
	// I=-10000 Γ=-9.210340 mean=0.0001 var=1e-08
}

// Building a model, computing free energies and conditional means.
func ExampleNew() {
	m := rbm.New(rbm.Binary(4), rbm.Gaussian(2), rbm.Seed(7), rbm.WeightScale(0.1))
	fmt.Println(m)
	v := mat.NewDense(2, 4, []float64{1, 0, 1, 0, 0, 0, 0, 0})
	f := m.FreeEnergy(v)
	fmt.Printf("F(0000) = %.6f (= -2·½log 2π)\n", f[1])
	h := m.MeanHidden(v)
	r, c := h.Dims()
	fmt.Println(r, c)
	// Output:
	// RBM binary(4) × gaussian(2)
	// F(0000) = -1.837877 (= -2·½log 2π)
	// 2 2
}

// Exact log Z, average log-likelihood and pseudo-likelihood of a small model.
func ExampleRBM_ExactLogZ() {
	m := rbm.New(rbm.Spin(10), rbm.Binary(3), rbm.Seed(1), rbm.WeightScale(0)) // no weights
	logZ, err := m.ExactLogZ(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	// independent units: Z = 2^10 (spins) × 2^3 (binary hidden)
	fmt.Printf("log Z = %.6f = 13 log 2\n", logZ)
	v := mat.NewDense(1, 10, []float64{1, 1, 1, 1, 1, -1, -1, -1, -1, -1})
	ll, _ := m.LogLikelihood(v, logZ)
	pl, _ := m.PseudoLikelihood(context.Background(), v)
	fmt.Printf("log P(v) = %.6f, log PL(v) = %.6f\n", ll, pl[0])
	// Output:
	// log Z = 9.010913 = 13 log 2
	// log P(v) = -6.931472, log PL(v) = -6.931472
}

// Parallel tempering over a β ladder, with swap statistics.
func ExampleTempering() {
	m := rbm.New(rbm.Binary(20), rbm.Binary(5), rbm.Seed(3), rbm.WeightScale(1))
	pt, err := rbm.NewTempering(m, []float64{0.5, 0.75, 1}, 50, 9)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := pt.Run(context.Background(), 20, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(pt.SwapRates()), pt.Attempted[0]+pt.Attempted[1])
	// Output: 2 1000
}

// Saving a model in both formats and reading it back.
func ExampleRBM_Save() {
	m := rbm.New(rbm.Potts(3, 4), rbm.DReLU(2), rbm.Seed(1))
	dir, err := os.MkdirTemp("", "rbm-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"model.json", "model.hrbm"} {
		if err := m.Save(dir + "/" + name); err != nil {
			fmt.Println(err)
			return
		}
		back, err := rbm.Load(dir + "/" + name)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(name, back, mat.Equal(back.W, m.W))
	}
	// Output:
	// model.json RBM potts(3, q=4) × drelu(2) true
	// model.hrbm RBM potts(3, q=4) × drelu(2) true
}
