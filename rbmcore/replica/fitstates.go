package replica

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// FitStatesOptions configures FitStates. The zero value iterates Eq. 20 at
// most 1000 times per data point to a change below 1e-10 and merges states
// whose visible magnetisations have |cosine| above 0.999.
type FitStatesOptions struct {
	// MaxIter is the largest number of mean-field iterations per data
	// point (0: 1000).
	MaxIter int
	// Tol is the largest change of a visible magnetisation at which the
	// iteration stops (0: 1e-10).
	Tol float64
	// Merge is the |cosine| between the visible magnetisations of two
	// states above which they are one state up to the global flip
	// (0: 0.999).
	Merge float64
}

// TrainedStates are the thermodynamic states of a trained weight matrix and
// the state weights of Eq. 21 that fit it (FitStates).
type TrainedStates struct {
	V    *mat.Dense // Ω×N visible magnetisations ⟨v_i⟩^ω
	H    *mat.Dense // Ω×M hidden magnetisations ⟨h_µ⟩^ω = tanh(Σ_i w_iµ ⟨v_i⟩^ω)
	From [][]int    // the data points (0-based) whose iteration reached each state
	// Pi are the state weights π_ω that make Eq. 21,
	// Nγ w_iµ = (1/K) Σ_k ξ^k_i tanh(Σ_j w_jµ ξ^k_j) − Σ_ω π_ω ⟨v_i⟩^ω ⟨h_µ⟩^ω,
	// hold best in the least-squares sense over all i, µ. The paper's
	// rule is π_ω = 1/Ω; Problem.LabelledEqual's is |From_ω|/K. A state
	// whose magnetisations vanish (the paramagnetic state) has π = 0 and
	// takes no part in the fit.
	Pi []float64
	// Residual is ‖T − Σ_ω π_ω ⟨v⟩^ω ⟨h⟩^ωᵀ‖_F / ‖T‖_F, with T the data
	// term of Eq. 21 minus Nγ W: 0 for weights that are an exact
	// stationary point with some state weights.
	Residual float64
}

// FitStates finds the thermodynamic states of the trained weights w (N×M)
// of a ±1 RBM without fields — the solutions of Eq. 20 reached by the
// mean-field iteration h = tanh(Wᵀv), v = tanh(W h) started at each data
// point (the rows of the K×N matrix xi), merged up to the global flip — and
// fits the weight π_ω of each state in the model term of Eq. 21 at
// regularisation gamma (the penalty (Nγ/2) Σ w² of Eq. 6).
//
// It measures which mixture of states a training algorithm actually used:
// the paper assumes 1/Ω; persistent chains trapped in the states weight them
// by their occupancy. A Residual well above the sampling noise means that
// no mixture of the states found makes w stationary.
func FitStates(ctx context.Context, xi, w mat.Matrix, gamma float64, opts FitStatesOptions) (*TrainedStates, error) {
	k, n := xi.Dims()
	nw, m := w.Dims()
	switch {
	case k == 0 || n == 0 || m == 0:
		return nil, fmt.Errorf("replica: FitStates: empty data (%d×%d) or weights (%d×%d)", k, n, nw, m)
	case nw != n:
		return nil, fmt.Errorf("replica: FitStates: weights have %d rows, data have N = %d columns", nw, n)
	case !(gamma >= 0) || math.IsInf(gamma, 1):
		return nil, fmt.Errorf("replica: FitStates: gamma = %v, want a finite value ≥ 0", gamma)
	case opts.MaxIter < 0 || opts.Tol < 0 || opts.Merge < 0 || opts.Merge >= 1:
		return nil, fmt.Errorf("replica: FitStates: options %+v: want MaxIter ≥ 0, Tol ≥ 0, 0 ≤ Merge < 1", opts)
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 1000
	}
	if opts.Tol == 0 {
		opts.Tol = 1e-10
	}
	if opts.Merge == 0 {
		opts.Merge = 0.999
	}
	var vs, hs []*mat.VecDense
	var from [][]int
	for d := 0; d < k; d++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("replica: FitStates: %w", err)
		}
		v := mat.NewVecDense(n, nil)
		for i := 0; i < n; i++ {
			v.SetVec(i, xi.At(d, i))
		}
		h := mat.NewVecDense(m, nil)
		prev := mat.NewVecDense(n, nil)
		for it := 0; it < opts.MaxIter; it++ {
			prev.CopyVec(v)
			tanhMul(h, w.T(), v)
			tanhMul(v, w, h)
			change := 0.0
			for i := 0; i < n; i++ {
				change = math.Max(change, math.Abs(v.AtVec(i)-prev.AtVec(i)))
			}
			if change < opts.Tol {
				break
			}
		}
		tanhMul(h, w.T(), v)
		found := -1
		for s, u := range vs {
			if math.Abs(mat.Dot(u, v)) > opts.Merge*math.Sqrt(mat.Dot(u, u)*mat.Dot(v, v)) {
				found = s
				break
			}
		}
		if found < 0 {
			vs, hs, from = append(vs, v), append(hs, h), append(from, nil)
			found = len(vs) - 1
		}
		from[found] = append(from[found], d)
	}
	// T = (1/K) Ξᵀ tanh(Ξ W) − Nγ W, the part of Eq. 21 without the states
	var in mat.Dense
	in.Mul(xi, w)
	in.Apply(func(_, _ int, x float64) float64 { return math.Tanh(x) }, &in)
	t := mat.NewDense(n, m, nil)
	t.Mul(xi.T(), &in)
	t.Scale(1/float64(k), t)
	var reg mat.Dense
	reg.Scale(float64(n)*gamma, w)
	t.Sub(t, &reg)

	om := len(vs)
	res := &TrainedStates{V: mat.NewDense(om, n, nil), H: mat.NewDense(om, m, nil), From: from, Pi: make([]float64, om)}
	var live []int // states with non-vanishing magnetisations
	for s := range vs {
		res.V.SetRow(s, vs[s].RawVector().Data)
		res.H.SetRow(s, hs[s].RawVector().Data)
		if mat.Dot(vs[s], vs[s]) > 1e-12*float64(n) && mat.Dot(hs[s], hs[s]) > 1e-12*float64(m) {
			live = append(live, s)
		}
	}
	// normal equations of min ‖T − Σ π_s v_s h_sᵀ‖_F: the Gram matrix of
	// the rank-one matrices v_s h_sᵀ is (v_a·v_b)(h_a·h_b)
	fit := mat.NewDense(n, m, nil)
	if len(live) > 0 {
		g := mat.NewDense(len(live), len(live), nil)
		r := mat.NewVecDense(len(live), nil)
		var th mat.VecDense
		for a, sa := range live {
			for b, sb := range live {
				g.Set(a, b, mat.Dot(vs[sa], vs[sb])*mat.Dot(hs[sa], hs[sb]))
			}
			th.MulVec(t, hs[sa])
			r.SetVec(a, mat.Dot(vs[sa], &th))
		}
		var pi mat.VecDense
		if err := pi.SolveVec(g, r); err != nil {
			return nil, fmt.Errorf("replica: FitStates: %d states are linearly dependent: %w", len(live), err)
		}
		for a, s := range live {
			res.Pi[s] = pi.AtVec(a)
			var o mat.Dense
			o.Outer(res.Pi[s], vs[s], hs[s])
			fit.Add(fit, &o)
		}
	}
	tn := mat.Norm(t, 2)
	if tn == 0 {
		return nil, fmt.Errorf("replica: FitStates: the data term of Eq. 21 minus NγW vanishes (zero weights and data term?)")
	}
	fit.Sub(t, fit)
	res.Residual = mat.Norm(fit, 2) / tn
	return res, nil
}

// tanhMul sets dst = tanh(a x) elementwise.
func tanhMul(dst *mat.VecDense, a mat.Matrix, x mat.Vector) {
	dst.MulVec(a, x)
	for i := 0; i < dst.Len(); i++ {
		dst.SetVec(i, math.Tanh(dst.AtVec(i)))
	}
}
