// Package analysis reads data sets and trained RBMs the way the seed papers
// do: covariance spectra and PCA against the Marchenko–Pastur noise edge
// (seed 004), singular values and rank of weight matrices, the
// representation proxies of seed 000's annex (participation ratios PR_e,
// weight sparsity p, number of strongly activated hidden units L, overlaps
// O_µν and O_max, duplicate-weighted PR), k-means of hidden-unit weight
// vectors with the variance explained against the number of clusters
// (seed 003 Fig. 3), and FastICA for seed 000's comparisons.
//
// Conventions: data matrices have one sample per row; weight matrices are
// N×M (or (N·q)×M for Potts visible units, row i*q+a) as in package rbm, so
// hidden unit µ is column µ.
//
// The iterative methods (KMeans, VarianceExplained, FastICA) check their
// context between iterations and read a nil one as rbm.DefaultContext().
package analysis

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Covariance returns the N×N (weighted) second-moment matrix of the rows of
// x: C = Σ_s w_s (x_s − m)(x_s − m)ᵀ / Σ_s w_s, with m the weighted mean when
// centre is true and m = 0 otherwise (seed 004 Eq. 24 uses the uncentred
// form for ±1 data). weights may be nil (all 1).
func Covariance(x *mat.Dense, weights []float64, centre bool) (*mat.SymDense, error) {
	rows, cols := x.Dims()
	if weights != nil && len(weights) != rows {
		return nil, fmt.Errorf("analysis: Covariance: %d weights for %d rows", len(weights), rows)
	}
	mean := make([]float64, cols)
	tot := 0.0
	for r := 0; r < rows; r++ {
		w := 1.0
		if weights != nil {
			w = weights[r]
		}
		tot += w
		if centre {
			for c, v := range x.RawRowView(r) {
				mean[c] += w * v
			}
		}
	}
	if !(tot > 0) {
		return nil, fmt.Errorf("analysis: Covariance: total weight %v, want > 0", tot)
	}
	for c := range mean {
		mean[c] /= tot
	}
	y := mat.NewDense(rows, cols, nil)
	for r := 0; r < rows; r++ {
		w := 1.0
		if weights != nil {
			w = weights[r]
		}
		sw := math.Sqrt(w / tot)
		yr := y.RawRowView(r)
		for c, v := range x.RawRowView(r) {
			yr[c] = sw * (v - mean[c])
		}
	}
	cov := mat.NewSymDense(cols, nil)
	cov.SymOuterK(1, y.T())
	return cov, nil
}

// PCAResult holds the principal components of a data matrix.
type PCAResult struct {
	// Values are the covariance eigenvalues in decreasing order.
	Values []float64
	// Components has the matching unit eigenvectors as columns (N×k).
	Components *mat.Dense
	// Mean is the column mean subtracted before projection (zeros when the
	// analysis was uncentred).
	Mean []float64
}

// PCA returns the k leading principal components of the rows of x
// (covariance eigendecomposition; k ≤ 0 keeps all). centre subtracts the
// column means first.
func PCA(x *mat.Dense, k int, centre bool) (*PCAResult, error) {
	cov, err := Covariance(x, nil, centre)
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
	res := &PCAResult{Values: make([]float64, k), Components: mat.NewDense(n, k, nil), Mean: make([]float64, n)}
	for j := 0; j < k; j++ { // EigenSym returns ascending values
		res.Values[j] = vals[n-1-j]
		for i := 0; i < n; i++ {
			res.Components.Set(i, j, vecs.At(i, n-1-j))
		}
	}
	if centre {
		rows, _ := x.Dims()
		for r := 0; r < rows; r++ {
			for c, v := range x.RawRowView(r) {
				res.Mean[c] += v / float64(rows)
			}
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

// Spectrum returns all eigenvalues of the covariance of the rows of x in
// decreasing order (see Covariance for centre).
func Spectrum(x *mat.Dense, centre bool) ([]float64, error) {
	cov, err := Covariance(x, nil, centre)
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
// variables of variance σ², r = N/S, as N, S → ∞ (seed 004 Eq. 25: the noise
// edge (1+√r)² for ±1 data). For Potts one-hot data normalised as in seed 004
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
// largest one (seed 003 counts "non-zero" singular values with tol ≈ 0.02).
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
