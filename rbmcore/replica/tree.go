package replica

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Tree describes the hierarchical (phylogenetic) data model of Section VI:
// an ancestor (+1,…,+1) has Children[0] children, each of which has
// Children[1] children, and so on for L = len(Children) levels; a node at
// level j copies its parent with every site flipped independently with
// probability Flip[j−1]. The K = Π_j Children[j] leaves, ordered
// lexicographically by their path (siblings contiguous), are the data points.
//
// Tree gives the exact overlap (Eq. 27) and the exact N → ∞ class table;
// samples at finite N come from the data package's hierarchical generator.
type Tree struct {
	Children []int     // K_1 … K_L, each ≥ 1
	Flip     []float64 // p_1 … p_L, each in [0, 1]
}

// Validate checks the tree parameters.
func (t Tree) Validate() error {
	if len(t.Children) == 0 || len(t.Children) != len(t.Flip) {
		return fmt.Errorf("replica.Tree: %d levels of Children and %d of Flip, need the same non-zero number", len(t.Children), len(t.Flip))
	}
	k := 1
	for j, c := range t.Children {
		if c < 1 {
			return fmt.Errorf("replica.Tree: Children[%d] = %d, need ≥ 1", j, c)
		}
		if p := t.Flip[j]; !(p >= 0 && p <= 1) {
			return fmt.Errorf("replica.Tree: Flip[%d] = %g, need a probability in [0,1]", j, p)
		}
		k *= c
		if k > 62 {
			return fmt.Errorf("replica.Tree: more than 62 leaves")
		}
	}
	return nil
}

// K returns the number of leaves (data points).
func (t Tree) K() int {
	k := 1
	for _, c := range t.Children {
		k *= c
	}
	return k
}

// path returns the tree coordinates (k_1,…,k_L) of leaf k.
func (t Tree) path(k int) []int {
	l := len(t.Children)
	p := make([]int, l)
	for j := l - 1; j >= 0; j-- {
		p[j] = k % t.Children[j]
		k /= t.Children[j]
	}
	return p
}

// Distance returns the tree distance d(k,l) = L − ℓ between leaves k and l,
// where ℓ is the level of their lowest common ancestor (root = level 0);
// d = 0 for k = l. For two levels, d = 1 for siblings and 2 for cousins.
func (t Tree) Distance(k, l int) int {
	pk, pl := t.path(k), t.path(l)
	ell := 0
	for ell < len(pk) && pk[ell] == pl[ell] {
		ell++
	}
	return len(pk) - ell
}

// OverlapAtDistance returns x^(d) = Π_{j=L−d+1}^{L} (1−2p_j)², the overlap
// of two leaves at tree distance d (Eq. 27 written with d = L − ℓ).
func (t Tree) OverlapAtDistance(d int) float64 {
	l := len(t.Flip)
	x := 1.0
	for j := l - d; j < l; j++ { // levels L−d+1 … L in 1-based numbering
		a := 1 - 2*t.Flip[j]
		x *= a * a
	}
	return x
}

// Overlap returns the exact K×K overlap matrix of Eq. 27.
func (t Tree) Overlap() (*mat.SymDense, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	k := t.K()
	x := mat.NewSymDense(k, nil)
	for a := 0; a < k; a++ {
		for b := a; b < k; b++ {
			x.SetSym(a, b, t.OverlapAtDistance(t.Distance(a, b)))
		}
	}
	return x, nil
}

// Classes returns the exact N → ∞ class table of the tree model: the
// probability f_σ that a site has column σ, computed by the upward
// recursion over the tree (the sites are independent). It enumerates the
// 2^K columns, so K is limited to 20.
func (t Tree) Classes() (*Classes, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	k := t.K()
	if k > 20 {
		return nil, fmt.Errorf("replica.Tree.Classes: K = %d leaves, exact class table limited to 20", k)
	}
	nc := 1 << uint(k-1)
	pats := make([][]float64, 0, nc)
	frac := make([]float64, 0, nc)
	sigma := make([]float64, k)
	for code := 0; code < nc; code++ {
		sigma[0] = 1
		for r := 1; r < k; r++ {
			sigma[r] = 1
			if code&(1<<uint(r-1)) != 0 {
				sigma[r] = -1
			}
		}
		// probability of σ plus that of −σ (the mirror column)
		f := t.columnProb(sigma, 1) + t.columnProb(sigma, -1)
		pats = append(pats, append([]float64(nil), sigma...))
		frac = append(frac, f)
	}
	return NewClasses(pats, frac)
}

// columnProb is the probability that the leaves of one site read sign·σ.
func (t Tree) columnProb(sigma []float64, sign float64) float64 {
	// m(level, node, spin): probability of the leaves below node given its spin.
	var rec func(level, first, span int, spin float64) float64
	rec = func(level, first, span int, spin float64) float64 {
		if level == len(t.Children) {
			if sign*sigma[first] == spin {
				return 1
			}
			return 0
		}
		p := t.Flip[level]
		child := span / t.Children[level]
		prod := 1.0
		for c := 0; c < t.Children[level]; c++ {
			f := first + c*child
			prod *= (1-p)*rec(level+1, f, child, spin) + p*rec(level+1, f, child, -spin)
		}
		return prod
	}
	return rec(0, 0, t.K(), 1)
}

// Automorphisms returns the permutations of the leaves that preserve the
// tree (the children of every node permuted among themselves, recursively):
// Π_j (K_j!)^(nodes at level j−1) of them, each as perm[k] = image of leaf
// k. Limited to 100000 permutations.
func (t Tree) Automorphisms() ([][]int, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	count := 1.0
	nodes := 1
	for _, c := range t.Children {
		f := 1.0
		for i := 2; i <= c; i++ {
			f *= float64(i)
		}
		count *= math.Pow(f, float64(nodes))
		nodes *= c
	}
	if count > 100000 {
		return nil, fmt.Errorf("replica.Tree.Automorphisms: %g automorphisms, limited to 100000", count)
	}
	// sub(level) lists the automorphisms of a subtree rooted at that level,
	// as permutations of its span of leaves (local indices).
	var sub func(level int) [][]int
	sub = func(level int) [][]int {
		if level == len(t.Children) {
			return [][]int{{0}}
		}
		kc := t.Children[level]
		inner := sub(level + 1)
		span := len(inner[0])
		var out [][]int
		for _, pi := range permutations(kc) {
			// choose one inner automorphism per child
			idx := make([]int, kc)
			for {
				p := make([]int, kc*span)
				for c := 0; c < kc; c++ {
					for l := 0; l < span; l++ {
						p[c*span+l] = pi[c]*span + inner[idx[c]][l]
					}
				}
				out = append(out, p)
				c := 0
				for c < kc {
					idx[c]++
					if idx[c] < len(inner) {
						break
					}
					idx[c] = 0
					c++
				}
				if c == kc {
					break
				}
			}
		}
		return out
	}
	return sub(0), nil
}

// permutations lists all permutations of 0..n−1.
func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for pos := 0; pos <= len(p); pos++ {
			q := make([]int, 0, n)
			q = append(q, p[:pos]...)
			q = append(q, n-1)
			q = append(q, p[pos:]...)
			out = append(out, q)
		}
	}
	return out
}
