package analysis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// PR returns the participation ratio of order e ([TCM19] Eq. 21),
// PR_e(x) = (Σ_i |x_i|^e)² / Σ_i |x_i|^{2e}: K for a vector with K non-zero
// entries of equal modulus, invariant under scaling. It is 0 for a zero
// vector.
func PR(x []float64, e float64) float64 {
	num, den := 0.0, 0.0
	for _, v := range x {
		a := math.Pow(math.Abs(v), e)
		num += a
		den += a * a
	}
	if den == 0 {
		return 0
	}
	return num * num / den
}

// WeightedPR returns the duplicate-corrected participation ratio of [TCM19]
// Eq. 26, (Σ_µ ω_µ|h_µ|^e)² / Σ_µ ω_µ|h_µ|^{2e} (see DuplicateWeights).
func WeightedPR(h, omega []float64, e float64) float64 {
	num, den := 0.0, 0.0
	for k, v := range h {
		a := math.Pow(math.Abs(v), e)
		num += omega[k] * a
		den += omega[k] * a * a
	}
	if den == 0 {
		return 0
	}
	return num * num / den
}

// Sparsity returns the weight sparsity of [TCM19] Eq. 22: for each hidden
// unit µ, p_µ = PR₂(w^S_µ)/N with w^S_iµ = √(Σ_a w_iµ(a)²) (the per-site norm
// over the q Potts states; q = 1 for scalar visible units), and the mean
// p = (1/M) Σ_µ p_µ. w is (N·q)×M with row i*q+a. Apply the zero-sum gauge
// to Potts weights first: p is gauge dependent.
func Sparsity(w *mat.Dense, q int) (p float64, perUnit []float64, err error) {
	rows, m := w.Dims()
	if q < 1 || rows%q != 0 {
		return 0, nil, fmt.Errorf("analysis: Sparsity: %d weight rows is not a multiple of q = %d", rows, q)
	}
	n := rows / q
	perUnit = make([]float64, m)
	ws := make([]float64, n)
	for mu := 0; mu < m; mu++ {
		for i := 0; i < n; i++ {
			s := 0.0
			for a := 0; a < q; a++ {
				v := w.At(i*q+a, mu)
				s += v * v
			}
			ws[i] = math.Sqrt(s)
		}
		perUnit[mu] = PR(ws, 2) / float64(n)
		p += perUnit[mu] / float64(m)
	}
	return p, perUnit, nil
}

// ActivatedUnits returns, for each row of h (B×M hidden activities, e.g. the
// conditional means ⟨h_µ|v⟩ of the data), the number of strongly activated
// hidden units L = PR₃(|h − h⁰|) of [TCM19] Eqs. 23–24. h0 is the rest
// activity (nil for ReLU units: L = PR₃(h); for dReLU pass DataMode(h, 100)).
func ActivatedUnits(h *mat.Dense, h0 []float64) []float64 {
	return activated(h, h0, nil)
}

// ActivatedUnitsWeighted returns, for each row of h, the number of strongly
// activated hidden units corrected for duplicates, the weighted participation
// ratio PR₃(|h − h⁰|, ω) of [TCM19] Eq. 26, with ω from DuplicateWeights: a
// group of units with (nearly) identical weights counts as one unit. h and h0
// are as for ActivatedUnits; omega must have one entry per column of h.
func ActivatedUnitsWeighted(h *mat.Dense, h0, omega []float64) []float64 {
	if _, m := h.Dims(); len(omega) != m {
		panic(fmt.Sprintf("analysis: ActivatedUnitsWeighted: %d duplicate weights for %d hidden units", len(omega), m))
	}
	return activated(h, h0, omega)
}

// activated is PR₃(|h − h⁰|) per row of h, weighted by omega unless it is nil.
func activated(h *mat.Dense, h0, omega []float64) []float64 {
	b, m := h.Dims()
	out := make([]float64, b)
	d := make([]float64, m)
	for r := 0; r < b; r++ {
		for mu, v := range h.RawRowView(r) {
			if h0 != nil {
				v -= h0[mu]
			}
			d[mu] = v
		}
		if omega == nil {
			out[r] = PR(d, 3)
		} else {
			out[r] = WeightedPR(d, omega, 3)
		}
	}
	return out
}

// DataMode returns, for each column of h, the centre of the most populated
// of `bins` equal-width histogram bins of its values: the estimate of
// h⁰_µ = argmax P_data(h_µ) used for dReLU units in [TCM19] Eq. 24 (the
// paper does not say how it was estimated; 100 bins is our choice).
func DataMode(h *mat.Dense, bins int) []float64 {
	b, m := h.Dims()
	out := make([]float64, m)
	counts := make([]int, bins)
	for mu := 0; mu < m; mu++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for r := 0; r < b; r++ {
			lo, hi = math.Min(lo, h.At(r, mu)), math.Max(hi, h.At(r, mu))
		}
		if hi == lo {
			out[mu] = lo
			continue
		}
		clear(counts)
		width := (hi - lo) / float64(bins)
		for r := 0; r < b; r++ {
			k := min(int((h.At(r, mu)-lo)/width), bins-1)
			counts[k]++
		}
		best := 0
		for k := range counts {
			if counts[k] > counts[best] {
				best = k
			}
		}
		out[mu] = lo + (float64(best)+0.5)*width
	}
	return out
}

// Overlaps returns the M×M matrix of normalised weight overlaps of [TCM19]
// Eq. 25, O_µν = Σ_{i,a} w_iµ(a) w_iν(a) / √(Σ w_µ² Σ w_ν²), for the columns
// of w (N×M or (N·q)×M). A zero column has zero overlaps (O_µµ = 0).
func Overlaps(w *mat.Dense) *mat.SymDense {
	_, m := w.Dims()
	g := mat.NewSymDense(m, nil)
	g.SymOuterK(1, w.T())
	o := mat.NewSymDense(m, nil)
	for mu := 0; mu < m; mu++ {
		for nu := mu; nu < m; nu++ {
			den := math.Sqrt(g.At(mu, mu) * g.At(nu, nu))
			if den > 0 {
				o.SetSym(mu, nu, g.At(mu, nu)/den)
			}
		}
	}
	return o
}

// MaxOverlaps returns O^max_µ = max_{ν≠µ} |O_µν| for each unit.
func MaxOverlaps(o *mat.SymDense) []float64 {
	m := o.SymmetricDim()
	out := make([]float64, m)
	for mu := 0; mu < m; mu++ {
		for nu := 0; nu < m; nu++ {
			if nu != mu {
				out[mu] = math.Max(out[mu], math.Abs(o.At(mu, nu)))
			}
		}
	}
	return out
}

// DuplicateWeights returns ω_µ = 1/#{ν : |O_µν| > threshold} (µ itself
// included, so two identical units get ½ each), the weights of WeightedPR
// ([TCM19] Eq. 26 uses threshold 0.9).
func DuplicateWeights(o *mat.SymDense, threshold float64) []float64 {
	m := o.SymmetricDim()
	out := make([]float64, m)
	for mu := 0; mu < m; mu++ {
		n := 1
		for nu := 0; nu < m; nu++ {
			if nu != mu && math.Abs(o.At(mu, nu)) > threshold {
				n++
			}
		}
		out[mu] = 1 / float64(n)
	}
	return out
}
