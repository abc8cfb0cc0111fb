package replica

import (
	"context"
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// Paramagnetic solves Eq. 23, the stationarity condition without
// spontaneous activity (⟨v⟩ = ⟨h⟩ = 0), in which all hidden units are
// identical and the weights lie in the data span: u(σ) = Σ_k c_k σ_k with
//
//	γ c_k = (1/K) tanh(Σ_l x_kl c_l).
//
// It returns c (nil, with no error, for Kγ ≥ λ_max(x), where only c = 0
// exists) and the one-block weights. The iteration starts along the top
// eigenvector of x, so the non-trivial branch is found; it is polished by
// Newton's method to a residual below 1e-13.
func Paramagnetic(cl *Classes, gamma float64) ([]float64, *Block, error) {
	if cl == nil || len(cl.F) == 0 {
		return nil, nil, fmt.Errorf("replica.Paramagnetic: empty class table")
	}
	if !(gamma > 0) {
		return nil, nil, fmt.Errorf("replica.Paramagnetic: γ = %g, need > 0", gamma)
	}
	lmax, top, err := cl.TopEigen()
	if err != nil {
		return nil, nil, err
	}
	k := cl.K
	if float64(k)*gamma >= lmax {
		return nil, nil, nil
	}
	x := cl.Overlap()
	cv := make([]float64, k)
	for i := range cv {
		cv[i] = top[i] / (float64(k) * gamma)
	}
	in := make([]float64, k)
	inputs := func() {
		for a := 0; a < k; a++ {
			s := 0.0
			for b := 0; b < k; b++ {
				s += x.At(a, b) * cv[b]
			}
			in[a] = s
		}
	}
	// damped fixed-point iteration from above (the map is contracting
	// towards the non-trivial branch on the positive cone)
	for it := 0; it < 2000; it++ {
		inputs()
		d := 0.0
		for a := range cv {
			nw := math.Tanh(in[a]) / (float64(k) * gamma)
			d = math.Max(d, math.Abs(nw-cv[a]))
			cv[a] = 0.5*cv[a] + 0.5*nw
		}
		if d < 1e-6 {
			break
		}
	}
	// Newton polish on F(c) = γc − tanh(xc)/K
	jm := mat.NewDense(k, k, nil)
	r := mat.NewVecDense(k, nil)
	var step mat.VecDense
	for it := 0; it < 100; it++ {
		inputs()
		res := 0.0
		for a := 0; a < k; a++ {
			th := math.Tanh(in[a])
			ra := gamma*cv[a] - th/float64(k)
			r.SetVec(a, -ra)
			res = math.Max(res, math.Abs(ra))
			for b := 0; b < k; b++ {
				v := -(1 - th*th) * x.At(a, b) / float64(k)
				if a == b {
					v += gamma
				}
				jm.Set(a, b, v)
			}
		}
		if res < 1e-14 {
			break
		}
		if err := step.SolveVec(jm, r); err != nil {
			return nil, nil, fmt.Errorf("replica.Paramagnetic: γ = %g: Newton step: %w", gamma, err)
		}
		for a := range cv {
			cv[a] += step.AtVec(a)
		}
	}
	inputs()
	for a := 0; a < k; a++ {
		if ra := gamma*cv[a] - math.Tanh(in[a])/float64(k); math.Abs(ra) > 1e-12 || math.IsNaN(ra) {
			return nil, nil, fmt.Errorf("replica.Paramagnetic: γ = %g: residual %.3g after Newton", gamma, ra)
		}
	}
	bl := &Block{Frac: 1, U: spanWeights(cl, cv)}
	return cv, bl, nil
}

// spanWeights returns u(σ_c) = Σ_k c_k σ_ck for every class.
func spanWeights(cl *Classes, cv []float64) []float64 {
	k := cl.K
	u := make([]float64, len(cl.F))
	for j := range u {
		s := 0.0
		for l := 0; l < k; l++ {
			s += cl.Sigma[j*k+l] * cv[l]
		}
		u[j] = s
	}
	return u
}

// SolveParamagnetic starts from the paramagnetic solution of Eq. 23 and
// solves Eqs. 20–21 with a single block: it is the paramagnetic solution
// when Eq. 22 has no eigenvalue above 1 and the rank-1 ordered solution
// continued from it otherwise (when Newton from Eq. 23 does not reach the
// non-trivial branch, the branch is followed down from just below the
// threshold). For Kγ ≥ λ_max(x) it returns W = 0.
func SolveParamagnetic(ctx context.Context, p Problem) (*Solution, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if err := p.check(); err != nil {
		return nil, err
	}
	_, bl, err := Paramagnetic(p.Classes, p.Gamma)
	if err != nil {
		return nil, err
	}
	if bl == nil {
		bl = &Block{Frac: 1, U: make([]float64, len(p.Classes.F))}
		return Solve(ctx, p, []Block{*bl})
	}
	sol, err := Solve(ctx, p, []Block{*bl})
	if err == nil && !signatureOf(sol).zero {
		return sol, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// Far below the threshold Newton from Eq. 23 may fall onto W = 0 or
	// fail: follow the branch down from just below the threshold instead.
	gc, err2 := p.Classes.Threshold()
	if err2 != nil {
		return nil, err2
	}
	q := p
	q.Gamma = gc * (1 - 1e-3)
	_, bl, err2 = Paramagnetic(q.Classes, q.Gamma)
	if err2 != nil || bl == nil {
		return nil, fmt.Errorf("replica.SolveParamagnetic: γ = %g: start near threshold failed: %v", q.Gamma, err2)
	}
	start, err2 := Solve(ctx, q, []Block{*bl})
	if err2 != nil {
		return nil, fmt.Errorf("replica.SolveParamagnetic: γ = %g: %w", q.Gamma, err2)
	}
	path, err2 := Sweep(ctx, start, []float64{p.Gamma}, SweepOptions{LocateTol: gc})
	if err2 != nil {
		return nil, fmt.Errorf("replica.SolveParamagnetic: continuation to γ = %g: %w", p.Gamma, err2)
	}
	return path.Solutions[0], nil
}
