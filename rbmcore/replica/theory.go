package replica

import (
	"context"
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// DataProjection projects trained weights on the data span (Fig. 3C). xi is
// the K×N data matrix (rows ξ^k), w the N×M weight matrix. It returns the
// K×M coefficients c (w_µ ≈ (1/N) Σ_k ξ^k c^k_µ, c_µ = x^{-1} Ξ w_µ), the
// K×M raw overlaps I^k_µ = Σ_i ξ^k_i w_iµ, and the fraction of ‖W‖²_F
// outside the data span.
func DataProjection(xi, w mat.Matrix) (coef, inputs *mat.Dense, outside float64, err error) {
	k, n := xi.Dims()
	nw, m := w.Dims()
	if nw != n {
		return nil, nil, 0, fmt.Errorf("replica.DataProjection: data has N = %d columns, weights have %d rows", n, nw)
	}
	inputs = mat.NewDense(k, m, nil)
	inputs.Mul(xi, w)
	var x mat.SymDense
	x.SymOuterK(1/float64(n), xi)
	var ch mat.Cholesky
	if !ch.Factorize(&x) {
		return nil, nil, 0, fmt.Errorf("replica.DataProjection: overlap matrix is singular (data points linearly dependent)")
	}
	coef = mat.NewDense(k, m, nil)
	if err := ch.SolveTo(coef, inputs); err != nil {
		return nil, nil, 0, fmt.Errorf("replica.DataProjection: %w", err)
	}
	// ‖P W‖² = (1/N) Σ_µ c_µᵀ x c_µ · … = Σ_µ I_µ · c_µ / N
	in := 0.0
	for kk := 0; kk < k; kk++ {
		for mu := 0; mu < m; mu++ {
			in += inputs.At(kk, mu) * coef.At(kk, mu)
		}
	}
	in /= float64(n)
	tot := mat.Norm(w, 2)
	tot *= tot
	if tot > 0 {
		outside = math.Max(0, 1-in/tot)
	}
	return coef, inputs, outside, nil
}

// BlocksFromCentres turns cluster centres of trained hidden-unit weights
// (B×N, one centre per row, e.g. analysis.KMeans with mirror = true on the
// unit vectors) and the cluster sizes into solver blocks: u^b(σ) = N times
// the mean of the centre over the sites of class σ (oriented to the class
// pattern), fraction ∝ size. The class table must come from the same data
// (ClassesFromData).
func BlocksFromCentres(cl *Classes, centres mat.Matrix, sizes []int) ([]Block, error) {
	if cl == nil || cl.Site == nil {
		return nil, fmt.Errorf("replica.BlocksFromCentres: needs a class table built from data (ClassesFromData)")
	}
	b, n := centres.Dims()
	if n != cl.N {
		return nil, fmt.Errorf("replica.BlocksFromCentres: centres have %d columns, data has N = %d sites", n, cl.N)
	}
	if len(sizes) != b {
		return nil, fmt.Errorf("replica.BlocksFromCentres: %d sizes for %d centres", len(sizes), b)
	}
	c := len(cl.F)
	count := make([]float64, c)
	for _, j := range cl.Site {
		count[j]++
	}
	var out []Block
	for r := 0; r < b; r++ {
		if sizes[r] < 0 {
			return nil, fmt.Errorf("replica.BlocksFromCentres: sizes[%d] = %d < 0", r, sizes[r])
		}
		if sizes[r] == 0 {
			continue
		}
		u := make([]float64, c)
		for i := 0; i < n; i++ {
			u[cl.Site[i]] += float64(cl.SiteSign[i]) * centres.At(r, i)
		}
		for j := range u {
			u[j] *= float64(n) / count[j]
		}
		out = append(out, Block{Frac: float64(sizes[r]), U: u})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("replica.BlocksFromCentres: all clusters are empty")
	}
	return out, nil
}

// SolveFromCentres solves Eqs. 20–21 started from cluster centres of
// trained weights (the paper's Fig. 3B protocol): BlocksFromCentres, then
// Solve with p.Classes.
func SolveFromCentres(ctx context.Context, p Problem, centres mat.Matrix, sizes []int) (*Solution, error) {
	ctx = rbm.ContextOrDefault(ctx)
	bl, err := BlocksFromCentres(p.Classes, centres, sizes)
	if err != nil {
		return nil, err
	}
	return Solve(ctx, p, bl)
}

// Predict returns the N×M weights the solution predicts for trained
// weights w whose unit µ belongs to block assign[µ] (an index into
// s.Blocks, e.g. from matching k-means clusters): u^b(σ_i)/N with the sign
// of each unit chosen to match w. It needs a class table built from data.
func (s *Solution) Predict(w mat.Matrix, assign []int) (*mat.Dense, error) {
	cl := s.Problem.Classes
	if cl.Site == nil {
		return nil, fmt.Errorf("replica: Predict needs a class table built from data (ClassesFromData)")
	}
	n, m := w.Dims()
	if n != cl.N || len(assign) != m {
		return nil, fmt.Errorf("replica: Predict: weights %d×%d, data N = %d, %d assignments", n, m, cl.N, len(assign))
	}
	out := mat.NewDense(n, m, nil)
	for mu, b := range assign {
		if b < 0 || b >= len(s.Blocks) {
			return nil, fmt.Errorf("replica: Predict: assign[%d] = %d, have %d blocks", mu, b, len(s.Blocks))
		}
		dot := 0.0
		for i := 0; i < n; i++ {
			x := float64(cl.SiteSign[i]) * s.Blocks[b].U[cl.Site[i]] / float64(n)
			out.Set(i, mu, x)
			dot += x * w.At(i, mu)
		}
		if dot < 0 {
			for i := 0; i < n; i++ {
				out.Set(i, mu, -out.At(i, mu))
			}
		}
	}
	return out, nil
}

// Assign returns, for every column µ of the trained weights w (N×M), the
// block of s whose predicted weights u^b(σ_i)/N are nearest to w_µ up to a
// sign: the b that minimises min(‖w_µ − u^b‖², ‖w_µ + u^b‖²). With Predict
// it turns a solution into a prediction for every trained unit (Fig. 3B). It
// needs a class table built from data.
func (s *Solution) Assign(w mat.Matrix) ([]int, error) {
	cl := s.Problem.Classes
	if cl.Site == nil {
		return nil, fmt.Errorf("replica: Assign needs a class table built from data (ClassesFromData)")
	}
	n, m := w.Dims()
	if n != cl.N {
		return nil, fmt.Errorf("replica: Assign: weights have %d rows, data N = %d", n, cl.N)
	}
	if len(s.Blocks) == 0 {
		return nil, fmt.Errorf("replica: Assign: the solution has no blocks")
	}
	u := mat.NewDense(n, len(s.Blocks), nil) // block weights as columns
	norm2 := make([]float64, len(s.Blocks))
	for b, bl := range s.Blocks {
		for i := 0; i < n; i++ {
			x := float64(cl.SiteSign[i]) * bl.U[cl.Site[i]] / float64(n)
			u.Set(i, b, x)
			norm2[b] += x * x
		}
	}
	// ‖w ∓ u‖² = ‖w‖² ∓ 2 w·u + ‖u‖²: the nearest block up to sign maximises
	// 2|w·u| − ‖u‖².
	var dots mat.Dense
	dots.Mul(w.T(), u) // M×B
	out := make([]int, m)
	for mu := 0; mu < m; mu++ {
		best := math.Inf(-1)
		for b := range s.Blocks {
			if v := 2*math.Abs(dots.At(mu, b)) - norm2[b]; v > best {
				best, out[mu] = v, b
			}
		}
	}
	return out, nil
}
