package replica

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// OrderParams returns the replica order parameters of Eqs. 11–14 for the
// Ω states of the solution: Q (Ω×K) Q^ω_k = (1/N) Σ_i ξ^k_i ⟨v_i⟩^ω,
// q (Ω×Ω) q_ωω' = (1/N) Σ_i ⟨v_i⟩^ω⟨v_i⟩^ω', P (Ω×K) P^ω_k =
// (1/M) Σ_µ ⟨h_µ⟩^ω ⟨H^k_µ⟩ with ⟨H^k_µ⟩ = tanh(Σ_i w_iµ ξ^k_i), and
// p (Ω×Ω) p_ωω' = (1/M) Σ_µ ⟨h_µ⟩^ω⟨h_µ⟩^ω'. All are nil when Ω = 0.
func (s *Solution) OrderParams() (Q, q, P, p *mat.Dense) {
	om := len(s.States)
	if om == 0 {
		return nil, nil, nil, nil
	}
	cl := s.Problem.Classes
	k, c := cl.K, len(cl.F)
	hk := s.Responses()
	Q, q = mat.NewDense(om, k, nil), mat.NewDense(om, om, nil)
	P, p = mat.NewDense(om, k, nil), mat.NewDense(om, om, nil)
	for w, st := range s.States {
		for l := 0; l < k; l++ {
			Q.Set(w, l, st.Q[l])
			x := 0.0
			for b, bl := range s.Blocks {
				x += bl.Frac * st.H[b] * hk.At(b, l)
			}
			P.Set(w, l, x)
		}
		for w2, st2 := range s.States {
			a, b2 := 0.0, 0.0
			for j := 0; j < c; j++ {
				a += cl.F[j] * st.V[j] * st2.V[j]
			}
			for b, bl := range s.Blocks {
				b2 += bl.Frac * st.H[b] * st2.H[b]
			}
			q.Set(w, w2, a)
			p.Set(w, w2, b2)
		}
	}
	return Q, q, P, p
}

// Inputs returns the B×K matrix of hidden inputs I^k_b = Σ_i w_iµ ξ^k_i for
// a unit µ of block b.
func (s *Solution) Inputs() *mat.Dense {
	cl := s.Problem.Classes
	k, c := cl.K, len(cl.F)
	in := mat.NewDense(len(s.Blocks), k, nil)
	for b, bl := range s.Blocks {
		for l := 0; l < k; l++ {
			x := 0.0
			for j := 0; j < c; j++ {
				x += cl.F[j] * cl.Sigma[j*k+l] * bl.U[j]
			}
			in.Set(b, l, x)
		}
	}
	return in
}

// Responses returns the B×K matrix ⟨H^k_b⟩ = tanh(I^k_b): the mean of a
// hidden unit of block b with the data point k clamped on the visible layer.
func (s *Solution) Responses() *mat.Dense {
	in := s.Inputs()
	in.Apply(func(_, _ int, v float64) float64 { return math.Tanh(v) }, in)
	return in
}

// Eq19Weights returns the block weights rebuilt from the replica order
// parameters by Eq. 19 (the printed equation's spurious sum over µ removed):
//
//	γ u^b(σ) = (1/K) Σ_k σ_k ⟨H^k_b⟩ − Σ_ω π_ω ⟨v(σ)⟩^ω ⟨h_b⟩^ω,
//
// with the state weights π_ω of StateWeights (1/Ω in the paper).
//
// At a solution of mode Exact they equal the block weights.
func (s *Solution) Eq19Weights() []Block {
	cl := s.Problem.Classes
	k, c := cl.K, len(cl.F)
	hk := s.Responses()
	g := s.Problem.Gamma
	pi := s.StateWeights()
	out := make([]Block, len(s.Blocks))
	for b, bl := range s.Blocks {
		u := make([]float64, c)
		for j := 0; j < c; j++ {
			x := 0.0
			for l := 0; l < k; l++ {
				x += cl.Sigma[j*k+l] * hk.At(b, l)
			}
			x /= float64(k)
			for w, st := range s.States {
				x -= pi[w] * st.V[j] * st.H[b]
			}
			u[j] = x / g
		}
		out[b] = Block{Frac: bl.Frac, U: u}
	}
	return out
}

// Coefficients returns the B×K data-span coefficients c^k_b of Eq. F1,
// w_iµ ≈ (1/N) Σ_k ξ^k_i c^k_µ: the least-squares projection of each
// block's weights on the data, c = x^{-1} Σ_i ξ_i w_iµ. OffSpan returns
// what the projection leaves out.
func (s *Solution) Coefficients() (*mat.Dense, error) {
	x := s.Problem.Classes.Overlap()
	var ch mat.Cholesky
	if !ch.Factorize(x) {
		return nil, fmt.Errorf("replica: Coefficients: overlap matrix x is singular (data points linearly dependent)")
	}
	in := s.Inputs() // B×K = Σᵀ F u
	var out mat.Dense
	if err := ch.SolveTo(&out, in.T()); err != nil {
		return nil, fmt.Errorf("replica: Coefficients: %w", err)
	}
	return mat.DenseCopyOf(out.T()), nil
}

// OffSpan returns, per block, the relative f-weighted norm of the part of
// the weights outside the data span, ‖u − Σ_k c^k σ_k‖_f / ‖u‖_f (0 in the
// paramagnetic phase and in mode DataSpan; non-zero for K ≥ 3 when states
// exist, because Eq. 19 adds the state magnetisations, which are not linear
// in σ).
func (s *Solution) OffSpan() ([]float64, error) {
	co, err := s.Coefficients()
	if err != nil {
		return nil, err
	}
	cl := s.Problem.Classes
	out := make([]float64, len(s.Blocks))
	for b, bl := range s.Blocks {
		proj := spanWeights(cl, mat.Row(nil, b, co))
		num, den := 0.0, 0.0
		for j, f := range cl.F {
			d := bl.U[j] - proj[j]
			num += f * d * d
			den += f * bl.U[j] * bl.U[j]
		}
		if den > 0 {
			out[b] = math.Sqrt(num / den)
		}
	}
	return out, nil
}

// SingularValues returns the non-zero singular values of W (N×M, N → ∞),
// in decreasing order: the square roots of the eigenvalues of the B×B matrix
// α φ_b^{1/2} (Σ_σ f_σ u^b(σ) u^b'(σ)) φ_b'^{1/2}. Their squares are the
// non-zero eigenvalues of Σ_µ w_iµ w_jµ (Eq. 22).
func (s *Solution) SingularValues() []float64 {
	cl := s.Problem.Classes
	nb := len(s.Blocks)
	g := mat.NewSymDense(nb, nil)
	for a := 0; a < nb; a++ {
		for b := a; b < nb; b++ {
			x := 0.0
			for j, f := range cl.F {
				x += f * s.Blocks[a].U[j] * s.Blocks[b].U[j]
			}
			g.SetSym(a, b, s.Problem.Alpha*math.Sqrt(s.Blocks[a].Frac*s.Blocks[b].Frac)*x)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(g, false) {
		return nil
	}
	vals := es.Values(nil)
	out := make([]float64, 0, nb)
	for i := len(vals) - 1; i >= 0; i-- {
		out = append(out, math.Sqrt(math.Max(vals[i], 0)))
	}
	return out
}

// SpontaneousEig returns the top eigenvalue of Σ_µ w_iµ w_jµ (Eq. 22): the
// paramagnetic state ⟨v⟩ = ⟨h⟩ = 0 is unstable, and spontaneous states
// exist, when it exceeds 1.
func (s *Solution) SpontaneousEig() float64 {
	sv := s.SingularValues()
	if len(sv) == 0 {
		return 0
	}
	return sv[0] * sv[0]
}

// Rank returns the number of singular values of W above tol times the
// largest (0 when W = 0).
func (s *Solution) Rank(tol float64) int {
	sv := s.SingularValues()
	if len(sv) == 0 || sv[0] < 1e-12 {
		return 0
	}
	n := 0
	for _, x := range sv {
		if x > tol*sv[0] {
			n++
		}
	}
	return n
}

// Norm returns ‖W‖_F² = Σ_iµ w_iµ² = α Σ_b φ_b Σ_σ f_σ u^b(σ)².
func (s *Solution) Norm() float64 {
	cl := s.Problem.Classes
	x := 0.0
	for _, bl := range s.Blocks {
		r := 0.0
		for j, f := range cl.F {
			r += f * bl.U[j] * bl.U[j]
		}
		x += bl.Frac * r
	}
	return s.Problem.Alpha * x
}

// Weights returns the N×M weight matrix w_iµ = ±u^{b(µ)}(σ_i)/N for a class
// table built from data (ClassesFromData). Block b gets round(φ_b M) units
// (largest remainders), in block order.
func (s *Solution) Weights(m int) (*mat.Dense, error) {
	cl := s.Problem.Classes
	if cl.N == 0 || cl.Site == nil {
		return nil, fmt.Errorf("replica: Weights needs a class table built from data (ClassesFromData); this one is exact (N = ∞)")
	}
	if m < 1 {
		return nil, fmt.Errorf("replica: Weights: M = %d, need ≥ 1", m)
	}
	sizes := s.BlockSizes(m)
	w := mat.NewDense(cl.N, m, nil)
	mu := 0
	for b, n := range sizes {
		for r := 0; r < n; r++ {
			for i := 0; i < cl.N; i++ {
				w.Set(i, mu, float64(cl.SiteSign[i])*s.Blocks[b].U[cl.Site[i]]/float64(cl.N))
			}
			mu++
		}
	}
	return w, nil
}

// BlockSizes splits m hidden units among the blocks in proportion to their
// fractions (largest remainders).
func (s *Solution) BlockSizes(m int) []int {
	nb := len(s.Blocks)
	sizes := make([]int, nb)
	rem := make([]int, nb)
	left := m
	for b, bl := range s.Blocks {
		sizes[b] = int(math.Floor(bl.Frac * float64(m)))
		left -= sizes[b]
		rem[b] = b
	}
	sort.SliceStable(rem, func(i, j int) bool {
		fi := s.Blocks[rem[i]].Frac*float64(m) - float64(sizes[rem[i]])
		fj := s.Blocks[rem[j]].Frac*float64(m) - float64(sizes[rem[j]])
		return fi > fj
	})
	for i := 0; i < left; i++ {
		sizes[rem[i%nb]]++
	}
	return sizes
}

// DistinctOverlaps returns the distinct values (within tol) among the
// overlaps Q^ω_k, in decreasing order. For hierarchical data with tree
// symmetric states these are m0 > m1 > m2 (Fig. 4A) until they merge.
func (s *Solution) DistinctOverlaps(tol float64) []float64 {
	var all []float64
	for _, st := range s.States {
		all = append(all, st.Q...)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(all)))
	var out []float64
	for _, x := range all {
		if len(out) == 0 || out[len(out)-1]-x > tol {
			out = append(out, x)
		}
	}
	return out
}

// TreeOverlaps returns, for hierarchical data, the mean overlap between a
// state and the data points at tree distance d = 0…L from the data point
// the state was reached from (m0, m1, m2 of Fig. 4A for L = 2), and the
// largest deviation from that mean (0 for tree-symmetric solutions).
// States reached from several data points count once per data point.
func (s *Solution) TreeOverlaps(t Tree) (mean []float64, spread float64, err error) {
	if t.K() != s.Problem.Classes.K {
		return nil, 0, fmt.Errorf("replica: TreeOverlaps: tree has %d leaves, data has K = %d", t.K(), s.Problem.Classes.K)
	}
	l := len(t.Children)
	sum := make([]float64, l+1)
	cnt := make([]float64, l+1)
	var vals [][]float64 = make([][]float64, l+1)
	for _, st := range s.States {
		for _, from := range st.From {
			for k, q := range st.Q {
				d := t.Distance(from, k)
				sum[d] += q
				cnt[d]++
				vals[d] = append(vals[d], q)
			}
		}
	}
	mean = make([]float64, l+1)
	for d := range mean {
		if cnt[d] > 0 {
			mean[d] = sum[d] / cnt[d]
		}
		for _, q := range vals[d] {
			spread = math.Max(spread, math.Abs(q-mean[d]))
		}
	}
	return mean, spread, nil
}
