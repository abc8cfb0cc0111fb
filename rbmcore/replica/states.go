package replica

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Tolerances of the state search.
const (
	stateIterMax   = 20000 // alternating sweeps per Mattis initialisation
	stateIterTol   = 1e-10 // sweep-to-sweep change that ends the sweeps
	stateZero      = 1e-9  // a state with all |h|, |v| below this is paramagnetic
	stateMergeTol  = 1e-6  // states closer than this (mod sign) are one state
	blockMergeTol  = 1e-9  // blocks closer than this (relative, mod sign) are one block
	stateNewtonMax = 50
	knownStep      = 1e-3 // Mattis sweeps this slow …
	knownNear      = 1e-2 // … this close to a known stable state (mod sign) join it
	knownFar       = 0.1  // … or this close and heading straight for it (headsFor)
	knownCos       = 0.99
)

// rawState is one saddle point of Eq. 20 in class/block variables.
type rawState struct {
	v, h []float64
	from []int // data points whose Mattis initialisation reached it
}

// mattis finds the distinct saddle points of Eq. 20 for the current block
// weights e.u by alternating iteration (h ← tanh(Σ_i w v), v ← tanh(Σ_µ w h),
// which never increases the mean-field free energy) started at each data
// point in turn (Mattis states, Appendix F), polished by Newton's method on
// the B hidden magnetisations. Mirror states (−v, −h) and coinciding states
// are merged; paramagnetic limits are dropped. known holds exact stable
// saddle points at the current weights (the solved states, or nil): an
// iteration that settles next to one of them (step below knownStep and
// headsFor it) is assigned to it without further sweeps, the state being
// returned exactly as known. The K searches are independent and run on up
// to mattisWorkers goroutines; they are merged in data-point order, so the
// result does not depend on the scheduling.
func (e *engine) mattis(known []rawState) []rawState {
	k, c, nb := e.k, e.c, e.b
	f, sig := e.cl.F, e.cl.Sigma
	hs := make([]float64, k*nb) // the limit of each search
	cp := e.couplings()
	workers := min(mattisWorkers, k, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for l := w; l < k; l += workers {
				e.descend(cp, l, known, hs[l*nb:(l+1)*nb])
			}
		}(w)
	}
	for l := 0; l < k; l += workers {
		e.descend(cp, l, known, hs[l*nb:(l+1)*nb])
	}
	wg.Wait()
	var out []rawState
	v := make([]float64, c)
	for l := 0; l < k; l++ {
		h := hs[l*nb : (l+1)*nb]
		mx := 0.0
		for _, x := range h {
			mx = math.Max(mx, math.Abs(x))
		}
		if mx < stateZero {
			continue
		}
		cp.visible(h, v)
		// orient so that the overlap with the initial data point is ≥ 0
		q := 0.0
		for j := 0; j < c; j++ {
			q += f[j] * sig[j*k+l] * v[j]
		}
		sign := 1.0
		if q < 0 {
			sign = -1
		}
		merged := false
		for i := range out {
			if d := stateDist(out[i].v, out[i].h, v, h); d < stateMergeTol {
				out[i].from = append(out[i].from, l)
				merged = true
				break
			}
		}
		if !merged {
			st := rawState{v: make([]float64, c), h: make([]float64, nb), from: []int{l}}
			for j := range v {
				st.v[j] = sign * v[j]
			}
			for b := range h {
				st.h[b] = sign * h[b]
			}
			out = append(out, st)
		}
	}
	return out
}

// mattisWorkers is the most goroutines a Mattis search uses.
const mattisWorkers = 2

// couplings holds the weights in the layouts of the two half-sweeps of the
// alternating iteration, both contiguous in the summed index: av[j·B+b] =
// α φ_b u^b_j and fu[b·C+j] = f_j u^b_j.
type couplings struct {
	c, b   int
	av, fu []float64
}

func (e *engine) couplings() *couplings {
	c, nb := e.c, e.b
	cp := &couplings{c: c, b: nb, av: make([]float64, c*nb), fu: make([]float64, nb*c)}
	for b := 0; b < nb; b++ {
		for j := 0; j < c; j++ {
			cp.av[j*nb+b] = e.alpha * e.phi[b] * e.u[b*c+j]
			cp.fu[b*c+j] = e.cl.F[j] * e.u[b*c+j]
		}
	}
	return cp
}

// visible sets v ← tanh(α Σ_b φ_b u^b h_b).
func (cp *couplings) visible(h, v []float64) { tanhRows(cp.av, h, v) }

// hidden sets h ← tanh(Σ_c f_c u^b_c v_c).
func (cp *couplings) hidden(v, h []float64) { tanhRows(cp.fu, v, h) }

// tanhRows sets out[i] = tanh(Σ_j m[i][j] x[j]) for the row-major matrix m
// of len(out) rows and len(x) columns.
func tanhRows(m, x, out []float64) {
	n := len(x)
	for i := range out {
		s := 0.0
		for j, mij := range m[i*n : (i+1)*n] {
			s += mij * x[j]
		}
		out[i] = math.Tanh(s)
	}
}

// descend runs the alternating iteration from data point l and stores its
// limit (hidden magnetisations, polished, or the known state it heads for)
// in h. It only reads the engine and cp (the couplings of the current
// weights), so searches may run concurrently.
func (e *engine) descend(cp *couplings, l int, known []rawState, h []float64) {
	k, c, nb := e.k, e.c, e.b
	sig := e.cl.Sigma
	v := make([]float64, c)
	hn := make([]float64, nb)
	hp := make([]float64, nb)
	step := make([]float64, nb)
	for j := 0; j < c; j++ {
		v[j] = sig[j*k+l]
	}
	cp.hidden(v, h)
	dPrev := math.Inf(1)
	nextPolish := 15
	for it := 0; it < stateIterMax; it++ {
		cp.visible(h, v)
		cp.hidden(v, hn)
		d := 0.0
		for b := range h {
			step[b] = hn[b] - h[b]
			d = math.Max(d, math.Abs(step[b]))
		}
		copy(h, hn)
		if d < stateIterTol {
			break
		}
		if d < knownStep {
			for i := range known {
				if headsFor(known[i].h, h, step, d/dPrev) {
					copy(h, known[i].h)
					return
				}
			}
		}
		dPrev = d
		// Slow linear convergence (near a transition): polish by Newton
		// and accept a nearby stable fixed point. The attempts back off
		// exponentially (sweeps 15, 31, 63, …): near a transition they keep
		// failing while the iteration crawls, and each costs far more than
		// a sweep.
		if it >= nextPolish && d < 1e-3 {
			nextPolish = 2*it + 1
			copy(hp, h)
			if r := e.polishState(hp); r < 1e-26 && hDist(hp, h) < 1e-2 && e.stateStable(hp) {
				copy(h, hp)
				return
			}
		}
	}
	e.polishState(h)
}

// headsFor reports whether an iterate h of the alternating iteration, whose
// last step was step (max-norm below knownStep) with contraction ratio rho
// (this step's max-norm over the previous one's), converges to the stable
// state t (up to sign): h is within knownNear of t, or, under slow linear
// convergence (near a transition, where the remaining distance
// |step|·ρ/(1−ρ) can exceed knownNear), within knownFar of t, within three
// times the remaining distance, and moving straight towards it (cosine of
// step and t − h above knownCos).
func headsFor(t, h, step []float64, rho float64) bool {
	sgn := 1.0
	if dp, dm := hDist1(t, h, 1), hDist1(t, h, -1); dm < dp {
		sgn = -1
	}
	dist := hDist1(t, h, sgn)
	if dist < knownNear {
		return true
	}
	if !(rho > 0 && rho < 1) {
		return false
	}
	d := 0.0
	for _, x := range step {
		d = math.Max(d, math.Abs(x))
	}
	if rem := d * rho / (1 - rho); dist > knownFar || dist > 3*rem {
		return false
	}
	dot, ss, tt := 0.0, 0.0, 0.0
	for b := range h {
		x := sgn*t[b] - h[b]
		dot += step[b] * x
		ss += step[b] * step[b]
		tt += x * x
	}
	return dot > knownCos*math.Sqrt(ss*tt)
}

// hDist1 is the max-norm distance between sgn·a and b.
func hDist1(a, b []float64, sgn float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(sgn*a[i]-b[i]))
	}
	return d
}

// stateDist is the max-norm distance between two states up to a global sign.
func stateDist(v1, h1, v2, h2 []float64) float64 {
	dp, dm := 0.0, 0.0
	for i := range v1 {
		dp = math.Max(dp, math.Abs(v1[i]-v2[i]))
		dm = math.Max(dm, math.Abs(v1[i]+v2[i]))
	}
	for i := range h1 {
		dp = math.Max(dp, math.Abs(h1[i]-h2[i]))
		dm = math.Max(dm, math.Abs(h1[i]+h2[i]))
	}
	return math.Min(dp, dm)
}

// polishState refines a saddle point of Eq. 20 by Newton's method on
// F(h) = h − tanh(S(h)), S_b(h) = Σ_c f_c u^b_c tanh(α Σ_b' φ_b' u^b'_c h_b'),
// and returns the final |F|².
func (e *engine) polishState(h []float64) float64 {
	c, nb := e.c, e.b
	f := e.cl.F
	v := make([]float64, c)
	dv := make([]float64, c)
	t := make([]float64, nb)
	r := make([]float64, nb)
	jm := make([]float64, nb*nb)
	ipiv := make([]int, nb)
	h0 := make([]float64, nb)
	eval := func() float64 {
		for j := 0; j < c; j++ {
			a := 0.0
			for b := 0; b < nb; b++ {
				a += e.phi[b] * e.u[b*c+j] * h[b]
			}
			v[j] = math.Tanh(e.alpha * a)
			dv[j] = 1 - v[j]*v[j]
		}
		m := 0.0
		for b := 0; b < nb; b++ {
			s := 0.0
			for j := 0; j < c; j++ {
				s += f[j] * e.u[b*c+j] * v[j]
			}
			t[b] = math.Tanh(s)
			r[b] = h[b] - t[b]
			m += r[b] * r[b]
		}
		return m
	}
	m := eval()
	for it := 0; it < stateNewtonMax && m > 1e-30; it++ {
		for b := 0; b < nb; b++ {
			ds := 1 - t[b]*t[b]
			for b2 := 0; b2 < nb; b2++ {
				s := 0.0
				for j := 0; j < c; j++ {
					s += f[j] * e.u[b*c+j] * dv[j] * e.u[b2*c+j]
				}
				jm[b*nb+b2] = -ds * s * e.alpha * e.phi[b2]
			}
			jm[b*nb+b] += 1
		}
		a := blas64.General{Rows: nb, Cols: nb, Stride: nb, Data: jm}
		if !lapack64.Getrf(a, ipiv) {
			return m
		}
		step := make([]float64, nb)
		for b := range r {
			step[b] = -r[b]
		}
		lapack64.Getrs(blas.NoTrans, a, blas64.General{Rows: nb, Cols: 1, Stride: 1, Data: step}, ipiv)
		copy(h0, h)
		lam := 1.0
		ok := false
		for tries := 0; tries < 20; tries++ {
			for b := range h {
				h[b] = h0[b] + lam*step[b]
			}
			if mm := eval(); mm < m {
				m = mm
				ok = true
				break
			}
			lam /= 2
		}
		if !ok {
			copy(h, h0)
			return eval()
		}
	}
	return m
}

// stateStable reports whether the saddle point of Eq. 20 with hidden
// magnetisations h is a stable fixed point of the alternating iteration
// h ← tanh(S(h)) (a local minimum of the mean-field free energy): the
// spectral radius of its Jacobian diag(1−t²)·α U F diag(1−v²) Uᵀ Φ is below
// 1. That matrix is similar to a symmetric positive semi-definite one, so
// its eigenvalues are real and non-negative.
func (e *engine) stateStable(h []float64) bool {
	c, nb := e.c, e.b
	f := e.cl.F
	dv := make([]float64, c)
	for j := 0; j < c; j++ {
		a := 0.0
		for b := 0; b < nb; b++ {
			a += e.phi[b] * e.u[b*c+j] * h[b]
		}
		v := math.Tanh(e.alpha * a)
		dv[j] = 1 - v*v
	}
	d1 := make([]float64, nb)
	for b := 0; b < nb; b++ {
		d1[b] = 1 - h[b]*h[b] // h = tanh(s) at the fixed point
	}
	// The top eigenvalue of the symmetric positive semi-definite S is below
	// 1 − 1e-9 exactly when (1 − 1e-9)I − S is positive definite: a
	// Cholesky factorisation (lower triangle, in place) that meets no
	// non-positive pivot.
	a := make([]float64, nb*nb)
	for b := 0; b < nb; b++ {
		for b2 := 0; b2 <= b; b2++ {
			m := 0.0
			for j := 0; j < c; j++ {
				m += f[j] * e.u[b*c+j] * dv[j] * e.u[b2*c+j]
			}
			m *= -e.alpha * math.Sqrt(e.phi[b]*d1[b]*e.phi[b2]*d1[b2])
			if b == b2 {
				m += 1 - 1e-9
			}
			a[b*nb+b2] = m
		}
	}
	for j := 0; j < nb; j++ {
		d := a[j*nb+j]
		for q := 0; q < j; q++ {
			d -= a[j*nb+q] * a[j*nb+q]
		}
		if !(d > 0) {
			return false
		}
		d = math.Sqrt(d)
		a[j*nb+j] = d
		for i := j + 1; i < nb; i++ {
			x := a[i*nb+j]
			for q := 0; q < j; q++ {
				x -= a[i*nb+q] * a[j*nb+q]
			}
			a[i*nb+j] = x / d
		}
	}
	return true
}

// stableStates returns the solved states that are still stable free-energy
// minima (hysteresis: a state continued from the previous γ persists while
// it is one, even when no Mattis initialisation reaches it any more), and
// whether all solved states are. It reads the visible magnetisations of the
// last eval, which must be at the current z (as after a converged newton).
func (e *engine) stableStates() ([]rawState, bool) {
	h := e.hOf() // e.v is that of the last eval, at the current z
	var out []rawState
	all := true
	for w := 0; w < e.om; w++ {
		hw := h[w*e.b : (w+1)*e.b]
		mx := 0.0
		for _, x := range hw {
			mx = math.Max(mx, math.Abs(x))
		}
		if mx < stateZero || !e.stateStable(hw) {
			all = false
			continue
		}
		out = append(out, rawState{v: append([]float64(nil), e.v[w*e.c:(w+1)*e.c]...), h: append([]float64(nil), hw...)})
	}
	return out, all
}

// nextStates returns the state set for the next round: the stable solved
// states (stableStates; allStable whether all solved states are), each with
// the data points of the found state it coincides with, together with the
// other states found by the Mattis search; and whether it equals the solved
// set.
func nextStates(stable []rawState, allStable bool, found []rawState) ([]rawState, bool) {
	next := stable
	same := allStable
	for _, s := range found {
		known := false
		for i := range stable {
			if t := &stable[i]; stateDist(s.v, s.h, t.v, t.h) < stateMergeTol {
				t.from = append(t.from, s.from...)
				known = true
				break
			}
		}
		if !known {
			next = append(next, s)
			same = false
		}
	}
	return next, same
}

// hDist is the max-norm distance between hidden magnetisations up to sign.
func hDist(a, b []float64) float64 {
	dp, dm := 0.0, 0.0
	for i := range a {
		dp = math.Max(dp, math.Abs(a[i]-b[i]))
		dm = math.Max(dm, math.Abs(a[i]+b[i]))
	}
	return math.Min(dp, dm)
}
