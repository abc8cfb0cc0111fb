package replica

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// Mode selects the parametrisation of the weights.
type Mode int

const (
	// Exact solves Eq. 21 on site classes: the weights of a block are one
	// value per class, u^b(σ) = N w_iµ for sites i of class σ.
	Exact Mode = iota
	// DataSpan restricts the weights to the data span (Eq. F1),
	// u^b(σ) = Σ_k σ_k c^k_b, and solves the projection of Eq. F12 on the
	// data (Appendix F). Eq. 21 then holds only up to the part of
	// Σ_ω ⟨v⟩^ω⟨h⟩^ω outside the data span (reported as Res21).
	DataSpan
)

// String returns "exact" or "data-span".
func (m Mode) String() string {
	if m == DataSpan {
		return "data-span"
	}
	return "exact"
}

// Problem fixes the data (through its class table), the aspect ratio
// α = M/N, the regularisation γ and the numerical options. The zero values
// of Mode, LabelledEqual, Tol, MaxNewton and MaxRelax mean Exact, the
// paper's state weights 1/Ω, 1e-11, 60 and 20000.
type Problem struct {
	Classes *Classes // site classes of the data (required)
	Alpha   float64  // M/N > 0
	Gamma   float64  // regularisation strength > 0
	Mode    Mode     // parametrisation of the weights
	// LabelledEqual selects the weight π_ω of each state ω in the model term
	// of Eq. 21, ⟨v h⟩ = Σ_ω π_ω ⟨v⟩^ω⟨h⟩^ω. False
	// (the default) is the paper's printed rule (Eqs. 15–17, 21): each of
	// the Ω distinct states gets π_ω = 1/Ω, however many data points reach
	// it. True counts each data point's Mattis state with weight 1/K:
	// π_ω = |From_ω|/K, the share of the data points whose Mattis
	// initialisation reaches ω, as the data term (1/K) Σ_k weighs the data
	// points. The two agree when every data point has its own state
	// (Ω = K) and differ when data points share a state. A state that no
	// data point reaches (a state continued by Sweep while it stays stable)
	// gets π_ω = 0: a metastable state of the model that the data do not
	// select stays a solution of Eq. 20 without entering Eq. 21. Data points
	// whose Mattis iteration ends paramagnetic (⟨v⟩ = ⟨h⟩ = 0) contribute
	// nothing, so Σ_ω π_ω can be below 1.
	LabelledEqual bool
	Tol           float64 // max residual of Eqs. 20 and 21 (solved rows) at a solution
	MaxNewton     int     // Newton steps per state configuration
	MaxRelax      int     // relaxation steps when Newton fails from the start (default 20000)
}

func (p *Problem) check() error {
	if p.Classes == nil || len(p.Classes.F) == 0 {
		return fmt.Errorf("replica: Problem.Classes is empty")
	}
	if !(p.Alpha > 0) || math.IsInf(p.Alpha, 0) {
		return fmt.Errorf("replica: Problem.Alpha = %g, need a finite M/N > 0", p.Alpha)
	}
	if !(p.Gamma > 0) || math.IsInf(p.Gamma, 0) {
		return fmt.Errorf("replica: Problem.Gamma = %g, need a finite γ > 0", p.Gamma)
	}
	if p.Mode != Exact && p.Mode != DataSpan {
		return fmt.Errorf("replica: Problem.Mode = %d is not Exact or DataSpan", p.Mode)
	}
	if p.Tol == 0 {
		p.Tol = 1e-11
	}
	if !(p.Tol > 0) {
		return fmt.Errorf("replica: Problem.Tol = %g, need > 0", p.Tol)
	}
	if p.MaxNewton == 0 {
		p.MaxNewton = 60
	}
	if p.MaxRelax == 0 {
		p.MaxRelax = 20000
	}
	return nil
}

// Block is a set of identical hidden units: a fraction Frac of the M units,
// each with weights w_iµ = U[c]/N on the sites i of class c (with the sign
// of the site relative to its class pattern).
type Block struct {
	Frac float64   // share of the M hidden units in the block
	U    []float64 // weight per site class, scaled by N
}

// State is one saddle point ω of the mean-field equations (Eq. 20), a
// thermodynamic state of the trained RBM.
type State struct {
	V    []float64 // ⟨v_i⟩^ω for the sites of each class (class pattern orientation)
	H    []float64 // ⟨h_µ⟩^ω for the units of each block
	Q    []float64 // overlaps Q^ω_k = (1/N) Σ_i ξ^k_i ⟨v_i⟩^ω with the data (Eq. 11)
	From []int     // data points (0-based) whose Mattis initialisation reached it
	Psi  float64   // (1/N) ln Z − (1+α) ln 2 evaluated at this state
}

// Solution is a stationary point of the regularised likelihood: the blocks
// of hidden units and the Ω distinct saddle points of Eq. 20, with residuals
// and the log-likelihood per visible unit.
type Solution struct {
	Problem Problem // the problem solved
	Blocks  []Block // blocks of identical hidden units
	States  []State // the Ω distinct thermodynamic states
	Res20   float64 // max residual of Eq. 20 over states, classes and blocks
	Res21   float64 // max residual of Eq. 21 over classes and blocks (per site, per unit)
	ResProj float64 // DataSpan: max residual of the projected Eq. F12; Exact: = Res21
	LogLik  float64 // L(W)/N (Eq. 6) in the N → ∞ limit, constants included
	Spread  float64 // max_ω Psi − min_ω Psi: how far the mixed states are from degenerate
	Newton  int     // Newton steps spent

	fact *factorisation // Jacobian factorisation at (or near) this solution, for chord steps of the next continuation step
	sig  *signature     // structure of the solution, cached by signatureOf
}

// Solve finds a stationary point of L (Eqs. 20 and 21 simultaneously)
// starting from the given blocks (fractions are normalised). The states are
// found by Mattis initialisation at every data point; the weights and the
// states are then solved jointly by Newton's method with line search, and
// the state search is repeated until the set of states is self-consistent.
// When Newton fails from the start, Solve relaxes the weights with the damped
// fixed-point iteration (Problem.MaxRelax steps) and tries Newton again; if
// that fails too, it solves from the same start at γ·2^j (j = 1, …, 6) and
// continues the first solution found back to γ (Sweep). It returns an error
// if all three fail. Coinciding blocks (up to sign) are merged in the result.
func Solve(ctx context.Context, p Problem, init []Block) (*Solution, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if err := p.check(); err != nil {
		return nil, err
	}
	e, err := startEngine(&p, init)
	if err != nil {
		return nil, err
	}
	z0 := append([]float64(nil), e.z[:e.b*e.d]...)
	sol, err := e.solve(ctx, &p, nil)
	if err == nil || ctx.Err() != nil {
		return sol, err
	}
	// Globalise: relax from the initial weights, then Newton again.
	e.setOmega(0)
	copy(e.z, z0)
	if _, _, err := e.relax(ctx, 0.5, 1e-4, p.MaxRelax); err != nil {
		return nil, fmt.Errorf("replica.Solve: γ = %g: %w", p.Gamma, err)
	}
	sol, err2 := e.solve(ctx, &p, nil)
	if err2 == nil || ctx.Err() != nil {
		return sol, err2
	}
	// The damped iteration can cycle when the set of states found from the
	// data points changes with the weights. Last resort: solve from the
	// same start at larger γ, where the landscape is smoother, and continue
	// the solution back down to γ.
	sol, err3 := solveByContinuation(ctx, p, init)
	if err3 != nil {
		return nil, fmt.Errorf("replica.Solve: Newton from the start failed (%v), after relaxation (%v), and by continuation from larger γ: %w", err, err2, err3)
	}
	return sol, nil
}

// contDoublings is how many times solveByContinuation doubles γ.
const contDoublings = 6

// solveByContinuation solves from init at γ·2^j, j = 1, …, contDoublings
// (Newton from the start only), and continues the first solution found back
// to γ with Sweep; it returns the first continuation that reaches γ.
func solveByContinuation(ctx context.Context, p Problem, init []Block) (*Solution, error) {
	var last error
	for j := 1; j <= contDoublings; j++ {
		q := p
		q.Gamma = math.Ldexp(p.Gamma, j)
		e, err := startEngine(&q, init)
		if err != nil {
			return nil, err
		}
		start, err := e.solve(ctx, &q, nil)
		if err == nil {
			var path *Path
			if path, err = Sweep(ctx, start, []float64{p.Gamma}, SweepOptions{}); err == nil {
				return path.Solutions[len(path.Solutions)-1], nil
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("replica: γ = %g: %w", p.Gamma, ctx.Err())
		}
		last = fmt.Errorf("from γ = %g: %w", q.Gamma, err)
	}
	return nil, last
}

// startEngine validates the initial blocks (fractions are normalised) and
// returns an engine loaded with them, with no states yet.
func startEngine(p *Problem, init []Block) (*engine, error) {
	if len(init) == 0 {
		return nil, fmt.Errorf("replica.Solve: no initial blocks")
	}
	c := len(p.Classes.F)
	phi := make([]float64, len(init))
	tot := 0.0
	for b, bl := range init {
		if len(bl.U) != c {
			return nil, fmt.Errorf("replica.Solve: block %d has %d class weights, want %d", b, len(bl.U), c)
		}
		if !(bl.Frac > 0) {
			return nil, fmt.Errorf("replica.Solve: block %d has fraction %g, need > 0", b, bl.Frac)
		}
		phi[b] = bl.Frac
		tot += bl.Frac
	}
	for b := range phi {
		phi[b] /= tot
	}
	e := newEngine(p, phi)
	if p.Mode == DataSpan {
		if err := e.initDataSpan(); err != nil {
			return nil, err
		}
	}
	e.setOmega(0)
	if err := e.setWeights(init); err != nil {
		return nil, err
	}
	return e, nil
}

// setWeights loads block weights into z (projecting on the data span in
// mode DataSpan).
func (e *engine) setWeights(bl []Block) error {
	for b := range bl {
		for _, x := range bl[b].U {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("replica: block %d has a non-finite weight", b)
			}
		}
		if e.mode == Exact {
			copy(e.z[b*e.c:(b+1)*e.c], bl[b].U)
			continue
		}
		for l := 0; l < e.k; l++ {
			s := 0.0
			for j := 0; j < e.c; j++ {
				s += e.xinvSTF[l*e.c+j] * bl[b].U[j]
			}
			e.z[b*e.k+l] = s
		}
	}
	e.weights()
	return nil
}

// initDataSpan precomputes x^{-1} Σᵀ F.
func (e *engine) initDataSpan() error {
	x := e.cl.Overlap()
	var chol mat.Cholesky
	if !chol.Factorize(x) {
		return fmt.Errorf("replica: mode DataSpan needs an invertible overlap matrix x (data points linearly independent)")
	}
	k, c := e.k, e.c
	stf := mat.NewDense(k, c, nil)
	for j := 0; j < c; j++ {
		for l := 0; l < k; l++ {
			stf.Set(l, j, e.cl.Sigma[j*k+l]*e.cl.F[j])
		}
	}
	var out mat.Dense
	if err := chol.SolveTo(&out, stf); err != nil {
		return fmt.Errorf("replica: data-span projection: %w", err)
	}
	e.xinvSTF = out.RawMatrix().Data
	if out.RawMatrix().Stride != c {
		e.xinvSTF = mat.DenseCopyOf(&out).RawMatrix().Data
	}
	return nil
}

// loadStates sets the state unknowns from a state search, and the state
// weights of mode LabelledEqual from the data points that reach each state.
func (e *engine) loadStates(st []rawState) {
	nb := e.b
	e.setOmega(len(st))
	h := e.hOf()
	for w, s := range st {
		copy(h[w*nb:(w+1)*nb], s.h)
		if e.labelled {
			e.pw[w] = float64(len(s.from)) / float64(e.k)
		}
	}
}

// sameWeights reports whether the state weights of st (same order as the
// solved states) equal the ones the solved states were solved with.
func (e *engine) sameWeights(st []rawState) bool {
	if !e.labelled {
		return true
	}
	for w, s := range st {
		if float64(len(s.from))/float64(e.k) != e.pw[w] {
			return false
		}
	}
	return true
}

// solve runs the Newton/state-search loop from the current z. If
// predicted is non-nil it holds a predicted state configuration (hidden
// magnetisations) consistent with the current z.
func (e *engine) solve(ctx context.Context, p *Problem, predicted []rawState) (*Solution, error) {
	st := predicted
	if st == nil {
		st = e.mattis(nil)
	}
	steps := 0
	var found []rawState
	for round := 0; ; round++ {
		if round == 4 {
			return nil, fmt.Errorf("replica: γ = %g: %w", p.Gamma, errOscillate)
		}
		e.loadStates(st)
		it, err := e.newton(ctx, p.Tol, p.MaxNewton)
		steps += it
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("replica: γ = %g: %w", p.Gamma, ctx.Err())
			}
			return nil, fmt.Errorf("replica: γ = %g, Ω = %d: %w", p.Gamma, e.om, err)
		}
		e.weights()
		stable, allStable := e.stableStates()
		found = e.mattis(stable)
		var same bool
		if st, same = nextStates(stable, allStable, found); same && e.sameWeights(st) {
			break
		}
	}
	sol := e.solution(p, found)
	sol.Newton = steps
	if p.Mode == Exact && math.Max(sol.Res20, sol.Res21) > mergedTol {
		return nil, fmt.Errorf("replica: γ = %g: residuals after merging coinciding blocks: Eq. 20 %.3g, Eq. 21 %.3g (above %g)", p.Gamma, sol.Res20, sol.Res21, mergedTol)
	}
	return sol, nil
}

// mergedTol bounds the residuals of a returned solution (mode Exact), after
// coinciding blocks are merged: the Done-when bound of issue 7.
const mergedTol = 1e-10

// errOscillate reports a state set that never becomes self-consistent:
// Newton's solution has saddle points that are not stable, while the stable
// ones found by the Mattis search lead back to it.
var errOscillate = errors.New("the set of saddle points does not settle: the solved states are unstable and the stable ones lead back to them")

// solution packages the current engine state, merging coinciding blocks and
// canonicalising signs.
func (e *engine) solution(p *Problem, found []rawState) *Solution {
	_, _, rs := e.eval()
	k, c, nb := e.k, e.c, e.b
	h := e.hOf()
	// block signs: make the first non-negligible input I^k_b positive
	sign := make([]float64, nb)
	for b := 0; b < nb; b++ {
		sign[b] = 1
		for l := 0; l < k; l++ {
			if x := e.in[b*k+l]; math.Abs(x) > 1e-12 {
				if x < 0 {
					sign[b] = -1
				}
				break
			}
		}
	}
	// merge blocks
	group := make([]int, nb)
	var blocks []Block
	var rep []int
	for b := 0; b < nb; b++ {
		ub := make([]float64, c)
		norm := 0.0
		for j := 0; j < c; j++ {
			ub[j] = sign[b] * e.u[b*c+j]
			norm = math.Max(norm, math.Abs(ub[j]))
		}
		group[b] = -1
		for g, r := range rep {
			d := 0.0
			for j := 0; j < c; j++ {
				d = math.Max(d, math.Abs(ub[j]-sign[r]*e.u[r*c+j]))
			}
			if d <= blockMergeTol*math.Max(1, norm) {
				group[b] = g
				blocks[g].Frac += e.phi[b]
				break
			}
		}
		if group[b] < 0 {
			group[b] = len(rep)
			rep = append(rep, b)
			blocks = append(blocks, Block{Frac: e.phi[b], U: ub})
		}
	}
	sol := &Solution{Problem: *p, Blocks: blocks, ResProj: rs}
	// states, in block-merged variables
	st, flipped := e.mattisFrom(found)
	if !flipped && len(rep) == nb {
		sol.fact = e.fact
		for _, x := range sign {
			if x < 0 {
				sol.fact = nil
			}
		}
	}
	for w := 0; w < e.om; w++ {
		s := State{V: append([]float64(nil), e.v[w*c:(w+1)*c]...), H: make([]float64, len(rep))}
		for g, r := range rep {
			s.H[g] = sign[r] * h[w*nb+r]
		}
		s.From = st[w]
		s.Q = make([]float64, k)
		for l := 0; l < k; l++ {
			q := 0.0
			for j := 0; j < c; j++ {
				q += e.cl.F[j] * e.cl.Sigma[j*k+l] * s.V[j]
			}
			s.Q[l] = q
		}
		sol.States = append(sol.States, s)
	}
	sol.fillLogLik()
	// the residuals of the solution as returned (blocks merged)
	sol.Res20, sol.Res21 = sol.residuals()
	if e.mode == Exact {
		sol.ResProj = sol.Res21
	}
	return sol
}

// residuals returns the largest residuals of Eq. 20 (per state, class and
// block) and of Eq. 21 (per block and class) of the solution.
func (s *Solution) residuals() (r20, r21 float64) {
	cl := s.Problem.Classes
	k, c := cl.K, len(cl.F)
	al, g := s.Problem.Alpha, s.Problem.Gamma
	pi := s.StateWeights()
	for _, st := range s.States {
		for j := 0; j < c; j++ {
			a := 0.0
			for b, bl := range s.Blocks {
				a += bl.Frac * bl.U[j] * st.H[b]
			}
			r20 = math.Max(r20, math.Abs(st.V[j]-math.Tanh(al*a)))
		}
		for b, bl := range s.Blocks {
			a := 0.0
			for j := 0; j < c; j++ {
				a += cl.F[j] * bl.U[j] * st.V[j]
			}
			r20 = math.Max(r20, math.Abs(st.H[b]-math.Tanh(a)))
		}
	}
	for b, bl := range s.Blocks {
		hk := make([]float64, k)
		for l := range hk {
			a := 0.0
			for j := 0; j < c; j++ {
				a += cl.F[j] * cl.Sigma[j*k+l] * bl.U[j]
			}
			hk[l] = math.Tanh(a)
		}
		for j := 0; j < c; j++ {
			x := 0.0
			for l := 0; l < k; l++ {
				x += cl.Sigma[j*k+l] * hk[l]
			}
			x /= float64(k)
			for w, st := range s.States {
				x -= pi[w] * st.V[j] * st.H[b]
			}
			r21 = math.Max(r21, math.Abs(x-g*bl.U[j]))
		}
	}
	return r20, r21
}

// StateWeights returns the weight π_ω of each state in Eq. 21 under
// Problem.LabelledEqual: 1/Ω (false, the paper's rule) or |From_ω|/K (true).
func (s *Solution) StateWeights() []float64 {
	pi := make([]float64, len(s.States))
	for w, st := range s.States {
		if s.Problem.LabelledEqual {
			pi[w] = float64(len(st.From)) / float64(s.Problem.Classes.K)
		} else {
			pi[w] = 1 / float64(len(s.States))
		}
	}
	return pi
}

// mattisFrom maps each solved state to the data points whose Mattis
// initialisation reaches it (st: the search at the converged weights) and
// reports whether a state was re-oriented (sign flipped).
func (e *engine) mattisFrom(st []rawState) (from [][]int, flipped bool) {
	out := make([][]int, e.om)
	// continued states not reached from any data point keep an empty From
	h := e.hOf()
	for _, s := range st {
		for w := 0; w < e.om; w++ {
			if stateDist(s.v, s.h, e.v[w*e.c:(w+1)*e.c], h[w*e.b:(w+1)*e.b]) < stateMergeTol {
				out[w] = append(out[w], s.from...)
				break
			}
		}
	}
	// orient each state so that its overlap with its first data point is ≥ 0
	for w := 0; w < e.om; w++ {
		if len(out[w]) == 0 {
			continue
		}
		l := out[w][0]
		q := 0.0
		for j := 0; j < e.c; j++ {
			q += e.cl.F[j] * e.cl.Sigma[j*e.k+l] * e.v[w*e.c+j]
		}
		if q < 0 {
			flipped = true
			for j := 0; j < e.c; j++ {
				e.v[w*e.c+j] = -e.v[w*e.c+j]
			}
			for b := 0; b < e.b; b++ {
				h[w*e.b+b] = -h[w*e.b+b]
			}
		}
	}
	return out, flipped
}

// logCosh returns ln cosh x without overflow.
func logCosh(x float64) float64 {
	a := math.Abs(x)
	return a + math.Log1p(math.Exp(-2*a)) - math.Ln2
}

// fillLogLik computes L/N and the state free energies:
//
//	L/N = α Σ_b φ_b [(1/K) Σ_k ln 2cosh I^k_b − (γ/2) Σ_σ f_σ u^b(σ)²] − (1/N) ln Z,
//	(1/N) ln Z = (1+α) ln 2 + max_ω Ψ_ω,
//	Ψ_ω = Σ_σ f_σ ln cosh(α Σ_b φ_b h^ω_b u^b(σ)) + α Σ_b φ_b [ln cosh s^ω_b − h^ω_b s^ω_b],
//
// the large-deviation (mean-field) evaluation of Z at its dominant saddle
// points (Ψ = 0 in the paramagnetic phase).
func (s *Solution) fillLogLik() {
	cl := s.Problem.Classes
	k, c := cl.K, len(cl.F)
	al, g := s.Problem.Alpha, s.Problem.Gamma
	l := 0.0
	for _, bl := range s.Blocks {
		d, r := 0.0, 0.0
		for kk := 0; kk < k; kk++ {
			in := 0.0
			for j := 0; j < c; j++ {
				in += cl.F[j] * cl.Sigma[j*k+kk] * bl.U[j]
			}
			d += logCosh(in) + math.Ln2
		}
		for j := 0; j < c; j++ {
			r += cl.F[j] * bl.U[j] * bl.U[j]
		}
		l += al * bl.Frac * (d/float64(k) - g/2*r)
	}
	psiMax, psiMin := 0.0, 0.0
	for w := range s.States {
		st := &s.States[w]
		psi := 0.0
		for j := 0; j < c; j++ {
			a := 0.0
			for b, bl := range s.Blocks {
				a += bl.Frac * st.H[b] * bl.U[j]
			}
			psi += cl.F[j] * logCosh(al*a)
		}
		for b, bl := range s.Blocks {
			sb := 0.0
			for j := 0; j < c; j++ {
				sb += cl.F[j] * bl.U[j] * st.V[j]
			}
			psi += al * bl.Frac * (logCosh(sb) - st.H[b]*sb)
		}
		st.Psi = psi
		if w == 0 || psi > psiMax {
			psiMax = psi
		}
		if w == 0 || psi < psiMin {
			psiMin = psi
		}
	}
	s.Spread = psiMax - psiMin
	s.LogLik = l - (1+al)*math.Ln2 - psiMax
}
