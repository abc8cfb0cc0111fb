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

// TestExponentialProductForm: for Exponential (poisson) hidden units every
// interaction is I(S) = Σ_µ λ̃_µ Π_{k∈S} u_kµ with λ̃ = e^θ, u = e^w − 1
// (seed 001 Eq. 20d; plus the visible bias for |S| = 1), evaluated here
// directly from the parameters: All and Pairwise, {0,1} and ±1 visible
// layers (through v = (1+s)/2: weights 2w, fields θ − Σ_i w_iµ), weights up
// to |w| = 5.
func TestExponentialProductForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, spinVis := range []bool{false, true} {
		for _, r := range []struct{ sd, large float64 }{{0.05, 0}, {0.7, 0}, {1, 0.2}} {
			tm := randomModel("poisson", 7, 4, rng, r.sd, r.large, 2, spinVis)
			n, m := tm.n, tm.m
			theta := paramByName(tm.hid, "theta")
			bias := append([]float64(nil), paramByName(tm.vis, "theta")...)
			w := append([]float64(nil), tm.w...)
			lam := make([]float64, m)
			for mu := range lam {
				x := theta[mu]
				if spinVis {
					for i := 0; i < n; i++ {
						x -= tm.w[i*m+mu]
					}
				}
				lam[mu] = math.Exp(x)
			}
			if spinVis {
				for i := range w {
					w[i] *= 2
				}
				for i := range bias {
					bias[i] *= 2
				}
			}
			product := func(sites []int) (sum, abs float64) {
				for mu := 0; mu < m; mu++ {
					p := lam[mu]
					for _, k := range sites {
						p *= math.Expm1(w[k*m+mu])
					}
					sum += p
					abs += math.Abs(p)
				}
				if len(sites) == 1 {
					sum += bias[sites[0]]
					abs += math.Abs(bias[sites[0]])
				}
				return sum, abs
			}
			mp := mustMapper(t, tm)
			terms, err := mp.All(t.Context(), n)
			if err != nil {
				t.Fatal(err)
			}
			for _, term := range terms {
				want, abs := product(term.Sites)
				if d := math.Abs(term.Value - want); !(d <= 1e-13*abs) {
					t.Errorf("spin=%v sd=%v: I%v = %.17g, Σ λ̃ Π u = %.17g", spinVis, r.sd, term.Sites, term.Value, want)
				}
			}
			j, err := mp.Pairwise(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < n; k++ {
				for l := k + 1; l < n; l++ {
					want, abs := product([]int{k, l})
					if d := math.Abs(j.At(k, l) - want); !(d <= 1e-13*abs) {
						t.Errorf("spin=%v sd=%v: J[%d][%d] = %.17g, Σ λ̃ u u = %.17g", spinVis, r.sd, k, l, j.At(k, l), want)
					}
				}
			}
		}
	}
}

// TestTripletsMatchTerm checks Triplets (pair-organised series, or Term's
// evaluation unit by unit) against Term for every hidden kind, weights from
// tiny to large, {0,1} and ±1 visible layers, and that both of its paths
// were used.
func TestTripletsMatchTerm(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	series, fallback := 0, 0
	for _, kind := range hiddenKinds {
		for _, sd := range []float64{0.01, 0.1, 0.6, 2} {
			for _, spinVis := range []bool{false, true} {
				tm := randomModel(kind, 9, 5, rng, sd, 0, 3, spinVis)
				mp := mustMapper(t, tm)
				sites := []int{8, 0, 2, 3, 5, 7, 2}
				for mu := 0; mu < tm.m; mu++ {
					h := mp.h
					if h.fam != famBinary && h.fam != famSpin && h.fam != famReLU {
						continue
					}
					amax := 0.0
					for _, k := range sites {
						amax = math.Max(amax, math.Abs(mp.w[k*tm.m+mu]*h.scale[mu]))
					}
					if seriesCut(h.kappa[mu], 3*amax, 3, seriesOrder(3*amax/h.rad[mu], 3)) > 0 {
						series++
					} else {
						fallback++
					}
				}
				tr, err := mp.Triplets(t.Context(), sites)
				if err != nil {
					t.Fatal(err)
				}
				if len(tr) != 20 {
					t.Fatalf("%d triplets of 6 distinct sites, want 20", len(tr))
				}
				for _, term := range tr {
					want, err := mp.Term(term.Sites...)
					if err != nil {
						t.Fatal(err)
					}
					if d := math.Abs(term.Value - want); !(d <= 1e-12*math.Abs(want)+1e-300) {
						t.Errorf("%s sd=%v spin=%v: Triplets I%v = %.17g, Term %.17g", kind, sd, spinVis, term.Sites, term.Value, want)
					}
				}
			}
		}
	}
	if series == 0 || fallback == 0 {
		t.Errorf("paths not both exercised: %d series units, %d per-set units", series, fallback)
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
