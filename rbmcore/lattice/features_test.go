package lattice

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// setSite puts weight x on every amino acid of site i of feature mu.
func setSite(w *mat.Dense, mu, i int, x float64) {
	for a := 0; a < Q; a++ {
		w.Set(i*Q+a, mu, x)
	}
}

func TestFeatureSitesAndCounts(t *testing.T) {
	st := model(t).Structures()
	cm := st.ContactMap(DefaultTarget)
	contacts := st.Contacts(DefaultTarget)
	// A pair that is not a contact, and a chain bond (never a contact).
	var far [2]int
	for j := 1; j < Length; j++ {
		if cm[0][j] == 0 && j > 1 {
			far = [2]int{0, j}
			break
		}
	}
	// A connected triplet: two contacts sharing a site; an unconnected
	// one: a contact plus a site in contact with neither end.
	c0 := contacts[0]
	third := -1
	for k := 0; k < Length && third < 0; k++ {
		if k != c0[0] && k != c0[1] && cm[c0[1]][k] == 1 {
			third = k
		}
	}
	lone := -1
	for k := 0; k < Length && lone < 0; k++ {
		if k != c0[0] && k != c0[1] && cm[c0[0]][k] == 0 && cm[c0[1]][k] == 0 {
			lone = k
		}
	}
	if third < 0 || lone < 0 {
		t.Fatal("no test triplets found on S_A")
	}
	w := mat.NewDense(Length*Q, 7, nil)
	setSite(w, 0, c0[0], 1) // pair in contact, with a sub-threshold third site
	setSite(w, 0, c0[1], -0.8)
	setSite(w, 0, 5, 0.49)
	setSite(w, 1, far[0], 1) // pair not in contact
	setSite(w, 1, far[1], 0.6)
	setSite(w, 2, c0[0], 1) // connected triplet
	setSite(w, 2, c0[1], 1)
	setSite(w, 2, third, 1)
	setSite(w, 3, c0[0], 1) // unconnected triplet
	setSite(w, 3, c0[1], 1)
	setSite(w, 3, lone, 1)
	for i := 0; i < Length; i++ { // extended
		setSite(w, 4, i, 1)
	}
	setSite(w, 5, 7, 2) // one site
	// column 6 stays zero: no sites
	wantSites := [][]int{sorted(c0[0], c0[1]), sorted(far[0], far[1]), sorted(c0[0], c0[1], third), sorted(c0[0], c0[1], lone), nil, {7}, nil}
	for mu, want := range wantSites {
		got, err := FeatureSites(w, mu)
		if err != nil {
			t.Fatal(err)
		}
		if mu == 4 {
			if len(got) != Length {
				t.Errorf("extended feature: %d sites, want %d", len(got), Length)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("feature %d: sites %v, want %v", mu, got, want)
		}
	}
	got, err := CountFeatures(w, &cm)
	if err != nil {
		t.Fatal(err)
	}
	want := FeatureCount{Pairs: 2, PairsInContact: 1, Triplets: 2, TripletsConnected: 1}
	if got != want {
		t.Errorf("CountFeatures = %+v, want %+v", got, want)
	}
	p, err := StrongestPair(w, 0)
	if err != nil || p != [2]int{min(c0[0], c0[1]), max(c0[0], c0[1])} {
		t.Errorf("StrongestPair = %v, %v; want %v", p, err, c0)
	}
	if _, err := CountFeatures(mat.NewDense(Length*Q-1, 2, nil), &cm); err == nil || !strings.Contains(err.Error(), "rows") {
		t.Errorf("a matrix with a missing row: err = %v, want one naming the rows", err)
	}
	if _, err := SiteWeights(w, 7); err == nil {
		t.Error("feature out of range: no error")
	}
}

func sorted(x ...int) []int {
	slices.Sort(x)
	return x
}

// The chance fractions against closed forms: 28 contacts among the 351
// pairs, and, since the cube is bipartite (no triangles), the connected
// triplets are the paths of two contacts, Σ_i C(d_i, 2) for the contact
// degrees d_i.
func TestChanceLocalised(t *testing.T) {
	st := model(t).Structures()
	for _, s := range []int{DefaultTarget, 0, st.Len() - 1} {
		cm := st.ContactMap(s)
		paths := 0
		for i := 0; i < Length; i++ {
			d := 0
			for j := 0; j < Length; j++ {
				d += int(cm[i][j])
			}
			paths += d * (d - 1) / 2
		}
		pair, trip := ChanceLocalised(&cm)
		if want := 28.0 / 351; math.Abs(pair-want) > 1e-15 {
			t.Errorf("structure %d: pair fraction %v, want %v", s, pair, want)
		}
		if want := float64(paths) / 2925; math.Abs(trip-want) > 1e-15 {
			t.Errorf("structure %d: triplet fraction %v, want Σ C(d,2)/C(27,3) = %v", s, trip, want)
		}
	}
}

func TestConnected(t *testing.T) {
	var cm [Length][Length]uint8
	link := func(a, b int) { cm[a][b], cm[b][a] = 1, 1 }
	link(0, 3)
	link(3, 8)
	link(10, 13)
	cases := []struct {
		sites []int
		want  bool
	}{
		{nil, true}, {[]int{4}, true}, {[]int{0, 3}, true}, {[]int{3, 0}, true}, {[]int{0, 8}, false},
		{[]int{8, 0, 3}, true}, {[]int{0, 3, 10}, false}, {[]int{0, 3, 8, 10, 13}, false},
	}
	for _, c := range cases {
		if got := Connected(&cm, c.sites); got != c.want {
			t.Errorf("Connected(%v) = %v, want %v", c.sites, got, c.want)
		}
	}
}

func TestCharge(t *testing.T) {
	w := mat.NewDense(Length*Q, 2, nil)
	idx := func(l byte) int { return strings.IndexByte(Alphabet, l) }
	w.Set(2*Q+idx('K'), 1, 1.5)
	w.Set(2*Q+idx('R'), 1, 0.5)
	w.Set(2*Q+idx('E'), 1, -1)
	w.Set(2*Q+idx('A'), 1, 7) // not charged
	w.Set(25*Q+idx('D'), 1, 2)
	c3, err := Charge(w, 1, 2)
	if err != nil || c3 != 3 {
		t.Errorf("Charge(site 3) = %v, %v; want 3", c3, err)
	}
	c26, _ := Charge(w, 1, 25)
	if c26 != -2 {
		t.Errorf("Charge(site 26) = %v, want −2", c26)
	}
	if _, err := Charge(w, 1, Length); err == nil {
		t.Error("site out of range: no error")
	}
}

func TestResidueShare(t *testing.T) {
	idx := func(l byte) int { return strings.IndexByte(Alphabet, l) }
	w := mat.NewDense(Length*Q, 4, nil)
	for i := 0; i < Length; i++ {
		for a := 0; a < Q; a++ {
			w.Set(i*Q+a, 0, 0.3) // even over the amino acids: 4 of 20 on charges, 1 of 20 on C
		}
	}
	w.Set(4*Q+idx('K'), 1, 2) // charges only, of both signs
	w.Set(9*Q+idx('E'), 1, -1)
	w.Set(4*Q+idx('R'), 2, 2) // squares: R 4 of 4 + 1 + 1 (absolute values would give 2 of 4)
	w.Set(7*Q+idx('H'), 2, 1) // H is not counted as charged
	w.Set(7*Q+idx('C'), 2, -1)
	cases := []struct {
		mu       int
		residues string
		want     float64
	}{
		{0, Charged, 0.2}, {1, Charged, 1}, {2, Charged, 4.0 / 6}, {3, Charged, 0},
		{0, "C", 0.05}, {1, "C", 0}, {2, "C", 1.0 / 6}, {2, "CH", 2.0 / 6}, {2, "", 0},
	}
	for _, c := range cases {
		got, err := ResidueShare(w, c.mu, c.residues)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ResidueShare(feature %d, %q) = %v, %v; want %v", c.mu, c.residues, got, err, c.want)
		}
	}
	if _, err := ResidueShare(w, 4, Charged); err == nil {
		t.Error("feature out of range: no error")
	}
	if _, err := ResidueShare(mat.NewDense(Length*Q-1, 1, nil), 0, Charged); err == nil {
		t.Error("wrong number of rows: no error")
	}
	if _, err := ResidueShare(w, 0, "KX"); err == nil {
		t.Error("a letter that is not an amino acid: no error")
	}
}
