package mapping

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Low-rank pairwise kernel of a hidden unit with a smooth CGF (ReLU).
//
// With scaled weights a_k (|a_k| ≤ A) the unit's pair term is the double
// Taylor series of its CGF g around x0,
//
//	T(a_k, a_l) = g(x0+a_k+a_l) − g(x0+a_k) − g(x0+a_l) + g(x0)
//	            = a_k a_l Σ_{p,q≥0} H_pq t_kᵖ t_lᵠ,   t = a/A,
//	H_pq = C(p+q+2, p+1) g_{p+q+2} A^{p+q}   (a Hankel-like matrix),
//
// converging like (2A/r)ⁿ at total order n (r: radius of convergence at
// x0). H is symmetric, so H = V Λ Vᵀ, and its eigenvalues decay about as
// fast as the terms (e.g. A = 0.45, x0 = 0: 0.37, 1e-3, 1e-4, 2e-6, …,
// 2e-15 at the 10th): keeping the eigenpairs above lowRankTol·|H_00| gives
// T(a_k, a_l) = Σ_i ±z_ki z_li with z_ki = a_k √|λ_i| Σ_p V_pi t_kᵖ, so the
// whole matrix J is a difference of two symmetric rank-R products
// Z₊Z₊ᵀ − Z₋Z₋ᵀ (BLAS Syrk), with R ≈ 3–12 per unit where the plain Taylor
// expansion in a_l needs 8–20 orders of Gemm. Because the factor a_k a_l is
// kept out of H, the error of every pair is relative to its own first-order
// term κ₂ a_k a_l (|t| ≤ 1, ‖(t⁰…t^L)‖² ≤ L+1): about lowRankTol times a
// small factor, i.e. a few units in the last place.

// lowRankTol is the eigenvalue cut, relative to |H_00| = κ₂, below which
// the eigenpairs of H are dropped (about 4 double-precision ulps; the
// eigensolver's own noise is ~1e-16·λ_max).
const lowRankTol = 0x1p-50

// seriesTol is the relative size of the last total order n kept in H.
const seriesTol = 1e-17

// lowRankFactor returns the coefficient matrix (L+1)×R (row-major, the
// positive-eigenvalue columns first, npos of them) of the factor
// polynomials of a unit with Taylor coefficients g at its base point and
// largest scaled weight A, or ok = false when the double series has not
// converged to seriesTol by total order maxJet (weights too large against
// the radius of convergence: the caller uses the four-point sums).
func lowRankFactor(g []float64, A float64) (basis []float64, rank, npos int, ok bool) {
	if g[2] == 0 || A == 0 {
		return nil, 0, 0, false
	}
	// Total order n contributes at most |g_n|(2ⁿ−2)A^{n−2} relative to the
	// first-order term 2|g_2| (Σ_{p+q=n} C(n,p) |a_k|^{p−1}|a_l|^{q−1}).
	last := 2
	apow := 1.0
	for n := 3; n <= maxJet; n++ {
		apow *= A
		if math.Abs(g[n])*(math.Pow(2, float64(n))-2)*apow/(2*math.Abs(g[2])) > seriesTol {
			last = n
		}
	}
	if last > maxJet-4 {
		return nil, 0, 0, false
	}
	size := last - 1 // p, q = 0..last−2
	h := mat.NewSymDense(size, nil)
	for p := 0; p < size; p++ {
		for q := p; p+q+2 <= last; q++ {
			h.SetSym(p, q, binom(p+q+2, p+1)*g[p+q+2]*math.Pow(A, float64(p+q)))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(h, true) {
		return nil, 0, 0, false
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	// Drop the eigenpairs with |λ| below the cut (a cumulative cut would
	// keep the eigensolver's noise, ~1e-16·λ_max per eigenvalue).
	idx := make([]int, size)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(vals[idx[a]]) < math.Abs(vals[idx[b]]) })
	cut := lowRankTol * math.Abs(h.At(0, 0))
	first := 0
	for first < size && math.Abs(vals[idx[first]]) <= cut {
		first++
	}
	kept := idx[first:]
	sort.SliceStable(kept, func(a, b int) bool { return vals[kept[a]] > 0 && vals[kept[b]] <= 0 })
	rank = len(kept)
	basis = make([]float64, size*rank)
	for c, i := range kept {
		if vals[i] > 0 {
			npos++
		}
		s := math.Sqrt(math.Abs(vals[i]))
		for p := 0; p < size; p++ {
			basis[p*rank+c] = s * vecs.At(p, i)
			if !isFinite(basis[p*rank+c]) {
				return nil, 0, 0, false
			}
		}
	}
	return basis, rank, npos, true
}

// lowRankChunk is the number of float64s of factor columns (N × columns)
// built before they are added to J (32 MiB).
const lowRankChunk = 1 << 22

// pairwiseLowRank adds the contributions of the prepLowRank units to the
// upper triangle of j: the factor columns of a batch of units are filled in
// parallel (workers.ForRanges, OpenBLAS single-threaded inside), then added
// as J += Z₊Z₊ᵀ − Z₋Z₋ᵀ (syrkUpper).
func (mp *Mapper) pairwiseLowRank(ctx context.Context, preps []unitPrep, j []float64) error {
	n := mp.n
	var units []int
	for mu := range preps {
		if preps[mu].mode == prepLowRank {
			units = append(units, mu)
		}
	}
	if len(units) == 0 {
		return nil
	}
	capCols := max(lowRankChunk/n, maxJet)
	var batches [][]int
	for b, cols := 0, 0; b < len(units); b++ {
		r := preps[units[b]].rank
		if len(batches) == 0 || cols+r > capCols {
			batches = append(batches, nil)
			cols = 0
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], units[b])
		cols += r
	}
	buf := make([]float64, n*capCols)
	for bi, batch := range batches {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mapping: Pairwise interrupted at batch %d of %d of hidden units: %w", bi+1, len(batches), err)
		}
		// Column offsets: positive parts first, then negative parts.
		offPos, offNeg := make([]int, len(batch)), make([]int, len(batch))
		cp, cn := 0, 0
		for i, mu := range batch {
			offPos[i] = cp
			cp += preps[mu].npos
		}
		for i, mu := range batch {
			offNeg[i] = cp + cn
			cn += preps[mu].rank - preps[mu].npos
		}
		cols := cp + cn
		z := blas64.General{Rows: n, Cols: cols, Stride: cols, Data: buf[:n*cols]}
		err := workers.ForRanges(len(batch), 1, func(i0, i1 int) error {
			var mono []float64
			for i := i0; i < i1; i++ {
				if ctx.Err() != nil {
					return nil
				}
				p := &preps[batch[i]]
				size := len(p.basis) / p.rank
				if cap(mono) < n*size {
					mono = make([]float64, n*size)
				}
				mono = mono[:n*size]
				for k, a := range p.y {
					t, x := a/p.amax, a
					if math.Abs(a) > p.amax {
						x = 0 // a site of p.large: elementwise pass
					}
					row := mono[k*size : (k+1)*size]
					for q := range row {
						row[q] = x
						x *= t
					}
				}
				mm := blas64.General{Rows: n, Cols: size, Stride: size, Data: mono}
				if p.npos > 0 {
					blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, mm,
						blas64.General{Rows: size, Cols: p.npos, Stride: p.rank, Data: p.basis},
						0, blas64.General{Rows: n, Cols: p.npos, Stride: cols, Data: z.Data[offPos[i]:]})
				}
				if nn := p.rank - p.npos; nn > 0 {
					blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, mm,
						blas64.General{Rows: size, Cols: nn, Stride: p.rank, Data: p.basis[p.npos:]},
						0, blas64.General{Rows: n, Cols: nn, Stride: cols, Data: z.Data[offNeg[i]:]})
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("mapping: Pairwise: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mapping: Pairwise interrupted at batch %d of %d of hidden units: %w", bi+1, len(batches), err)
		}
		if err := syrkUpper(1, blas64.General{Rows: n, Cols: cp, Stride: cols, Data: z.Data}, j); err != nil {
			return fmt.Errorf("mapping: Pairwise: %w", err)
		}
		if err := syrkUpper(-1, blas64.General{Rows: n, Cols: cn, Stride: cols, Data: z.Data[cp:]}, j); err != nil {
			return fmt.Errorf("mapping: Pairwise: %w", err)
		}
		if mp.Progress != nil {
			mp.Progress(bi+1, len(batches))
		}
	}
	return nil
}

// syrkUpper adds alpha·Z Zᵀ to the upper triangle of the N×N row-major j
// (N = z.Rows). The rows are split into blocks of about equal work (a
// diagonal Syrk block and a Gemm block to its right each), run on their own
// goroutines by workers.ForRanges with OpenBLAS single-threaded inside: on
// the shared 2-core machine OpenBLAS's own threads spin while waiting for
// each other, and the pure-Go backend's Syrk is not parallel at all.
func syrkUpper(alpha float64, z blas64.General, j []float64) error {
	n := z.Rows
	if n == 0 || z.Cols == 0 {
		return nil
	}
	// Rows [0, k) hold k·n − k(k−1)/2 entries of the upper triangle.
	parts := min(8*runtime.GOMAXPROCS(0), n)
	bounds := []int{0}
	nf := float64(n)
	for c := 1; c < parts; c++ {
		target := nf * (nf + 1) / 2 * float64(c) / float64(parts)
		k := int(math.Round(((2*nf + 1) - math.Sqrt((2*nf+1)*(2*nf+1)-8*target)) / 2))
		if k > bounds[len(bounds)-1] && k < n {
			bounds = append(bounds, k)
		}
	}
	bounds = append(bounds, n)
	return workers.ForRanges(len(bounds)-1, 1, func(c0, c1 int) error {
		for c := c0; c < c1; c++ {
			k0, k1 := bounds[c], bounds[c+1]
			top := blas64.General{Rows: k1 - k0, Cols: z.Cols, Stride: z.Stride, Data: z.Data[k0*z.Stride:]}
			blas64.Syrk(blas.NoTrans, alpha, top, 1, blas64.Symmetric{Uplo: blas.Upper, N: k1 - k0, Stride: n, Data: j[k0*n+k0:]})
			if k1 < n {
				rest := blas64.General{Rows: n - k1, Cols: z.Cols, Stride: z.Stride, Data: z.Data[k1*z.Stride:]}
				blas64.Gemm(blas.NoTrans, blas.Trans, alpha, top, rest, 1,
					blas64.General{Rows: k1 - k0, Cols: n - k1, Stride: n, Data: j[k0*n+k1:]})
			}
		}
		return nil
	})
}
