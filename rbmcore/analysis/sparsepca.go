package analysis

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// SparsePCAOptions controls SparsePCA. The zero value extracts one
// component without penalty (the leading principal component), with up to
// 1000 iterations to a tolerance of 1e-9.
type SparsePCAOptions struct {
	// Components is the number of components k; 0 means 1.
	Components int
	// Penalty is the L1 penalty λ ≥ 0 of every rank-one problem, in the
	// units of the covariance (see SparsePCA); 0 means none (plain PCA).
	Penalty float64
	// MaxIter bounds the iterations per component; 0 means 1000.
	MaxIter int
	// Tol is the convergence threshold on max_i |v_i − v_i(previous)|;
	// 0 means 1e-9.
	Tol float64
	// Progress, when set, is called after each component with the number
	// done and k.
	Progress func(done, total int)
}

// SparsePCAResult holds the output of SparsePCA.
type SparsePCAResult struct {
	// Components holds the unit-norm sparse loadings as columns (N×k).
	Components *mat.Dense
	// Variances are vᵀ C v for each component v, with C the covariance of
	// the data (not the deflated one): the variance of the latent factor.
	Variances []float64
	// Mean is the column mean subtracted from the data.
	Mean []float64
	// Iterations counts the iterations of each component.
	Iterations []int
	// Converged reports, per component, whether Tol was reached.
	Converged []bool
}

// SparsePCA extracts k sparse principal components of the rows of x
// (B samples × N features), centred, by the penalised power method with
// projection deflation (Witten, Tibshirani & Hastie 2009, the symmetric
// case of their penalised matrix decomposition; Mackey 2009 for the
// deflation). With C the covariance, each component maximises
//
//	vᵀ C v − 2λ ‖v‖₁   subject to ‖v‖₂ = 1
//
// by the minorise–maximise iteration v ← S(Cv, λ)/‖S(Cv, λ)‖₂, where
// S(u, λ)_i = sign(u_i) max(|u_i| − λ, 0) is soft thresholding: since vᵀCv
// is convex, its tangent at the current v is a lower bound whose penalised
// maximum on the unit ball is that normalised soft threshold, so every
// step raises the objective (the fixed point satisfies v ∝ S(Cv, λ)). The
// iteration starts from the leading eigenvector of the deflated covariance
// (found by the plain power method, λ = 0), so that λ = 0 gives the
// principal components. When λ ≥ max_i |(Cv)_i| the threshold removes
// every entry, and the component is the unit vector of the largest
// |(Cv)_i|. After each component v the covariance is deflated by the
// projection C ← (I − vvᵀ) C (I − vvᵀ), which keeps it positive
// semi-definite and makes the next component orthogonal to v when λ = 0.
//
// Tubiana, Cocco & Monasson 2019 (§IV, Table II) fit sparse PCA as a
// tied-weight linear autoencoder with an L1 penalty; both are L1-penalised
// versions of the same variance-maximisation problem. The sign of each
// component is fixed so that its largest entry is positive.
func SparsePCA(ctx context.Context, x *mat.Dense, opts SparsePCAOptions) (*SparsePCAResult, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if !(opts.Penalty >= 0) || math.IsInf(opts.Penalty, 0) {
		return nil, fmt.Errorf("analysis: SparsePCA: option Penalty = %v, want a finite value ≥ 0", opts.Penalty)
	}
	f, err := newSparsePCAFit(ctx, x, opts)
	if err != nil {
		return nil, fmt.Errorf("analysis: SparsePCA: %w", err)
	}
	res, err := f.run(ctx, opts.Penalty)
	if err != nil {
		return nil, fmt.Errorf("analysis: SparsePCA: %w", err)
	}
	return res, nil
}

// sparsePCAFit is the covariance and the column means of SparsePCA's data,
// with its options but the penalty checked and defaulted: what fits at
// several penalties share.
type sparsePCAFit struct {
	cov      *mat.SymDense
	mean     []float64
	k        int
	maxIter  int
	tol      float64
	progress func(done, total int)
}

func newSparsePCAFit(ctx context.Context, x *mat.Dense, opts SparsePCAOptions) (*sparsePCAFit, error) {
	if x == nil {
		return nil, fmt.Errorf("nil data")
	}
	b, n := x.Dims()
	f := &sparsePCAFit{k: opts.Components, maxIter: opts.MaxIter, tol: opts.Tol, progress: opts.Progress}
	if f.k == 0 {
		f.k = 1
	}
	switch {
	case b < 2:
		return nil, fmt.Errorf("%d rows, want at least 2", b)
	case f.k < 1 || f.k > n:
		return nil, fmt.Errorf("option Components = %d, want 1..%d (the number of columns)", opts.Components, n)
	case opts.MaxIter < 0:
		return nil, fmt.Errorf("option MaxIter = %d, want ≥ 0", opts.MaxIter)
	case !(opts.Tol >= 0):
		return nil, fmt.Errorf("option Tol = %v, want ≥ 0", opts.Tol)
	}
	if f.maxIter == 0 {
		f.maxIter = 1000
	}
	if f.tol == 0 {
		f.tol = 1e-9
	}
	var err error
	if f.cov, err = Covariance(ctx, x, CovarianceOptions{}); err != nil {
		return nil, err
	}
	f.mean = make([]float64, n)
	for r := 0; r < b; r++ {
		floats.AddScaled(f.mean, 1/float64(b), x.RawRowView(r))
	}
	return f, nil
}

// run extracts the components with the L1 penalty; f.cov is not modified.
func (f *sparsePCAFit) run(ctx context.Context, penalty float64) (*SparsePCAResult, error) {
	n, k, cov := f.cov.SymmetricDim(), f.k, f.cov
	res := &SparsePCAResult{Components: mat.NewDense(n, k, nil), Variances: make([]float64, k),
		Mean: append([]float64(nil), f.mean...), Iterations: make([]int, k), Converged: make([]bool, k)}
	c := mat.NewSymDense(n, nil)
	c.CopySym(cov)
	v, prev, u := mat.NewVecDense(n, nil), make([]float64, n), mat.NewVecDense(n, nil)
	for j := 0; j < k; j++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interrupted after %d of %d components: %w", j, k, err)
		}
		// Start: the leading eigenvector of the deflated covariance.
		start(c, v, u)
		if _, _, err := iterate(ctx, c, v, u, prev, 0, min(f.maxIter, warmUp), f.tol); err != nil {
			return nil, fmt.Errorf("component %d: %w", j+1, err)
		}
		it, ok, err := iterate(ctx, c, v, u, prev, penalty, f.maxIter, f.tol)
		if err != nil {
			return nil, fmt.Errorf("component %d: %w", j+1, err)
		}
		vr := v.RawVector().Data
		if floats.Max(vr) < -floats.Min(vr) {
			floats.Scale(-1, vr)
		}
		res.Components.SetCol(j, vr)
		res.Variances[j] = mat.Inner(v, cov, v)
		res.Iterations[j], res.Converged[j] = it, ok
		deflate(c, v, u)
		if f.progress != nil {
			f.progress(j+1, k)
		}
	}
	return res, nil
}

// SparsityTarget is the sparsity to which SparsePCAMatched tunes the
// penalty. Median must be set; each other field's zero value selects its
// default.
type SparsityTarget struct {
	// Median is the median weight sparsity p_µ (Sparsity; Tubiana, Cocco &
	// Monasson 2019, Eq. 22) of the components to reach, in (0, 1]. The
	// median of an even number of components is the upper one, the
	// (k/2+1)-th smallest.
	Median float64
	// Q is the number of Potts states per site, as in Sparsity; 0 means 1.
	Q int
	// Low and High bracket the penalty; 0 means 1e-5 and 1e-1.
	Low, High float64
	// Steps is the number of bisection steps on log λ; 0 means 10, which
	// narrows the bracket to a factor (High/Low)^(1/1024).
	Steps int
}

// SparsePCAMatched runs SparsePCA with its penalty tuned so that the median
// sparsity of the components matches t.Median: the protocol of Tubiana,
// Cocco & Monasson 2019 (§IV.B and Fig. S3), who select the sparse penalty
// of each method compared with the RBM "to yield the same median weight
// sparsity as for the regularized RBM". It bisects on log λ within
// [t.Low, t.High], taking the upper half when the components at the
// midpoint are not sparse enough (median p_µ above the target), and
// returns the components at the geometric middle of the final bracket with
// that penalty; opts.Penalty is ignored. The covariance is computed once.
// Where even t.Low gives components sparser than the target (the trailing
// principal components of a one-hot alignment can be localised already),
// the result is at λ ≈ t.Low; where t.High is not sparse enough, at
// λ ≈ t.High. The median need not be monotone in λ, since deflation couples
// the components; the bisection then ends at one crossing of the target.
// opts.Progress, when set, counts the components of all t.Steps + 1 fits.
func SparsePCAMatched(ctx context.Context, x *mat.Dense, opts SparsePCAOptions, t SparsityTarget) (*SparsePCAResult, float64, error) {
	ctx = rbm.ContextOrDefault(ctx)
	lo, hi, steps, q := t.Low, t.High, t.Steps, t.Q
	if lo == 0 {
		lo = 1e-5
	}
	if hi == 0 {
		hi = 1e-1
	}
	if steps == 0 {
		steps = 10
	}
	if q == 0 {
		q = 1
	}
	switch {
	case !(t.Median > 0 && t.Median <= 1):
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: target Median = %v, want a value in (0, 1]", t.Median)
	case !(lo > 0 && lo < hi) || math.IsInf(hi, 0):
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: target bracket Low = %v, High = %v, want 0 < Low < High < ∞", t.Low, t.High)
	case steps < 0:
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: target Steps = %d, want ≥ 0", t.Steps)
	case q < 0:
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: target Q = %d, want ≥ 0", t.Q)
	}
	if x == nil {
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: nil data")
	}
	if _, n := x.Dims(); n%q != 0 {
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: %d columns is not a multiple of target Q = %d", n, q)
	}
	f, err := newSparsePCAFit(ctx, x, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("analysis: SparsePCAMatched: %w", err)
	}
	// Progress counts the components of every fit, steps + 1 of them.
	fits := 0
	if opts.Progress != nil {
		f.progress = func(done, _ int) { opts.Progress(fits*f.k+done, (steps+1)*f.k) }
	}
	fit := func(lambda float64) (*SparsePCAResult, error) {
		defer func() { fits++ }()
		r, err := f.run(ctx, lambda)
		if err != nil {
			return nil, fmt.Errorf("analysis: SparsePCAMatched: at penalty %.3g: %w", lambda, err)
		}
		return r, nil
	}
	for s := 0; s < steps; s++ {
		mid := math.Sqrt(lo * hi)
		r, err := fit(mid)
		if err != nil {
			return nil, 0, err
		}
		if upperMedianSparsity(r.Components, q) > t.Median {
			lo = mid // not sparse enough: a larger penalty
		} else {
			hi = mid
		}
	}
	lambda := math.Sqrt(lo * hi)
	r, err := fit(lambda)
	if err != nil {
		return nil, 0, err
	}
	return r, lambda, nil
}

// upperMedianSparsity is the median p_µ of the columns of w as
// SparsityTarget defines it; w's rows are a multiple of q (checked by the
// caller).
func upperMedianSparsity(w *mat.Dense, q int) float64 {
	_, per, _ := Sparsity(w, q)
	sort.Float64s(per)
	return per[len(per)/2]
}

// warmUp bounds the plain power iterations that find the start of each
// component: they only need to reach the leading direction's basin, and the
// penalised iteration converges from there.
const warmUp = 200

// start sets v to the unit vector of the largest diagonal entry of c, a
// starting point not orthogonal to any direction of c that carries
// variance (unless c is zero on it); u is scratch.
func start(c *mat.SymDense, v, u *mat.VecDense) {
	n := c.SymmetricDim()
	best := 0
	for i := 1; i < n; i++ {
		if c.At(i, i) > c.At(best, best) {
			best = i
		}
	}
	v.Zero()
	v.SetVec(best, 1)
	// A few plain power steps mix in the other directions, so the start is
	// not a coordinate vector (which the threshold would keep forever when
	// λ is large).
	for s := 0; s < 3; s++ {
		u.MulVec(c, v)
		if nrm := mat.Norm(u, 2); nrm > 0 {
			v.ScaleVec(1/nrm, u)
		}
	}
}

// iterate runs v ← S(Cv, λ)/‖S(Cv, λ)‖ until max |Δv_i| < tol or maxIter
// steps; it returns the steps done and whether tol was reached. u and prev
// are scratch.
func iterate(ctx context.Context, c *mat.SymDense, v, u *mat.VecDense, prev []float64, lambda float64, maxIter int, tol float64) (int, bool, error) {
	vr, ur := v.RawVector().Data, u.RawVector().Data
	for it := 1; it <= maxIter; it++ {
		if it%64 == 0 {
			if err := ctx.Err(); err != nil {
				return it, false, err
			}
		}
		copy(prev, vr)
		u.MulVec(c, v)
		if lambda > 0 {
			top := 0
			for i, x := range ur {
				if math.Abs(x) > math.Abs(ur[top]) {
					top = i
				}
			}
			if math.Abs(ur[top]) <= lambda { // everything thresholded: the 1-sparse component
				v.Zero()
				v.SetVec(top, math.Copysign(1, ur[top]))
				return it, true, nil
			}
			for i, x := range ur {
				ur[i] = math.Copysign(math.Max(math.Abs(x)-lambda, 0), x)
			}
		}
		nrm := mat.Norm(u, 2)
		if nrm == 0 { // v lies in the null space of the deflated covariance: keep it
			return it, true, nil
		}
		v.ScaleVec(1/nrm, u)
		d := 0.0
		for i, x := range vr {
			d = math.Max(d, math.Abs(x-prev[i]))
		}
		if d < tol {
			return it, true, nil
		}
	}
	return maxIter, false, nil
}

// deflate replaces c by (I − vvᵀ) c (I − vvᵀ) for a unit vector v; u is
// scratch: with u = cv and a = vᵀcv, the result is
// c − v uᵀ − u vᵀ + a v vᵀ.
func deflate(c *mat.SymDense, v, u *mat.VecDense) {
	u.MulVec(c, v)
	a := mat.Dot(v, u)
	n := c.SymmetricDim()
	for i := 0; i < n; i++ {
		vi, ui := v.AtVec(i), u.AtVec(i)
		for j := i; j < n; j++ {
			vj, uj := v.AtVec(j), u.AtVec(j)
			c.SetSym(i, j, c.At(i, j)-vi*uj-ui*vj+a*vi*vj)
		}
	}
}
