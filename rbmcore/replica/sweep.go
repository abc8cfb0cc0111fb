package replica

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// SweepOptions tunes a continuation in γ. The zero value is usable.
type SweepOptions struct {
	// LocateTol is the γ resolution to which structural transitions
	// (changes of Ω, of the block count, of the rank, onset of spontaneous
	// activity, W → 0) are bracketed; default 1e-3.
	LocateTol float64
	// MinStep is the smallest step before the sweep gives up; default 1e-7.
	MinStep float64
	// Progress, when non-nil, is called after each requested γ is reached.
	Progress func(done, total int)
	// Symmetry, when non-nil, holds permutations of the data points under
	// which the data are symmetric (e.g. Tree.Automorphisms; perm[k] =
	// image of point k). At the end of a branch (a fold, where the states
	// lose stability) Sweep then switches to the branch whose weights share
	// the symmetry of the surviving states and reports an Event of kind
	// "jump"; without it, or if that fails, Sweep stops with ErrBranchEnd.
	Symmetry [][]int
}

// Event is a structural change between two consecutive solutions of a
// sweep, bracketed in [Lo, Hi] (in sweep order: the change happens between
// γ = Lo and γ = Hi).
type Event struct {
	Kind   string  // "states", "blocks", "rank", "overlaps", "spontaneous", "zero", "jump", "end"
	Lo, Hi float64 // γ bracket of the change, in sweep order
	Detail string  // e.g. "Ω 6 → 2"
}

// String formats the event in one line.
func (e Event) String() string {
	return fmt.Sprintf("%-11s γ ∈ [%.6g, %.6g]: %s", e.Kind, e.Lo, e.Hi, e.Detail)
}

// Path is the result of a sweep: one solution per requested γ, and the
// structural events met on the way.
type Path struct {
	Solutions []*Solution // one per requested γ, in order
	Events    []Event     // structural changes met on the way
	Steps     int         // continuation steps taken (accepted), requested points included
	Rejected  int         // steps rejected and halved
}

// String lists the events.
func (p *Path) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replica.Path: %d points, %d steps (%d rejected), %d events\n", len(p.Solutions), p.Steps, p.Rejected, len(p.Events))
	for _, e := range p.Events {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

// signature is the discrete structure of a solution used to detect transitions.
type signature struct {
	omega, blocks, rank, overlaps int
	spontaneous, zero             bool
}

// signatureOf returns the signature of s, computed once and cached in s (the
// solvers never modify a Solution after returning it; Sweep recomputes the
// signature of its start, which the caller may have changed).
func signatureOf(s *Solution) signature {
	if s.sig != nil {
		return *s.sig
	}
	sg := computeSignature(s)
	s.sig = &sg
	return sg
}

func computeSignature(s *Solution) signature {
	sv := s.SingularValues()
	zero := len(sv) == 0 || sv[0] < 1e-9
	rank := 0 // as s.Rank(1e-6), without a second eigen-decomposition
	for _, x := range sv {
		if sv[0] >= 1e-12 && x > 1e-6*sv[0] {
			rank++
		}
	}
	return signature{
		omega:       len(s.States),
		blocks:      len(s.Blocks),
		rank:        rank,
		overlaps:    len(s.DistinctOverlaps(1e-6)),
		spontaneous: !zero && sv[0]*sv[0] > 1,
		zero:        zero,
	}
}

func (a signature) events(b signature, lo, hi float64) []Event {
	var out []Event
	add := func(kind, f string, x, y any) {
		out = append(out, Event{Kind: kind, Lo: lo, Hi: hi, Detail: fmt.Sprintf(f, x, y)})
	}
	if a.zero != b.zero {
		add("zero", "W = 0: %v → %v", a.zero, b.zero)
	}
	if a.spontaneous != b.spontaneous {
		add("spontaneous", "top eigenvalue of Σ_µ w_iµ w_jµ > 1: %v → %v", a.spontaneous, b.spontaneous)
	}
	if a.omega != b.omega {
		add("states", "Ω %d → %d", a.omega, b.omega)
	}
	if a.overlaps != b.overlaps {
		add("overlaps", "distinct overlaps Q^ω_k %d → %d", a.overlaps, b.overlaps)
	}
	if a.blocks != b.blocks {
		add("blocks", "blocks %d → %d", a.blocks, b.blocks)
	}
	if a.rank != b.rank {
		add("rank", "rank %d → %d", a.rank, b.rank)
	}
	return out
}

var errRefine = errors.New("step too coarse")

// ErrBranchEnd is returned (wrapped) by Sweep when the continued solution
// ceases to exist: its thermodynamic states lose stability and no
// self-consistent set of states continues it (a fold, where trained weights
// would jump to another branch, e.g. at the first transition of Fig. 4A when
// sweeping up from the BAM phase, unless SweepOptions.Symmetry lets Sweep
// switch branches). The path up to the fold is returned with an Event of
// kind "end"; another branch must be started explicitly.
var ErrBranchEnd = errors.New("solution branch ends")

// Sweep continues the solution start through the requested values of γ
// (in the given order, e.g. increasing from the BAM phase), hot-starting
// each step from the last solutions with a polynomial predictor in ln γ
// (degree up to 4; none across a structural event). Steps are
// halved when Newton fails, when the solution jumps, or when the structure
// changes over a step larger than LocateTol, so every transition is
// bracketed within LocateTol. The problem options (α, mode, tolerances)
// are those of start.
func Sweep(ctx context.Context, start *Solution, gammas []float64, opt SweepOptions) (*Path, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if start == nil {
		return nil, fmt.Errorf("replica.Sweep: start solution is nil")
	}
	if opt.LocateTol == 0 {
		opt.LocateTol = 1e-3
	}
	if opt.MinStep == 0 {
		opt.MinStep = 1e-7
	}
	for i, g := range gammas {
		if !(g > 0) || math.IsInf(g, 0) {
			return nil, fmt.Errorf("replica.Sweep: gammas[%d] = %g, need a finite γ > 0", i, g)
		}
	}
	path := &Path{}
	// cur is the last solution; hist holds up to predictOrder earlier ones
	// of the same structure (most recent first) for the predictor.
	st := *start
	st.sig = nil
	cur := &st
	var hist []*Solution
	for i, target := range gammas {
		step := target - cur.Problem.Gamma
		for cur.Problem.Gamma != target {
			if err := ctx.Err(); err != nil {
				return path, fmt.Errorf("replica.Sweep: interrupted at γ = %g: %w", cur.Problem.Gamma, err)
			}
			g := cur.Problem.Gamma + step
			if (step > 0 && g > target) || (step < 0 && g < target) || math.Abs(target-g) < 1e-3*math.Abs(step) {
				g = target
			}
			dg := math.Abs(g - cur.Problem.Gamma)
			next, err := continueTo(ctx, cur, hist, g, dg > opt.LocateTol, dg > 64*opt.MinStep)
			if err != nil {
				if ctx.Err() != nil {
					return path, fmt.Errorf("replica.Sweep: interrupted at γ = %g: %w", cur.Problem.Gamma, ctx.Err())
				}
				if errors.Is(err, errOscillate) && dg <= opt.LocateTol {
					if opt.Symmetry != nil {
						next, detail, err2 := switchBranch(ctx, cur, g, opt.Symmetry)
						if err2 == nil {
							path.Steps++
							path.Events = append(path.Events, Event{Kind: "jump", Lo: cur.Problem.Gamma, Hi: g, Detail: detail})
							path.Events = append(path.Events, signatureOf(cur).events(signatureOf(next), cur.Problem.Gamma, g)...)
							hist, cur = nil, next
							continue
						}
						err = fmt.Errorf("%v; branch switch failed: %w", err, err2)
					}
					path.Events = append(path.Events, Event{Kind: "end", Lo: cur.Problem.Gamma, Hi: g, Detail: "branch ends: its states lose stability (fold)"})
					return path, fmt.Errorf("replica.Sweep: %w at γ ∈ [%g, %g]: %v", ErrBranchEnd, cur.Problem.Gamma, g, err)
				}
				if math.Abs(g-cur.Problem.Gamma) <= opt.MinStep {
					return path, fmt.Errorf("replica.Sweep: stuck at γ = %g (step %g): %w", cur.Problem.Gamma, g-cur.Problem.Gamma, err)
				}
				path.Rejected++
				step = (g - cur.Problem.Gamma) / 2
				continue
			}
			path.Steps++
			evs := signatureOf(cur).events(signatureOf(next), cur.Problem.Gamma, g)
			path.Events = append(path.Events, evs...)
			switch {
			case !sameStructure(cur, next):
				hist = nil
			case len(evs) > 0: // e.g. W = 0 → W ≠ 0: no prediction across it
				hist = nil
				step *= 2
			default:
				hist = append([]*Solution{cur}, hist...)
				if len(hist) > predictOrder {
					hist = hist[:predictOrder]
				}
				step *= 2 // grow back after successful steps
			}
			cur = next
			if rem := target - cur.Problem.Gamma; math.Abs(step) > math.Abs(rem) && rem != 0 {
				step = rem
			}
		}
		out := *cur
		out.fact = nil // the path keeps no factorisations (~0.5 MB each for the BAM branch)
		path.Solutions = append(path.Solutions, &out)
		if opt.Progress != nil {
			opt.Progress(i+1, len(gammas))
		}
	}
	return path, nil
}

func sameStructure(a, b *Solution) bool {
	return a != nil && b != nil && len(a.Blocks) == len(b.Blocks) && len(a.States) == len(b.States)
}

// predictOrder is the highest degree of the predictor polynomial. Measured on
// the BAM branch of Fig. 4 with 200 equal steps (BenchmarkSweepBAM200): the
// predicted residual falls from 4e-5 (degree 1) to 1e-6, 3e-8, 1e-9
// (degrees 2, 3, 4), and the chord steps per continuation step from 5 to 2.
const predictOrder = 4

// continueTo solves at γ = g from cur, predicting the start by polynomial
// extrapolation in ln γ through cur and the earlier solutions hist (same
// structure, most recent first; degree len(hist)). With strict set
// it refuses (errRefine) a structural change, with noJump a jump of the
// weights, so that the caller halves the step.
func continueTo(ctx context.Context, cur *Solution, hist []*Solution, g float64, strict, noJump bool) (*Solution, error) {
	p := cur.Problem
	p.Gamma = g
	phi := make([]float64, len(cur.Blocks))
	for b, bl := range cur.Blocks {
		phi[b] = bl.Frac
	}
	e := newEngine(&p, phi)
	if p.Mode == DataSpan {
		if err := e.initDataSpan(); err != nil {
			return nil, err
		}
	}
	e.setOmega(0)
	blocks := cur.Blocks
	states := make([]rawState, len(cur.States))
	for w, st := range cur.States {
		states[w] = rawState{v: st.V, h: append([]float64(nil), st.H...), from: st.From}
	}
	if len(hist) > 0 {
		pts := append([]*Solution{cur}, hist...)
		lw := lagrange(pts, g)
		blocks = make([]Block, len(cur.Blocks))
		for b := range blocks {
			u := make([]float64, len(cur.Blocks[b].U))
			for i, s := range pts {
				for j, x := range s.Blocks[b].U {
					u[j] += lw[i] * x
				}
			}
			blocks[b] = Block{Frac: cur.Blocks[b].Frac, U: u}
		}
		for w := range states {
			h := states[w].h
			for b := range h {
				h[b] = 0
				for i, s := range pts {
					h[b] += lw[i] * s.States[w].H[b]
				}
			}
		}
	}
	if onParamagneticBranch(cur) {
		// W = 0 is a solution at every γ; below the threshold Kγ < λ_max the
		// non-trivial branch bifurcates from it along Eq. 23, which is also
		// the exact solution while there are no states. Start from Eq. 23:
		// Newton from the small weights near the threshold (or a
		// prediction through W = 0) falls onto W = 0 (checked,
		// TestThresholdIsLambdaMaxOverK).
		_, bl, err := Paramagnetic(p.Classes, g)
		if err != nil {
			return nil, err
		}
		if bl != nil {
			e = newEngine(&p, []float64{1})
			if p.Mode == DataSpan {
				if err := e.initDataSpan(); err != nil {
					return nil, err
				}
			}
			e.setOmega(0)
			blocks, states = []Block{*bl}, nil
		}
	}
	if err := e.setWeights(blocks); err != nil {
		return nil, err
	}
	e.fact = cur.fact // chord steps with the last factorisation while it converges fast
	sol, err := e.solve(ctx, &p, states)
	if err != nil {
		return nil, err
	}
	if strict && signatureOf(sol) != signatureOf(cur) {
		return nil, errRefine
	}
	// a jump: the weights moved much more than the step suggests
	if noJump && len(sol.Blocks) == len(blocks) {
		if d, n := blockDistance(sol, blocks), math.Sqrt(cur.Norm()/p.Alpha); d > 0.1*(n+0.1) {
			return nil, errRefine
		}
	}
	return sol, nil
}

// onParamagneticBranch reports whether s is W = 0 or the one-block
// solution of Eq. 23 without states (the branch Paramagnetic follows).
func onParamagneticBranch(s *Solution) bool {
	if signatureOf(s).zero {
		return true
	}
	if len(s.States) != 0 || len(s.Blocks) != 1 {
		return false
	}
	_, bl, err := Paramagnetic(s.Problem.Classes, s.Problem.Gamma)
	if err != nil || bl == nil {
		return false
	}
	return blockDistance(s, []Block{*bl}) <= 1e-8*(1+math.Sqrt(s.Norm()/s.Problem.Alpha))
}

// lagrange returns the weights of the interpolating polynomial in ln γ
// through the solutions pts evaluated at g. The variable is ln γ because
// the weights vary on the scale of γ itself (‖W‖ grows like ln(1/γ) as
// γ → 0, not like 1/γ as the paper states): with equal steps in γ a polynomial in γ
// predicts poorly at small γ.
func lagrange(pts []*Solution, g float64) []float64 {
	w := make([]float64, len(pts))
	x := math.Log(g)
	for i, a := range pts {
		w[i] = 1
		xa := math.Log(a.Problem.Gamma)
		for j, b := range pts {
			if j != i {
				xb := math.Log(b.Problem.Gamma)
				w[i] *= (x - xb) / (xa - xb)
			}
		}
	}
	return w
}

// blockDistance is the f-weighted distance between the blocks of a solution
// and reference blocks (same count; sign-insensitive per block), or +Inf.
func blockDistance(s *Solution, ref []Block) float64 {
	if len(s.Blocks) != len(ref) {
		return math.Inf(1)
	}
	f := s.Problem.Classes.F
	tot := 0.0
	for b := range ref {
		dp, dm := 0.0, 0.0
		for j := range f {
			a, c := s.Blocks[b].U[j], ref[b].U[j]
			dp += f[j] * (a - c) * (a - c)
			dm += f[j] * (a + c) * (a + c)
		}
		tot += ref[b].Frac * math.Min(dp, dm)
	}
	return math.Sqrt(tot)
}
