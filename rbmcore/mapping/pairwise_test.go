package mapping

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPairwiseMatchesTerm checks every kernel of Pairwise (matrix products,
// log1p form and its polynomial, ReLU Taylor expansion, direct sums) against
// Term, which is tested against brute force and mpmath, for weights from
// tiny to large and fields up to ±10.
func TestPairwiseMatchesTerm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	modes := map[int]int{}
	defer func() {
		for mode := prepLog1p; mode <= prepCGF; mode++ {
			if modes[mode] == 0 {
				t.Errorf("pairwise kernel %d not exercised", mode)
			}
		}
	}()
	for _, kind := range hiddenKinds {
		for _, sd := range []float64{0.003, 0.03, 0.3, 2} {
			for _, spinVis := range []bool{false, true} {
				tm := randomModel(kind, 13, 7, rng, sd, 0, 10, spinVis)
				if kind == "poisson" && sd > 1 {
					tm = randomModel(kind, 13, 7, rng, sd, 0, 2, spinVis)
				}
				mp := mustMapper(t, tm)
				if preps, err := mp.prepareUnits(); err == nil {
					for _, p := range preps {
						modes[p.mode]++
					}
				}
				j, err := mp.Pairwise(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				// Kinds without a closed form are differenced through
				// UnitCGF, by Pairwise and Term in different orders: allow
				// the rounding of Σ_µ of four values of Γ_µ ≈ Γ_µ(off_µ).
				roundoff := 0.0
				if mp.h.fam == famGeneric {
					g := []float64{0}
					for mu := 0; mu < tm.m; mu++ {
						tm.hid.UnitCGF(mu, mp.h.off[mu:mu+1], g)
						roundoff += 16 * 0x1p-52 * math.Abs(g[0])
					}
				}
				for k := 0; k < tm.n; k++ {
					if j.At(k, k) != 0 {
						t.Errorf("%s: J[%d][%d] = %v, want 0", kind, k, k, j.At(k, k))
					}
					for l := k + 1; l < tm.n; l++ {
						want, err := mp.Term(k, l)
						if err != nil {
							t.Fatal(err)
						}
						got := j.At(k, l)
						if got != j.At(l, k) {
							t.Errorf("%s: J not symmetric at (%d,%d)", kind, k, l)
						}
						if d := math.Abs(got - want); !(d <= 1e-11*math.Abs(want)+roundoff+1e-300) {
							t.Errorf("%s sd=%v spin=%v: J[%d][%d] = %.17g, Term %.17g (rel %.2g)", kind, sd, spinVis, k, l, got, want, d/math.Abs(want))
						}
					}
				}
			}
		}
	}
}

// TestPairwiseLargeSites: Step, spin and ReLU units with mostly small
// weights and a few large ones (as in trained RBMs) keep the series or
// factorisation for the small sites and pair the large ones elementwise
// (ReLU: through the series around the large site's input); every coupling
// equals Term's.
func TestPairwiseLargeSites(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	shifted := 0 // ReLU large sites paired through the shifted series
	for _, kind := range []string{"relu", "binary", "spin"} {
		mixed := 0
		for _, spinVis := range []bool{false, true} {
			tm := randomModel(kind, 40, 6, rng, 0.05, 0.05, 3, spinVis)
			mp := mustMapper(t, tm)
			preps, err := mp.prepareUnits()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range preps {
				if (p.mode == prepLowRank || p.mode == prepSeries) && len(p.large) > 0 {
					mixed++
				}
				for _, c := range p.largeCoef {
					if c != nil {
						shifted++
					}
				}
			}
			j, err := mp.Pairwise(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < tm.n; k++ {
				for l := k + 1; l < tm.n; l++ {
					want, err := mp.Term(k, l)
					if err != nil {
						t.Fatal(err)
					}
					if d := math.Abs(j.At(k, l) - want); !(d <= 1e-11*math.Abs(want)+1e-300) {
						t.Errorf("%s spin=%v: J[%d][%d] = %.17g, Term %.17g (rel %.2g)", kind, spinVis, k, l, j.At(k, l), want, d/math.Abs(want))
					}
				}
			}
		}
		if mixed == 0 {
			t.Errorf("%s: no unit had both series and large sites", kind)
		}
	}
	if shifted == 0 {
		t.Error("no ReLU large site went through the shifted series")
	}
}
