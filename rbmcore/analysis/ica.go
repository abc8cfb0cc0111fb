package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// ICAResult is the output of FastICA.
type ICAResult struct {
	// Sources holds the estimated independent components (B×k), with unit
	// variance.
	Sources *mat.Dense
	// Unmixing maps centred data to sources: Sources = (X − Mean)·Unmixingᵀ (k×N).
	Unmixing *mat.Dense
	// Mixing is the pseudo-inverse of Unmixing (N×k): X − Mean ≈ Sources·Mixingᵀ.
	Mixing *mat.Dense
	// Mean is the column mean of the data.
	Mean []float64
	// Iterations is the number of fixed-point iterations done.
	Iterations int
	// Converged reports whether the tolerance was reached within the
	// iteration limit.
	Converged bool
}

// ICAOptions configures FastICA. The zero value is scikit-learn's default
// (200 iterations, tolerance 1e-4) with random stream 0.
type ICAOptions struct {
	// MaxIter bounds the fixed-point iterations; 0 means 200.
	MaxIter int
	// Tol is the convergence tolerance on max |1 − |diag(W_new W_oldᵀ)||;
	// 0 means 1e-4.
	Tol float64
	// Seed selects the random stream of the initial unmixing matrix.
	Seed uint64
}

// FastICA extracts k independent components from the rows of x (B samples
// × N features) with the symmetric (parallel) FastICA fixed-point algorithm
// and the log-cosh contrast g(u) = tanh u, as scikit-learn's default used
// in the comparison of [TCM19]: centre, whiten onto the k leading principal
// components, iterate W ← E[g(WZ)Zᵀ] − diag(E[g′(WZ)])W followed by
// symmetric decorrelation W ← (WWᵀ)^{-1/2}W until
// max |1 − |diag(W_new W_oldᵀ)|| < opts.Tol. ctx is checked at every
// iteration.
func FastICA(ctx context.Context, x *mat.Dense, k int, opts ICAOptions) (*ICAResult, error) {
	ctx = rbm.ContextOrDefault(ctx)
	maxIter, tol := opts.MaxIter, opts.Tol
	if maxIter == 0 {
		maxIter = 200
	}
	if tol == 0 {
		tol = 1e-4
	}
	if maxIter < 0 || !(tol > 0) {
		return nil, fmt.Errorf("analysis: FastICA: MaxIter = %d, Tol = %v: want MaxIter ≥ 0 and Tol ≥ 0", opts.MaxIter, opts.Tol)
	}
	b, n := x.Dims()
	if k < 1 || k > n {
		return nil, fmt.Errorf("analysis: FastICA: k = %d, want 1..%d", k, n)
	}
	pca, err := PCA(ctx, x, k, CovarianceOptions{})
	if err != nil {
		return nil, err
	}
	for j, v := range pca.Values {
		if !(v > 1e-12*pca.Values[0]) {
			return nil, fmt.Errorf("analysis: FastICA: component %d has variance %v; the data have rank < k = %d", j, v, k)
		}
	}
	// Whitening matrix K (k×N): rows e_j/√λ_j; Z = (X − m) Kᵀ has identity covariance.
	kw := mat.NewDense(k, n, nil)
	for j := 0; j < k; j++ {
		s := 1 / math.Sqrt(pca.Values[j])
		for i := 0; i < n; i++ {
			kw.Set(j, i, pca.Components.At(i, j)*s)
		}
	}
	xc := mat.NewDense(b, n, nil)
	for r := 0; r < b; r++ {
		for c, v := range x.RawRowView(r) {
			xc.Set(r, c, v-pca.Mean[c])
		}
	}
	z := mat.NewDense(b, k, nil)
	z.Mul(xc, kw.T())

	rng := rand.New(rand.NewPCG(opts.Seed, 0x1ca))
	w := mat.NewDense(k, k, nil)
	for i := range w.RawMatrix().Data {
		w.RawMatrix().Data[i] = rng.NormFloat64()
	}
	if err := symDecorrelate(w); err != nil {
		return nil, err
	}
	u := mat.NewDense(b, k, nil)
	gz := mat.NewDense(k, k, nil)
	res := &ICAResult{Mean: pca.Mean}
	for res.Iterations = 1; res.Iterations <= maxIter; res.Iterations++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("analysis: FastICA: %w", err)
		}
		u.Mul(z, w.T()) // u[s][c] = w_c · z_s
		dg := make([]float64, k)
		raw := u.RawMatrix()
		for s := 0; s < b; s++ {
			row := raw.Data[s*raw.Stride : s*raw.Stride+k]
			for c, v := range row {
				t := math.Tanh(v)
				row[c] = t
				dg[c] += 1 - t*t
			}
		}
		gz.Mul(u.T(), z) // k×k: E[g(wz) zᵀ]·B
		wn := mat.NewDense(k, k, nil)
		for c := 0; c < k; c++ {
			for j := 0; j < k; j++ {
				wn.Set(c, j, (gz.At(c, j)-dg[c]*w.At(c, j))/float64(b))
			}
		}
		if err := symDecorrelate(wn); err != nil {
			return nil, err
		}
		lim := 0.0
		for c := 0; c < k; c++ {
			d := 0.0
			for j := 0; j < k; j++ {
				d += wn.At(c, j) * w.At(c, j)
			}
			lim = math.Max(lim, math.Abs(math.Abs(d)-1))
		}
		w = wn
		if lim < tol {
			res.Converged = true
			break
		}
	}
	res.Iterations = min(res.Iterations, maxIter)
	res.Unmixing = mat.NewDense(k, n, nil)
	res.Unmixing.Mul(w, kw)
	res.Sources = mat.NewDense(b, k, nil)
	res.Sources.Mul(xc, res.Unmixing.T())
	// Mixing = pseudo-inverse of the unmixing matrix: Kᵀ⁺ Wᵀ = (E Λ^{1/2}) Wᵀ.
	res.Mixing = mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			s := 0.0
			for j := 0; j < k; j++ {
				s += pca.Components.At(i, j) * math.Sqrt(pca.Values[j]) * w.At(c, j)
			}
			res.Mixing.Set(i, c, s)
		}
	}
	return res, nil
}

// symDecorrelate replaces w by (wwᵀ)^{-1/2} w.
func symDecorrelate(w *mat.Dense) error {
	k, _ := w.Dims()
	s := mat.NewSymDense(k, nil)
	s.SymOuterK(1, w)
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return fmt.Errorf("analysis: FastICA: decorrelation eigendecomposition failed")
	}
	vals := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	inv := mat.NewDense(k, k, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			t := 0.0
			for l := 0; l < k; l++ {
				if !(vals[l] > 0) {
					return fmt.Errorf("analysis: FastICA: singular unmixing matrix (eigenvalue %v)", vals[l])
				}
				t += v.At(i, l) * v.At(j, l) / math.Sqrt(vals[l])
			}
			inv.Set(i, j, t)
		}
	}
	w.Mul(inv, mat.DenseCopyOf(w))
	return nil
}
