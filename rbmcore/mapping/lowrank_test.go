package mapping

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestLowRankFactor checks the ReLU low-rank factorisation of the pair term
// against Term (the cumulant series or four-point sum of one unit, tested
// against brute force and mpmath) on a grid of weights including the extreme
// ones a = ±A, where the truncation error bound is largest: every pair must
// agree to 1e-13 of its first-order term κ₂ a_k a_l. It also checks that the
// eigenvalue cut actually lowers the rank below the series size at moderate
// weights (the point of the factorisation) and that too large weights are
// refused.
func TestLowRankFactor(t *testing.T) {
	for _, x0 := range []float64{-8, -2, 0, 0.7, 3, 8} {
		g := make([]float64, maxJet+1)
		reluJet(x0, g)
		for _, A := range []float64{1e-3, 0.05, 0.45, 0.8} {
			basis, rank, npos, ok := lowRankFactor(g, A)
			if !ok {
				// The double series converges like (2A/r)ⁿ: it must be
				// accepted at least up to 2A/r = 1/2.
				if 4*A < radius(famReLU, x0) {
					t.Errorf("x0=%v A=%v: factorisation refused", x0, A)
				}
				continue
			}
			size := len(basis) / rank
			if A <= 0.45 && rank >= size {
				t.Errorf("x0=%v A=%v: rank %d not below the series size %d", x0, A, rank, size)
			}
			grid := []float64{-A, -0.7 * A, -0.1 * A, 1e-3 * A, 0.3 * A, 0.9 * A, A}
			for _, ak := range grid {
				for _, al := range grid {
					got := 0.0
					for c := 0; c < rank; c++ {
						zk, zl := 0.0, 0.0
						for p := size - 1; p >= 0; p-- {
							zk = zk*(ak/A) + basis[p*rank+c]
							zl = zl*(al/A) + basis[p*rank+c]
						}
						if c < npos {
							got += zk * zl
						} else {
							got -= zk * zl
						}
					}
					got *= ak * al
					hid := rbm.ReLU(1)
					hid.Theta[0] = x0
					mp := mustMapper(t, testModel{vis: rbm.Binary(2), hid: hid, w: []float64{ak, al}, n: 2, m: 1})
					want, err := mp.Term(0, 1)
					if err != nil {
						t.Fatal(err)
					}
					first := math.Abs(2 * g[2] * ak * al)
					if d := math.Abs(got - want); !(d <= 1e-13*first) {
						t.Errorf("x0=%v A=%v a=(%v,%v): low rank %.17g, Term %.17g (error %.2g of the first-order term)",
							x0, A, ak, al, got, want, d/first)
					}
				}
			}
		}
	}
	g := make([]float64, maxJet+1)
	reluJet(0, g)
	if _, _, _, ok := lowRankFactor(g, 2); ok {
		t.Error("A = 2 at x0 = 0 (beyond a third of the radius of convergence): factorisation not refused")
	}
}

// TestSyrkUpper: the row-split symmetric update against the naive sum, for
// sizes around the block bounds; the strict lower triangle is left alone.
func TestSyrkUpper(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, n := range []int{1, 2, 5, 17, 97, 301} {
		const cols, stride = 13, 15
		z := make([]float64, n*stride)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		j := make([]float64, n*n)
		for i := range j {
			j[i] = rng.NormFloat64()
		}
		j0 := append([]float64(nil), j...)
		if err := syrkUpper(-0.5, blas64.General{Rows: n, Cols: cols, Stride: stride, Data: z}, j); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < n; k++ {
			for l := 0; l < n; l++ {
				want := j0[k*n+l]
				if l >= k {
					for c := 0; c < cols; c++ {
						want -= 0.5 * z[k*stride+c] * z[l*stride+c]
					}
				}
				if d := math.Abs(j[k*n+l] - want); !(d <= 1e-13) {
					t.Fatalf("n=%d: entry (%d,%d) = %v, want %v", n, k, l, j[k*n+l], want)
				}
			}
		}
	}
}
