package mapping_test

import (
	"context"
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/mapping"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// The pairwise couplings of a Linear RBM are W Wᵀ (Eq. 18a).
func ExamplePairwise() {
	m := &rbm.RBM{Visible: rbm.Binary(3), Hidden: rbm.Gaussian(2),
		W: mat.NewDense(3, 2, []float64{1, 0, 0.5, 0.5, 0, -1})}
	j, err := mapping.Pairwise(context.Background(), m)
	if err != nil {
		fmt.Println(err)
		return
	}
	for k := 0; k < 3; k++ {
		fmt.Printf("%5.2f\n", mat.Row(nil, k, j))
	}
	// Output:
	// [ 0.00  0.50  0.00]
	// [ 0.50  0.00 -0.50]
	// [ 0.00 -0.50  0.00]
}

// A Linear RBM with M = N−1 hidden units represents a given pairwise model
// exactly (Eq. 22).
func ExampleLinearFromCouplings() {
	j := mat.NewDense(3, 3, []float64{0, 1, -0.5, 1, 0, 0.25, -0.5, 0.25, 0})
	h := []float64{0.1, 0.2, -0.3}
	m, err := mapping.LinearFromCouplings(j, h, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	mp, _ := mapping.New(m)
	got, _ := mp.Pairwise(context.Background())
	f, _ := mp.Fields(context.Background())
	fmt.Printf("J01 = %.3f, J02 = %.3f, J12 = %.3f\n", got.At(0, 1), got.At(0, 2), got.At(1, 2))
	fmt.Printf("fields = %.3f\n", f)
	// Output:
	// J01 = 1.000, J02 = -0.500, J12 = 0.250
	// fields = [0.100 0.200 -0.300]
}

// A single {0,1} coupling J v0 v1 is, in spins s = 2v − 1, the coupling
// J/4 plus fields J/4 on each site.
func ExampleToSpin() {
	spin, err := mapping.ToSpin([]mapping.Term{{Sites: []int{0, 1}, Value: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range spin {
		fmt.Println(t.Sites, t.Value)
	}
	// Output:
	// [0] 0.25
	// [1] 0.25
	// [0 1] 0.25
}

// The Hopfield-like approximation (Eq. 19) of a Step RBM with small weights
// and its normalised RMS error against the exact couplings (Fig. 9).
func ExampleNRMSE() {
	w := mat.NewDense(4, 2, []float64{0.05, -0.02, 0.03, 0.04, -0.01, 0.02, 0.02, -0.05})
	m := &rbm.RBM{Visible: rbm.Binary(4), Hidden: rbm.Binary(2), W: w}
	mp, _ := mapping.New(m)
	exact, _ := mp.Pairwise(context.Background())
	approx, _ := mp.ApproxPairwise()
	e, _ := mapping.NRMSE(exact, approx)
	fmt.Printf("NRMSE below 1e-3: %v\n", e < 1e-3 && e > 0)
	lim, _ := mapping.OrderLimit(0.1)
	fmt.Printf("orders determined with 10%% weight error: %.0f\n", math.Floor(lim))
	// Output:
	// NRMSE below 1e-3: true
	// orders determined with 10% weight error: 7
}
