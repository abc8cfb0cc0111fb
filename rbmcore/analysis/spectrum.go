// Package analysis reads data sets and trained RBMs the way the papers
// rbmcore reproduces do: covariance spectra and PCA against the
// Marchenko–Pastur noise edge [HTCM20], singular values and rank of weight
// matrices, the representation proxies of [TCM19] (participation ratios
// PR_e, weight sparsity p, number of strongly activated hidden units L,
// overlaps O_µν and O_max, duplicate-weighted PR), k-means of hidden-unit
// weight vectors with the variance explained against the number of
// clusters [ES] (Fig. 3), and FastICA for the comparisons of [TCM19].
//
// References (equation and figure numbers in the docs are theirs):
//
//   - [TCM19] Tubiana, Cocco & Monasson 2019, "Learning compositional
//     representations of interacting systems with restricted Boltzmann
//     machines: comparative study of lattice proteins", Neural Computation.
//   - [HTCM20] Harsh, Tubiana, Cocco & Monasson 2020, "'Place-cell' emergence
//     and learning of invariant data with restricted Boltzmann machines",
//     J. Phys. A 53, 174002.
//   - [ES] "Exact solution of RBMs trained on structured data in the
//     undersampled regime" (the replica paper of package replica; the text
//     we work from names no authors or year).
//
// Conventions: data matrices have one sample per row; weight matrices are
// N×M (or (N·q)×M for Potts visible units, row i*q+a) as in package rbm, so
// hidden unit µ is column µ.
//
// The long computations (Covariance, PCA and Spectrum on many rows, KMeans,
// VarianceExplained, FastICA) take a context first and check it between
// blocks of rows or iterations; a nil context is context.Background().
// Their knobs are option structs whose zero value is the usual choice.
package analysis

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// CovarianceOptions configures Covariance, PCA and Spectrum. The zero value
// centres the data on their (weighted) column means and weights every row 1.
type CovarianceOptions struct {
	// Weights holds one non-negative weight per row; nil weights every row 1.
	Weights []float64
	// Uncentred takes second moments about 0 instead of the mean, as
	// [HTCM20] Eq. 24 does for ±1 data.
	Uncentred bool
}

// covBlock is the number of rows added to the covariance per rank update;
// the context is checked between blocks.
const covBlock = 2048

// Covariance returns the N×N (weighted) second-moment matrix of the rows of
// x: C = Σ_s w_s (x_s − m)(x_s − m)ᵀ / Σ_s w_s, with m the weighted column
// mean, or m = 0 with opts.Uncentred. It stops when ctx is cancelled.
func Covariance(ctx context.Context, x *mat.Dense, opts CovarianceOptions) (*mat.SymDense, error) {
	cov, _, err := covariance(ctx, x, opts, "Covariance")
	return cov, err
}

// covariance returns Covariance and the mean m it subtracted; who names the
// exported caller in errors.
func covariance(ctx context.Context, x *mat.Dense, opts CovarianceOptions, who string) (*mat.SymDense, []float64, error) {
	ctx = rbm.ContextOrDefault(ctx)
	rows, cols := x.Dims()
	weights := opts.Weights
	if weights != nil && len(weights) != rows {
		return nil, nil, fmt.Errorf("analysis: %s: %d weights for %d rows", who, len(weights), rows)
	}
	mean := make([]float64, cols)
	tot := 0.0
	for r := 0; r < rows; r++ {
		w := 1.0
		if weights != nil {
			w = weights[r]
			if !(w >= 0) || math.IsInf(w, 1) {
				return nil, nil, fmt.Errorf("analysis: %s: Weights[%d] = %v, want finite and ≥ 0", who, r, w)
			}
		}
		tot += w
		if !opts.Uncentred {
			for c, v := range x.RawRowView(r) {
				mean[c] += w * v
			}
		}
	}
	if !(tot > 0) {
		return nil, nil, fmt.Errorf("analysis: %s: total weight %v, want > 0", who, tot)
	}
	for c := range mean {
		mean[c] /= tot
	}
	cov := mat.NewSymDense(cols, nil)
	y := mat.NewDense(min(rows, covBlock), cols, nil)
	for r0 := 0; r0 < rows; r0 += covBlock {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("analysis: %s: interrupted after %d of %d rows: %w", who, r0, rows, err)
		}
		r1 := min(r0+covBlock, rows)
		yb := y.Slice(0, r1-r0, 0, cols).(*mat.Dense)
		for r := r0; r < r1; r++ {
			w := 1.0
			if weights != nil {
				w = weights[r]
			}
			sw := math.Sqrt(w / tot)
			yr := yb.RawRowView(r - r0)
			for c, v := range x.RawRowView(r) {
				yr[c] = sw * (v - mean[c])
			}
		}
		cov.SymRankK(cov, 1, yb.T())
	}
	return cov, mean, nil
}

// PCAResult holds the principal components of a data matrix.
type PCAResult struct {
	// Values are the covariance eigenvalues in decreasing order.
	Values []float64
	// Components has the matching unit eigenvectors as columns (N×k).
	Components *mat.Dense
	// Mean is the (weighted) column mean subtracted before projection
	// (zeros when the analysis was uncentred).
	Mean []float64
}

// PCA returns the k leading principal components of the rows of x
// (eigendecomposition of Covariance with opts; k ≤ 0 keeps all). It stops
// when ctx is cancelled before the eigendecomposition.
func PCA(ctx context.Context, x *mat.Dense, k int, opts CovarianceOptions) (*PCAResult, error) {
	cov, mean, err := covariance(ctx, x, opts, "PCA")
	if err != nil {
		return nil, err
	}
	n := cov.SymmetricDim()
	var es mat.EigenSym
	if !es.Factorize(cov, true) {
		return nil, fmt.Errorf("analysis: PCA: eigendecomposition of the %d×%d covariance failed", n, n)
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	if k <= 0 || k > n {
		k = n
	}
	res := &PCAResult{Values: make([]float64, k), Components: mat.NewDense(n, k, nil), Mean: mean}
	for j := 0; j < k; j++ { // EigenSym returns ascending values
		res.Values[j] = vals[n-1-j]
		for i := 0; i < n; i++ {
			res.Components.Set(i, j, vecs.At(i, n-1-j))
		}
	}
	return res, nil
}

// Project returns the coordinates of the rows of x on the components
// (B×k), after subtracting Mean.
func (p *PCAResult) Project(x *mat.Dense) *mat.Dense {
	rows, cols := x.Dims()
	y := mat.NewDense(rows, cols, nil)
	for r := 0; r < rows; r++ {
		yr := y.RawRowView(r)
		for c, v := range x.RawRowView(r) {
			yr[c] = v - p.Mean[c]
		}
	}
	_, k := p.Components.Dims()
	out := mat.NewDense(rows, k, nil)
	out.Mul(y, p.Components)
	return out
}

// Spectrum returns all eigenvalues of Covariance(ctx, x, opts) in
// decreasing order.
func Spectrum(ctx context.Context, x *mat.Dense, opts CovarianceOptions) ([]float64, error) {
	cov, _, err := covariance(ctx, x, opts, "Spectrum")
	if err != nil {
		return nil, err
	}
	var es mat.EigenSym
	if !es.Factorize(cov, false) {
		return nil, fmt.Errorf("analysis: Spectrum: eigendecomposition failed")
	}
	v := es.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(v)))
	return v, nil
}

// MarchenkoPasturEdges returns the edges σ²(1 ∓ √r)² of the Marchenko–Pastur
// law: the spectrum of the sample covariance of S samples of N independent
// variables of variance σ², r = N/S, as N, S → ∞ ([HTCM20] Eq. 25: the noise
// edge (1+√r)² for ±1 data). For Potts one-hot data normalised as in [HTCM20]
// B3.2 use σ² = P/(P−1) and aspect ratio r(P−1).
func MarchenkoPasturEdges(r, sigma2 float64) (lo, hi float64) {
	s := math.Sqrt(r)
	return sigma2 * (1 - s) * (1 - s), sigma2 * (1 + s) * (1 + s)
}

// MarchenkoPasturDensity returns the continuous part of the Marchenko–Pastur
// eigenvalue density at λ, √((λ₊−λ)(λ−λ₋)) / (2π σ² r λ); for r > 1 there is
// in addition an atom of mass 1 − 1/r at 0, not included.
func MarchenkoPasturDensity(lambda, r, sigma2 float64) float64 {
	lo, hi := MarchenkoPasturEdges(r, sigma2)
	if lambda <= lo || lambda >= hi || lambda <= 0 {
		return 0
	}
	return math.Sqrt((hi-lambda)*(lambda-lo)) / (2 * math.Pi * sigma2 * r * lambda)
}

// SingularValues returns the singular values of w in decreasing order.
func SingularValues(w mat.Matrix) ([]float64, error) {
	var svd mat.SVD
	if !svd.Factorize(w, mat.SVDNone) {
		return nil, fmt.Errorf("analysis: SingularValues: SVD failed")
	}
	return svd.Values(nil), nil
}

// Rank returns the number of singular values of w larger than tol times the
// largest one ([ES] counts "non-zero" singular values with tol ≈ 0.02).
func Rank(w mat.Matrix, tol float64) (int, error) {
	sv, err := SingularValues(w)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range sv {
		if len(sv) > 0 && s > tol*sv[0] {
			n++
		}
	}
	return n, nil
}
