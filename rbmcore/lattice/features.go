package lattice

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// FeatureCount is the count of Table II of Tubiana, Cocco & Monasson 2019
// (§IV) for one weight matrix. A feature is one column µ of an
// (Length·Q)×M matrix w with row i·Q+a (RBM weights w_iµ(a), or principal,
// sparse or independent components of the one-hot alignment); its site
// weights are s_i = Σ_a |w_iµ(a)|, and it focuses on the sites with
// s_i > 0.5 max_j s_j. Table II counts the features that focus on two
// sites in contact in the structure and on three sites connected by its
// contacts.
type FeatureCount struct {
	// Pairs is the number of features that focus on two sites, and
	// PairsInContact those whose two sites are in contact.
	Pairs, PairsInContact int
	// Triplets is the number of features that focus on three sites, and
	// TripletsConnected those whose sites are connected by contacts (the
	// cubic lattice has no triangles, so two of the three pairs are
	// contacts).
	Triplets, TripletsConnected int
}

// checkFeatures checks that w has one row per site and amino acid, and
// column mu.
func checkFeatures(w mat.Matrix, mu int) error {
	r, c := w.Dims()
	if r != Length*Q {
		return fmt.Errorf("lattice: weight matrix has %d rows, want Length·Q = %d", r, Length*Q)
	}
	if mu < 0 || mu >= c {
		return fmt.Errorf("lattice: feature %d out of range [0, %d)", mu, c)
	}
	return nil
}

// SiteWeights returns s_i = Σ_a |w_iµ(a)| for every site i of feature mu.
func SiteWeights(w mat.Matrix, mu int) ([Length]float64, error) {
	var s [Length]float64
	if err := checkFeatures(w, mu); err != nil {
		return s, err
	}
	for i := 0; i < Length; i++ {
		for a := 0; a < Q; a++ {
			s[i] += math.Abs(w.At(i*Q+a, mu))
		}
	}
	return s, nil
}

// FeatureSites returns, in increasing order, the sites on which feature
// mu focuses by the Table II criterion s_i > 0.5 max_j s_j (none for an
// all-zero column).
func FeatureSites(w mat.Matrix, mu int) ([]int, error) {
	s, err := SiteWeights(w, mu)
	if err != nil {
		return nil, err
	}
	mx := 0.0
	for _, x := range s {
		mx = math.Max(mx, x)
	}
	var out []int
	for i, x := range s {
		if mx > 0 && x > 0.5*mx {
			out = append(out, i)
		}
	}
	return out, nil
}

// StrongestPair returns the two sites with the largest site weights of
// feature mu, in increasing order (Fig. 5's weight 1 is the unit whose
// strongest pair is sites 3 and 26, (2, 25) numbered from 0).
func StrongestPair(w mat.Matrix, mu int) ([2]int, error) {
	s, err := SiteWeights(w, mu)
	if err != nil {
		return [2]int{}, err
	}
	idx := make([]int, Length)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]] > s[idx[b]] })
	if idx[0] > idx[1] {
		idx[0], idx[1] = idx[1], idx[0]
	}
	return [2]int{idx[0], idx[1]}, nil
}

// Charge returns the charge pattern of feature mu on site i,
// w_iµ(K) + w_iµ(R) − w_iµ(D) − w_iµ(E): positive when the feature favours
// positive residues there. Two sites with charges of opposite signs make
// an electrostatic feature (Fig. 5, weight 1).
func Charge(w mat.Matrix, mu, i int) (float64, error) {
	if err := checkFeatures(w, mu); err != nil {
		return 0, err
	}
	if i < 0 || i >= Length {
		return 0, fmt.Errorf("lattice: Charge: site %d out of range [0, %d)", i, Length)
	}
	at := func(letter byte) float64 { return w.At(i*Q+strings.IndexByte(Alphabet, letter), mu) }
	return at('K') + at('R') - at('D') - at('E'), nil
}

// Charged lists the charged amino acids, K and R (positive) and D and E
// (negative), as ResidueShare takes them.
const Charged = "KRDE"

// ResidueShare returns the share of feature mu's squared weights
// Σ_i,a w_iµ(a)² carried by the amino acids listed in residues (letters of
// Alphabet), at every site: len(residues)/Q for weights spread evenly over
// the amino acids, 1 for a feature on those residues only. Tubiana, Cocco
// & Monasson 2019 (§III.E, Fig. 8) describe the single feature of an RBM
// with one hidden unit as "strong on charged amino acids" (residues
// Charged) and the second of two as a pattern of cysteine bridges ("C").
// An all-zero column has share 0.
func ResidueShare(w mat.Matrix, mu int, residues string) (float64, error) {
	if err := checkFeatures(w, mu); err != nil {
		return 0, err
	}
	var in [Q]bool
	for k := 0; k < len(residues); k++ {
		a := strings.IndexByte(Alphabet, residues[k])
		if a < 0 {
			return 0, fmt.Errorf("lattice: ResidueShare: %q is not an amino acid of %s", residues[k], Alphabet)
		}
		in[a] = true
	}
	share, total := 0.0, 0.0
	for i := 0; i < Length; i++ {
		for a := 0; a < Q; a++ {
			x := w.At(i*Q+a, mu)
			total += x * x
			if in[a] {
				share += x * x
			}
		}
	}
	if total == 0 {
		return 0, nil
	}
	return share / total, nil
}

// Connected reports whether the sites form one connected set in the graph
// of the contacts of contactMap (a ContactMap). An empty set or a single
// site is connected.
func Connected(contactMap *[Length][Length]uint8, sites []int) bool {
	if len(sites) < 2 {
		return true
	}
	seen := make([]bool, len(sites))
	seen[0] = true
	stack := []int{0}
	reached := 1
	for len(stack) > 0 {
		a := sites[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for k, b := range sites {
			if !seen[k] && contactMap[a][b] == 1 {
				seen[k] = true
				reached++
				stack = append(stack, k)
			}
		}
	}
	return reached == len(sites)
}

// CountFeatures applies the Table II criterion to every column of w and
// counts the pair and triplet features and those localised on the
// structure of contactMap.
func CountFeatures(w mat.Matrix, contactMap *[Length][Length]uint8) (FeatureCount, error) {
	var c FeatureCount
	_, m := w.Dims()
	for mu := 0; mu < m; mu++ {
		s, err := FeatureSites(w, mu)
		if err != nil {
			return c, fmt.Errorf("lattice: CountFeatures: %w", err)
		}
		switch len(s) {
		case 2:
			c.Pairs++
			if Connected(contactMap, s) {
				c.PairsInContact++
			}
		case 3:
			c.Triplets++
			if Connected(contactMap, s) {
				c.TripletsConnected++
			}
		}
	}
	return c, nil
}

// ChanceLocalised returns the fractions of all pairs of sites that are in
// contact and of all triplets that are connected in contactMap: the
// fractions of Table II expected of features placed at random.
func ChanceLocalised(contactMap *[Length][Length]uint8) (pair, triplet float64) {
	pairs, trips := 0, 0
	for i := 0; i < Length; i++ {
		for j := i + 1; j < Length; j++ {
			pairs += int(contactMap[i][j])
			for k := j + 1; k < Length; k++ {
				if Connected(contactMap, []int{i, j, k}) {
					trips++
				}
			}
		}
	}
	return float64(pairs) / float64(Length*(Length-1)/2), float64(trips) / float64(Length*(Length-1)*(Length-2)/6)
}
