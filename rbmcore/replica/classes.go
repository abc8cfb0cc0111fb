package replica

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Classes is the site-class table of K data points ξ^1…ξ^K ∈ {±1}^N
// (Appendix I). Sites with identical or opposite data columns belong to the
// same class; class c is represented by the pattern Pattern(c) ∈ {±1}^K whose
// first entry is +1, and holds the fraction F[c] of all sites (sites whose
// column is −Pattern(c) included). The F sum to 1.
//
// A table built from a data matrix (ClassesFromData) also records, for every
// site i, its class Site[i] and the sign SiteSign[i] with ξ^k_i =
// SiteSign[i]·Pattern(Site[i])_k; N is then the number of sites. A table of
// exact N → ∞ frequencies (Tree.Classes) has N = 0 and no sites.
type Classes struct {
	K        int       // number of data points
	Sigma    []float64 // C×K row-major: Sigma[c*K+k] = pattern of class c at data point k
	F        []float64 // fraction of sites in class c (with its mirror)
	N        int       // number of sites, 0 for an exact (infinite-N) table
	Site     []int     // class of each site (len N), nil for an exact table
	SiteSign []int8    // ±1 orientation of each site relative to its class pattern
}

// NumClasses returns the number C of classes (at most 2^(K−1)).
func (c *Classes) NumClasses() int { return len(c.F) }

// Pattern returns the ±1 pattern of class i (a copy).
func (c *Classes) Pattern(i int) []float64 {
	return append([]float64(nil), c.Sigma[i*c.K:(i+1)*c.K]...)
}

// String describes the table in one line.
func (c *Classes) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replica.Classes{K=%d, C=%d", c.K, len(c.F))
	if c.N > 0 {
		fmt.Fprintf(&b, ", N=%d", c.N)
	} else {
		b.WriteString(", N=∞")
	}
	b.WriteString("}")
	return b.String()
}

// ClassesFromData builds the class table of a K×N matrix whose rows are the
// data points ξ^k (the layout of data.Set.X for spin data). Entries must be
// exactly ±1.
func ClassesFromData(xi mat.Matrix) (*Classes, error) {
	if xi == nil {
		return nil, fmt.Errorf("replica.ClassesFromData: data matrix is nil")
	}
	k, n := xi.Dims()
	if k < 1 || n < 1 {
		return nil, fmt.Errorf("replica.ClassesFromData: data matrix is %d×%d, need K ≥ 1 rows and N ≥ 1 columns", k, n)
	}
	if k > 62 {
		return nil, fmt.Errorf("replica.ClassesFromData: K = %d data points, at most 62 supported", k)
	}
	cl := &Classes{K: k, N: n, Site: make([]int, n), SiteSign: make([]int8, n)}
	index := map[uint64]int{}
	count := []int{}
	for i := 0; i < n; i++ {
		var key uint64
		s0 := xi.At(0, i)
		for r := 0; r < k; r++ {
			v := xi.At(r, i)
			if v != 1 && v != -1 {
				return nil, fmt.Errorf("replica.ClassesFromData: entry (%d,%d) = %g is not ±1", r, i, v)
			}
			if v*s0 < 0 { // orient so that the first entry is +1
				key |= 1 << uint(r)
			}
		}
		c, ok := index[key]
		if !ok {
			c = len(count)
			index[key] = c
			count = append(count, 0)
			for r := 0; r < k; r++ {
				if key&(1<<uint(r)) != 0 {
					cl.Sigma = append(cl.Sigma, -1)
				} else {
					cl.Sigma = append(cl.Sigma, 1)
				}
			}
		}
		count[c]++
		cl.Site[i] = c
		cl.SiteSign[i] = int8(s0)
	}
	cl.F = make([]float64, len(count))
	for c, m := range count {
		cl.F[c] = float64(m) / float64(n)
	}
	return cl, nil
}

// NewClasses builds an exact class table from explicit patterns (one ±1 row
// of length K per class) and fractions (non-negative, normalised here).
// Patterns whose first entry is −1 are flipped; duplicate patterns (up to
// sign) are merged.
func NewClasses(patterns [][]float64, frac []float64) (*Classes, error) {
	if len(patterns) == 0 || len(patterns) != len(frac) {
		return nil, fmt.Errorf("replica.NewClasses: %d patterns and %d fractions, need the same non-zero number", len(patterns), len(frac))
	}
	k := len(patterns[0])
	if k < 1 || k > 62 {
		return nil, fmt.Errorf("replica.NewClasses: pattern length K = %d, need 1..62", k)
	}
	cl := &Classes{K: k}
	index := map[uint64]int{}
	total := 0.0
	for c, p := range patterns {
		if len(p) != k {
			return nil, fmt.Errorf("replica.NewClasses: pattern %d has length %d, want %d", c, len(p), k)
		}
		if !(frac[c] >= 0) || math.IsInf(frac[c], 0) {
			return nil, fmt.Errorf("replica.NewClasses: fraction %d = %g, need finite ≥ 0", c, frac[c])
		}
		var key uint64
		for r, v := range p {
			if v != 1 && v != -1 {
				return nil, fmt.Errorf("replica.NewClasses: pattern %d entry %d = %g is not ±1", c, r, v)
			}
			if v*p[0] < 0 {
				key |= 1 << uint(r)
			}
		}
		j, ok := index[key]
		if !ok {
			j = len(cl.F)
			index[key] = j
			cl.F = append(cl.F, 0)
			for r := range p {
				cl.Sigma = append(cl.Sigma, p[r]*p[0])
			}
		}
		cl.F[j] += frac[c]
		total += frac[c]
	}
	if !(total > 0) {
		return nil, fmt.Errorf("replica.NewClasses: fractions sum to %g, need > 0", total)
	}
	// drop empty classes
	out := &Classes{K: k}
	for j, f := range cl.F {
		if f > 0 {
			out.F = append(out.F, f/total)
			out.Sigma = append(out.Sigma, cl.Sigma[j*k:(j+1)*k]...)
		}
	}
	return out, nil
}

// Overlap returns the K×K data overlap matrix x_kl = (1/N) Σ_i ξ^k_i ξ^l_i
// (Eq. 18), computed from the class table.
func (c *Classes) Overlap() *mat.SymDense {
	k := c.K
	x := mat.NewSymDense(k, nil)
	for a := 0; a < k; a++ {
		for b := a; b < k; b++ {
			s := 0.0
			for j, f := range c.F {
				s += f * c.Sigma[j*k+a] * c.Sigma[j*k+b]
			}
			x.SetSym(a, b, s)
		}
	}
	return x
}

// TopEigen returns the largest eigenvalue λ_max of the overlap matrix x and
// its unit eigenvector, oriented so that its entries sum to ≥ 0.
func (c *Classes) TopEigen() (float64, []float64, error) {
	var es mat.EigenSym
	if !es.Factorize(c.Overlap(), true) {
		return 0, nil, fmt.Errorf("replica: eigen-decomposition of the overlap matrix failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := len(vals) - 1
	v := mat.Col(nil, top, &vecs)
	s := 0.0
	for _, e := range v {
		s += e
	}
	if s < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
	return vals[top], v, nil
}

// Threshold returns the over-regularised threshold γ_c = λ_max(x)/K: for
// γ ≥ γ_c the trained weights vanish (Section V, N → ∞; at finite N the
// exact threshold is λ_max/K − 1/N).
func (c *Classes) Threshold() (float64, error) {
	l, _, err := c.TopEigen()
	if err != nil {
		return 0, err
	}
	return l / float64(c.K), nil
}
