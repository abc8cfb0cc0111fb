package replica

import (
	"context"
	"fmt"
	"math"
)

// Branch switching at the end of a branch (Sweep with SweepOptions.Symmetry).
//
// Sweeping γ up from the tree-symmetric BAM phase (Fig. 4A), the Ω = K states
// of the continued solution lose stability at γ_f ≈ 0.0671 (the top
// eigenvalue of the Jacobian of the alternating iteration of Eq. 20 crosses
// 1; checked). Past γ_f no self-consistent state set exists with the blocks
// held fixed: the state search does not settle, and the paper's damped
// iteration (engine.relax, u ← u + ηG with the states re-found every step)
// ends in a cycle between Ω = 6 and Ω = 2 (checked with 11 blocks, and with
// every block split into 4 perturbed particles it had not converged after
// 500 steps). The paper says only that each γ is hot-started from the
// previous solution (Section VI) and reads the transitions as clustering
// events in which the most similar data points merge (Section V); it does
// not say how the blocks reorganise.
//
// Our resolution (a derivation, stated as such): the states that merge are
// those with the largest mutual overlap q_ωω' (for the Fig. 4 tree, the
// siblings); the new branch has weights invariant under the data symmetries
// that permute the data points only within the merging clusters. Each block
// is replaced by its average over that group G, ū^b(σ) = (1/|G|) Σ_{g∈G}
// u^b(gσ) (its coarse-grained, group-level content), coinciding blocks
// merge, and Eqs. 20–21 are solved from there. For the Fig. 4 data G is the
// 36 permutations within the two groups of siblings, and the 11 blocks of the
// symmetric BAM start collapse to a uniform block (5/6) and a group-contrast
// block (1/6) with Ω = 2 states, m0 = m1 > m2: the first transition of
// Fig. 4A. An independent prototype (a random population of units) lands
// on a two-block branch too (with fractions 1/2, 1/2; transition locations
// depend on the branch).
//
// Limits of this rule (checked, Fig. 4 data, γ = 0.0677): it is a
// coarse-graining, not the paper's dynamics. Under per-unit gradient ascent
// in the environment of the two surviving states, the 9 "cross" blocks of
// the BAM start stay where they are (local maxima of the per-unit
// objective), they do not flow to the uniform block; and the block
// fractions (5/6, 1/6, inherited from the LP) are not optimal: the
// group-contrast units have the larger per-unit objective, and the
// two-block branch with fractions 1/2, 1/2 has a higher likelihood
// (L/N = −0.5140 against −0.5256 at γ = 0.1). The fractions are not fixed by
// Eqs. 15–17, and the paper reports barriers between
// block sizes, so no branch is singled out by the equations alone.

// symTol is the tolerance of the invariance tests of states and class
// fractions under a data permutation.
const symTol = 1e-6

// classAction returns, for a permutation g of the data points (g[r] = image
// of point r), the class index and sign of the image of every class pattern
// (τ_{g[r]} = σ_r, τ = sign·pattern(index)), or ok = false if g does not map
// the class table to itself with equal fractions.
func classAction(cl *Classes, g []int) (idx []int, sgn []float64, ok bool) {
	k, c := cl.K, len(cl.F)
	if len(g) != k {
		return nil, nil, false
	}
	key := func(p []float64) uint64 {
		var x uint64
		for r := range p {
			if p[r]*p[0] < 0 {
				x |= 1 << uint(r)
			}
		}
		return x
	}
	index := make(map[uint64]int, c)
	for j := 0; j < c; j++ {
		index[key(cl.Sigma[j*k:(j+1)*k])] = j
	}
	idx, sgn = make([]int, c), make([]float64, c)
	tau := make([]float64, k)
	for j := 0; j < c; j++ {
		for r := 0; r < k; r++ {
			if g[r] < 0 || g[r] >= k {
				return nil, nil, false
			}
			tau[g[r]] = cl.Sigma[j*k+r]
		}
		i, found := index[key(tau)]
		if !found || math.Abs(cl.F[i]-cl.F[j]) > symTol*math.Max(cl.F[j], 1e-300) {
			return nil, nil, false
		}
		idx[j], sgn[j] = i, tau[0]
	}
	return idx, sgn, true
}

// switchBranch continues cur to γ = g across the end of its branch (see
// above). It returns the solution on the new branch and a description.
func switchBranch(ctx context.Context, cur *Solution, g float64, sym [][]int) (*Solution, string, error) {
	cl := cur.Problem.Classes
	k, om := cl.K, len(cur.States)
	if om < 2 {
		return nil, "", fmt.Errorf("%d states: nothing to merge", om)
	}
	// Cluster the states: join the pairs with the largest overlap q_ωω'.
	q := func(a, b int) float64 {
		s := 0.0
		for j, f := range cl.F {
			s += f * cur.States[a].V[j] * cur.States[b].V[j]
		}
		return math.Abs(s)
	}
	qmax := math.Inf(-1)
	for a := 0; a < om; a++ {
		for b := a + 1; b < om; b++ {
			qmax = math.Max(qmax, q(a, b))
		}
	}
	comp := make([]int, om)
	for a := range comp {
		comp[a] = a
	}
	root := func(a int) int {
		for comp[a] != a {
			a = comp[a]
		}
		return a
	}
	for a := 0; a < om; a++ {
		for b := a + 1; b < om; b++ {
			if q(a, b) >= qmax-symTol {
				comp[root(b)] = root(a)
			}
		}
	}
	cluster := make([]int, k)
	for i := range cluster {
		cluster[i] = -1
	}
	for a, st := range cur.States {
		for _, l := range st.From {
			cluster[l] = root(a)
		}
	}
	// The data symmetries that keep every cluster in place.
	var gIdx [][]int
	var gSgn [][]float64
	for _, perm := range sym {
		ix, sg, ok := classAction(cl, perm)
		if !ok {
			continue
		}
		for l := 0; l < k && ok; l++ {
			ok = cluster[l] == cluster[perm[l]]
		}
		if ok {
			gIdx, gSgn = append(gIdx, ix), append(gSgn, sg)
		}
	}
	if len(gIdx) < 2 {
		return nil, "", fmt.Errorf("no data symmetry permutes the states within their clusters")
	}
	blocks := make([]Block, len(cur.Blocks))
	for b, bl := range cur.Blocks {
		u := make([]float64, len(bl.U))
		for a := range gIdx {
			for j := range u {
				u[j] += gSgn[a][j] * bl.U[gIdx[a][j]]
			}
		}
		for j := range u {
			u[j] /= float64(len(gIdx))
		}
		blocks[b] = Block{Frac: bl.Frac, U: u}
	}
	p := cur.Problem
	p.Gamma = g
	sol, err := Solve(ctx, p, blocks)
	if err != nil {
		return nil, "", fmt.Errorf("solve from the symmetrised weights: %w", err)
	}
	if len(sol.States) >= om {
		return nil, "", fmt.Errorf("the symmetrised weights lead back to %d states", len(sol.States))
	}
	return sol, fmt.Sprintf("branch switch: Ω %d → %d, weights averaged over the %d data symmetries within the merging clusters, blocks %d → %d",
		om, len(sol.States), len(gIdx), len(cur.Blocks), len(sol.Blocks)), nil
}
