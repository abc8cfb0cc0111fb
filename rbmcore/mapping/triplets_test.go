package mapping

import (
	"math"
	"math/rand/v2"
	"testing"
)

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
