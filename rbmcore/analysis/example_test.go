package analysis_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/analysis"
)

func ExamplePR() {
	// Three non-zero entries of equal modulus: PR = 3 for any order e.
	fmt.Println(analysis.PR([]float64{0, 2, -2, 0, 2}, 2))
	// Output: 3
}

// Count blocks of identical hidden units (the replica paper's Fig. 3A): 6 units in 2
// blocks, one unit of each block mirrored.
func ExampleVarianceExplained() {
	w := mat.NewDense(4, 6, []float64{ // N = 4 visible rows, M = 6 hidden columns
		1, 1, -1, 0, 0, 0,
		1, 1, -1, 0, 0, 0,
		0, 0, 0, 1, -1, 1,
		0, 0, 0, 2, -2, 2,
	})
	ve, _ := analysis.VarianceExplained(context.Background(), analysis.UnitVectors(w), 3,
		analysis.KMeansOptions{Restarts: 5, Mirror: true, Seed: 1})
	fmt.Printf("VE(1..3) = %.2f %.2f %.2f\n", ve[0], ve[1], ve[2])
	// Output: VE(1..3) = 0.00 1.00 1.00
}

func ExampleMarchenkoPasturEdges() {
	lo, hi := analysis.MarchenkoPasturEdges(0.25, 1) // N/S = 1/4, unit variance
	fmt.Println(lo, hi)
	// Output: 0.25 2.25
}

// Two hidden units with proportional weights are one feature twice: the duplicate
// weights of Eq. 26 make them count once in the number of active units.
func ExampleActivatedUnitsWeighted() {
	w := mat.NewDense(3, 3, []float64{ // N = 3 visible rows, M = 3 hidden columns; unit 1 = 2 × unit 0
		1, 2, 0,
		1, 2, 0,
		0, 0, 1,
	})
	omega := analysis.DuplicateWeights(analysis.Overlaps(w), 0.9)
	h := mat.NewDense(1, 3, []float64{1, 1, 1}) // all three units equally active
	fmt.Printf("ω = %v, L = %.0f, corrected L = %.0f\n", omega,
		analysis.ActivatedUnits(h, nil)[0], analysis.ActivatedUnitsWeighted(h, nil, omega)[0])
	// Output: ω = [0.5 0.5 1], L = 3, corrected L = 2
}

// Tune the L1 penalty of sparse PCA until its components are as sparse as
// another model's, as Tubiana, Cocco & Monasson 2019 do to compare sparse PCA
// with an RBM: one latent factor on the first three of ten noisy features,
// and a target sparsity of three sites in ten.
func ExampleSparsePCAMatched() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(2000, 10, nil)
	for r := 0; r < 2000; r++ {
		z := rng.NormFloat64()
		for i := 0; i < 10; i++ {
			v := rng.NormFloat64()
			if i < 3 {
				v += 2 * z
			}
			x.Set(r, i, v)
		}
	}
	res, lambda, err := analysis.SparsePCAMatched(context.Background(), x, analysis.SparsePCAOptions{Components: 1},
		analysis.SparsityTarget{Median: 0.3})
	if err != nil {
		panic(err)
	}
	w := mat.Col(nil, 0, res.Components)
	rest := 0.0
	for _, v := range w[3:] {
		rest = math.Max(rest, math.Abs(v))
	}
	_, p, _ := analysis.Sparsity(res.Components, 1)
	fmt.Printf("loadings on the factor's features %.2f, at most %.2f elsewhere\n", w[:3], rest)
	fmt.Printf("p = %.2f, penalty between 0.01 and 1: %v\n", p[0], lambda > 0.01 && lambda < 1)
	// Output:
	// loadings on the factor's features [0.57 0.58 0.58], at most 0.01 elsewhere
	// p = 0.30, penalty between 0.01 and 1: true
}
