package replica

import (
	"context"
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// AdmissiblePatterns returns the hidden sign patterns ξ̂ ∈ {±1}^K (first
// entry +1, one per ± pair) that satisfy the per-unit BAM condition of
// Eq. J1 with the Kosko weights of Eq. 26: ξ̂_k (x ξ̂)_k ≥ 0 for every k.
// K is limited to 20.
func AdmissiblePatterns(cl *Classes) ([][]float64, error) {
	k := cl.K
	if k > 20 {
		return nil, fmt.Errorf("replica.AdmissiblePatterns: K = %d, limited to 20", k)
	}
	x := cl.Overlap()
	var out [][]float64
	p := make([]float64, k)
	for code := 0; code < 1<<uint(k-1); code++ {
		p[0] = 1
		for r := 1; r < k; r++ {
			p[r] = 1
			if code&(1<<uint(r-1)) != 0 {
				p[r] = -1
			}
		}
		ok := true
		for a := 0; a < k && ok; a++ {
			s := 0.0
			for b := 0; b < k; b++ {
				s += x.At(a, b) * p[b]
			}
			ok = p[a]*s >= -1e-12
		}
		if ok {
			out = append(out, append([]float64(nil), p...))
		}
	}
	return out, nil
}

// BAMMixture is a solution of the linear programme of Appendix J: hidden
// sign patterns and the fractions ψ of hidden units carrying them.
type BAMMixture struct {
	Patterns  [][]float64 // ξ̂_a ∈ {±1}^K, admissible (Eq. J1)
	Psi       []float64   // ψ_a > 0, summing to 1
	Objective float64     // Σ_a ψ_a ξ̂_aᵀ x ξ̂_a = Σ_kl x_kl y_kl (Eq. J3)
	Margin    float64     // min over classes σ and k of σ_k (y σ)_k (≥ 0: Eq. J2 holds)
}

// BAMOptions configures BAMLP and BAMStart. The zero value is the paper's
// objective (Eq. J3) with no symmetry imposed.
type BAMOptions struct {
	// MaxMargin maximises the smallest left-hand side of Eq. J2 instead of
	// Eq. J3: the vertex of J3 often has margin 0, on the boundary of the
	// BAM region, where Solve may leave the phase.
	MaxMargin bool
	// Symmetry, when non-nil, is a group of permutations of the data points
	// (e.g. Tree.Automorphisms) under which the data are symmetric: the
	// mixture is then restricted to be symmetric (equal ψ on each orbit of
	// patterns), so that the bootstrapped solution keeps the symmetry of the
	// data and its transitions happen for all equivalent states at once.
	Symmetry [][]int
}

// BAMLP solves the linear programme of Appendix J with gonum's simplex over
// mixtures y = Σ_a ψ_a ξ̂_a ξ̂_aᵀ of admissible patterns subject to Eq. J2,
// σ_k (y σ)_k ≥ 0 for every site class σ and data point k, ψ ≥ 0, Σψ = 1,
// with the objective and symmetry of opts. J3 is used as a selection rule
// only: as a log-likelihood it cannot hold, since (1/K) Σ_k ln P_V(ξ^k) ≤ 0
// for discrete data while J3's leading term is positive. The programme has one variable per admissible
// pattern (at most 2^K), so it takes no context.
// Patterns with ψ_a > 1e-9 are returned.
func BAMLP(cl *Classes, opts BAMOptions) (*BAMMixture, error) {
	maxMargin, sym := opts.MaxMargin, opts.Symmetry
	pats, err := AdmissiblePatterns(cl)
	if err != nil {
		return nil, err
	}
	k, c := cl.K, len(cl.F)
	na := len(pats)
	x := cl.Overlap()
	// orbits of the patterns under sym
	orbit := make([]int, na)
	for i := range orbit {
		orbit[i] = -1
	}
	var orbits [][]int
	q := make([]float64, k)
	for i := range pats {
		if orbit[i] >= 0 {
			continue
		}
		o := len(orbits)
		orbit[i] = o
		members := []int{i}
		for _, g := range sym {
			if len(g) != k {
				return nil, fmt.Errorf("replica.BAMLP: permutation of length %d, want K = %d", len(g), k)
			}
			for r := 0; r < k; r++ {
				q[g[r]] = pats[i][r]
			}
			if q[0] < 0 {
				for r := range q {
					q[r] = -q[r]
				}
			}
			j := indexOf(pats, q)
			if j < 0 {
				return nil, fmt.Errorf("replica.BAMLP: the data are not symmetric under the given permutations (pattern %v maps outside the admissible set)", pats[i])
			}
			if orbit[j] < 0 {
				orbit[j] = o
				members = append(members, j)
			}
		}
		orbits = append(orbits, members)
	}
	no := len(orbits)
	// constraint rows: for class j and data point l, Σ_a ψ_a g_{jl,a} ≥ 0
	// with g = σ_l ξ̂_al (ξ̂_a·σ), averaged over each orbit; duplicates dropped.
	var rows [][]float64
	seen := map[string]bool{}
	for j := 0; j < c; j++ {
		sig := cl.Sigma[j*k : (j+1)*k]
		for l := 0; l < k; l++ {
			row := make([]float64, no)
			key := make([]byte, 0, 8*no)
			for o, members := range orbits {
				for _, a := range members {
					p := pats[a]
					dot := 0.0
					for r := 0; r < k; r++ {
						dot += p[r] * sig[r]
					}
					row[o] += sig[l] * p[l] * dot / float64(len(members))
				}
				key = fmt.Appendf(key, "%.12g,", row[o])
			}
			if !seen[string(key)] {
				seen[string(key)] = true
				rows = append(rows, row)
			}
		}
	}
	energy := make([]float64, no)
	for o, members := range orbits {
		for _, a := range members {
			p := pats[a]
			for r := 0; r < k; r++ {
				for s := 0; s < k; s++ {
					energy[o] += p[r] * x.At(r, s) * p[s] / float64(len(members))
				}
			}
		}
	}
	// standard form: variables (ψ per orbit, slacks, margin t ≥ 0 in
	// max-margin mode), G ψ − t − s = 0, Σ ψ = 1.
	nr := len(rows)
	nv := no + nr
	if maxMargin {
		nv++
	}
	a := mat.NewDense(nr+1, nv, nil)
	b := make([]float64, nr+1)
	for r, row := range rows {
		for j, g := range row {
			a.Set(r, j, g)
		}
		a.Set(r, no+r, -1)
		if maxMargin {
			a.Set(r, nv-1, -1)
		}
	}
	for j := 0; j < no; j++ {
		a.Set(nr, j, 1)
	}
	b[nr] = 1
	cost := make([]float64, nv)
	if maxMargin {
		cost[nv-1] = -1
	} else {
		for o := range orbits {
			cost[o] = -energy[o]
		}
	}
	_, sol, err := lp.Simplex(cost, a, b, 1e-10, nil)
	if err != nil {
		return nil, fmt.Errorf("replica.BAMLP: simplex over %d pattern orbits and %d constraints: %w", no, nr, err)
	}
	mix := &BAMMixture{Margin: math.Inf(1)}
	for o, members := range orbits {
		if sol[o] <= 1e-9 {
			continue
		}
		mix.Objective += sol[o] * energy[o]
		for _, p := range members {
			mix.Patterns = append(mix.Patterns, pats[p])
			mix.Psi = append(mix.Psi, sol[o]/float64(len(members)))
		}
	}
	tot := 0.0
	for _, v := range mix.Psi {
		tot += v
	}
	for j := range mix.Psi {
		mix.Psi[j] /= tot
	}
	mix.Objective /= tot
	for _, row := range rows {
		s := 0.0
		for o := range orbits {
			s += sol[o] / tot * row[o]
		}
		mix.Margin = math.Min(mix.Margin, s)
	}
	return mix, nil
}

func indexOf(pats [][]float64, p []float64) int {
	for i, q := range pats {
		same := true
		for r := range q {
			if q[r] != p[r] {
				same = false
				break
			}
		}
		if same {
			return i
		}
	}
	return -1
}

// KoskoBlocks returns the blocks of the BAM ansatz (Eq. 26): block a holds
// the fraction ψ_a of the units, with weights u^a(σ) = amp Σ_k σ_k ξ̂^k_a.
func KoskoBlocks(cl *Classes, mix *BAMMixture, amp float64) []Block {
	out := make([]Block, len(mix.Patterns))
	for a, p := range mix.Patterns {
		out[a] = Block{Frac: mix.Psi[a], U: spanWeights(cl, scaled(p, amp))}
	}
	return out
}

func scaled(p []float64, a float64) []float64 {
	out := make([]float64, len(p))
	for i := range p {
		out[i] = a * p[i]
	}
	return out
}

// BAMStart bootstraps the small-γ (BAM) phase the way the paper does
// (Section VI): a feasible sign assignment and block fractions ψ from the
// linear programme of Appendix J (BAMLP with opts), Kosko weights (Eq. 26)
// as the starting point, then Solve at p.Gamma. Several amplitudes of the Kosko weights are
// tried; the first that converges to a solution with Ω = K states is
// returned.
func BAMStart(ctx context.Context, p Problem, opts BAMOptions) (*Solution, *BAMMixture, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if err := p.check(); err != nil {
		return nil, nil, err
	}
	mix, err := BAMLP(p.Classes, opts)
	if err != nil {
		return nil, nil, err
	}
	var last error
	for _, amp := range []float64{1, 0.5, 2, 0.25, 4} {
		sol, err := Solve(ctx, p, KoskoBlocks(p.Classes, mix, amp))
		if err != nil {
			if ctx.Err() != nil {
				return nil, mix, err
			}
			last = err
			continue
		}
		if len(sol.States) == p.Classes.K {
			return sol, mix, nil
		}
		last = fmt.Errorf("amplitude %g: Ω = %d states, want K = %d", amp, len(sol.States), p.Classes.K)
	}
	return nil, mix, fmt.Errorf("replica.BAMStart: γ = %g: no BAM solution from the LP blocks: %w", p.Gamma, last)
}

// BAMViolation checks the BAM inequalities (Eq. 25) at a solution with one
// state per data point (Ω = K). With ξ̂^k_b = sign⟨h_b⟩^k the hidden signs of
// the state reached from data point k, it returns the most negative of
//
//	ξ̂^k_b Σ_i w_iµ ξ^k_i   and   ξ^k_i ξ̂^k · (Σ_µ w_iµ ξ̂^k_µ) per site class,
//
// (≥ 0 when Eq. 25 holds), normalised by the largest magnitude of each kind.
func (s *Solution) BAMViolation() (float64, error) {
	cl := s.Problem.Classes
	k, c := cl.K, len(cl.F)
	if len(s.States) != k {
		return 0, fmt.Errorf("replica: BAMViolation needs Ω = K = %d states, have %d", k, len(s.States))
	}
	hat := make([][]float64, k) // hat[k][b]
	for _, st := range s.States {
		if len(st.From) != 1 {
			return 0, fmt.Errorf("replica: BAMViolation: a state is reached from data points %v", st.From)
		}
		l := st.From[0]
		hat[l] = make([]float64, len(s.Blocks))
		for b, h := range st.H {
			hat[l][b] = math.Copysign(1, h)
		}
	}
	in := s.Inputs()
	worst, scale := math.Inf(1), 0.0
	for b := range s.Blocks {
		for l := 0; l < k; l++ {
			x := hat[l][b] * in.At(b, l)
			worst = math.Min(worst, x)
			scale = math.Max(scale, math.Abs(x))
		}
	}
	first := worst / scale
	worst, scale = math.Inf(1), 0
	for j := 0; j < c; j++ {
		for l := 0; l < k; l++ {
			x := 0.0
			for b, bl := range s.Blocks {
				x += bl.Frac * bl.U[j] * hat[l][b]
			}
			x *= cl.Sigma[j*k+l] * s.Problem.Alpha
			worst = math.Min(worst, x)
			scale = math.Max(scale, math.Abs(x))
		}
	}
	return math.Min(first, worst/scale), nil
}

// KoskoCosine returns the cosine between W and the Kosko weights of
// Eq. 26, Σ_k ξ^k_i ξ̂^k_µ with ξ̂^k_µ = sign⟨h_µ⟩^k, in the inner product
// Σ_iµ; it needs Ω = K states. It tends to 1 as γ → 0 in the BAM phase.
func (s *Solution) KoskoCosine() (float64, error) {
	cl := s.Problem.Classes
	k := cl.K
	if len(s.States) != k {
		return 0, fmt.Errorf("replica: KoskoCosine needs Ω = K = %d states, have %d", k, len(s.States))
	}
	hat := make([][]float64, len(s.Blocks))
	for b := range hat {
		hat[b] = make([]float64, k)
	}
	for _, st := range s.States {
		for b, h := range st.H {
			hat[b][st.From[0]] = math.Copysign(1, h)
		}
	}
	dot, n1, n2 := 0.0, 0.0, 0.0
	for b, bl := range s.Blocks {
		ko := spanWeights(cl, hat[b])
		for j, f := range cl.F {
			dot += bl.Frac * f * bl.U[j] * ko[j]
			n1 += bl.Frac * f * bl.U[j] * bl.U[j]
			n2 += bl.Frac * f * ko[j] * ko[j]
		}
	}
	return dot / math.Sqrt(n1*n2), nil
}

// KoskoCosineOf is KoskoCosine for trained weights: the cosine, in the inner
// product Σ_iµ, between w (N×M) and the Kosko weights of Eq. 26,
// Σ_k ξ^k_i ξ̂^k_µ, with ξ̂^k_µ = sign(Σ_j ξ^k_j w_jµ) the sign of hidden unit
// µ's input with data point k clamped (in the BAM phase the sign of ⟨h_µ⟩ in
// the state of data point k). xi is the K×N data matrix. The paper's Figs.
// 4B–D compare trained weights with Eq. 26 this way: the cosine tends to 1
// as γ → 0. Units whose input is exactly zero count with ξ̂ = +1.
func KoskoCosineOf(xi, w mat.Matrix) (float64, error) {
	k, n := xi.Dims()
	nw, m := w.Dims()
	if k == 0 || n == 0 || m == 0 {
		return 0, fmt.Errorf("replica: KoskoCosineOf: empty data (%d×%d) or weights (%d×%d)", k, n, nw, m)
	}
	if nw != n {
		return 0, fmt.Errorf("replica: KoskoCosineOf: weights have %d rows, data have N = %d columns", nw, n)
	}
	var hat mat.Dense
	hat.Mul(xi, w) // K×M inputs
	hat.Apply(func(_, _ int, v float64) float64 { return math.Copysign(1, v) }, &hat)
	var ko mat.Dense
	ko.Mul(xi.T(), &hat) // N×M
	nk, nwn := mat.Norm(&ko, 2), mat.Norm(w, 2)
	if nk == 0 || nwn == 0 {
		return 0, fmt.Errorf("replica: KoskoCosineOf: zero weights or zero Kosko weights")
	}
	dot := 0.0
	for i := 0; i < n; i++ {
		for mu := 0; mu < m; mu++ {
			dot += w.At(i, mu) * ko.At(i, mu)
		}
	}
	return dot / (nk * nwn), nil
}
