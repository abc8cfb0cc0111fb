package replica

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// engine holds the unknowns, the residuals and the Jacobian of the coupled
// system (Eq. 20 for every state, Eq. 21 for every block and class) and all
// work buffers, so that Newton steps allocate nothing.
//
// Unknowns z: the block weights (B×D: D = C class values in mode Exact, D = K
// data-span coefficients in mode DataSpan) followed by the hidden
// magnetisations h^ω_b of the Ω states (Ω×B). The visible magnetisations are
// explicit: v^ω_c = tanh(α Σ_b φ_b u^b_c h^ω_b).
type engine struct {
	cl          *Classes
	k, c, b, om int
	d           int // coefficients per block
	mode        Mode
	alpha       float64
	gamma       float64
	phi         []float64
	labelled    bool      // Problem.LabelledEqual
	pw          []float64 // Ω state weights π_ω of Eq. 21 (1/Ω, or |From_ω|/K set by loadStates)

	z       []float64 // unknowns
	u       []float64 // B×C class weights
	v, dv   []float64 // Ω×C visible magnetisations and 1−v²
	s, t    []float64 // Ω×B hidden fields and tanh
	in, hk  []float64 // B×K inputs I^k_b and responses H^k_b = tanh(I^k_b)
	dhk     []float64 // B×K 1−H²
	g       []float64 // B×C Eq. 21 residual (gradient direction)
	r       []float64 // residual vector in the reduced rows (len n)
	jf      []float64 // full Jacobian (nf×nf), u-space
	j       []float64 // reduced Jacobian (n×n); aliases jf in mode Exact
	tmp     []float64
	ipiv    []int
	xinvSTF []float64 // K×C: x^{-1} Σᵀ F (data-span projection), DataSpan only

	// buffers of structuredSolve and chordSolve
	sRhs, sT, sZ []float64
	fact         *factorisation // last structured factorisation (chord steps), or nil
}

func newEngine(p *Problem, phi []float64) *engine {
	cl := p.Classes
	e := &engine{cl: cl, k: cl.K, c: len(cl.F), b: len(phi), mode: p.Mode, alpha: p.Alpha, gamma: p.Gamma, labelled: p.LabelledEqual}
	e.phi = append([]float64(nil), phi...)
	e.d = e.c
	if e.mode == DataSpan {
		e.d = e.k
	}
	e.u = make([]float64, e.b*e.c)
	e.in = make([]float64, e.b*e.k)
	e.hk = make([]float64, e.b*e.k)
	e.dhk = make([]float64, e.b*e.k)
	e.g = make([]float64, e.b*e.c)
	return e
}

// setOmega sizes the buffers for om states and gives each state the weight
// 1/Ω (loadStates sets those of Problem.LabelledEqual).
func (e *engine) setOmega(om int) {
	e.om = om
	e.pw = resize(e.pw, om)
	for w := range e.pw {
		e.pw[w] = 1 / float64(om)
	}
	n := e.b*e.d + om*e.b
	if cap(e.z) < n {
		old := e.z
		e.z = make([]float64, n)
		copy(e.z, old)
	}
	e.z = e.z[:n]
	e.v = resize(e.v, om*e.c)
	e.dv = resize(e.dv, om*e.c)
	e.s = resize(e.s, om*e.b)
	e.t = resize(e.t, om*e.b)
	e.r = resize(e.r, n)
	e.tmp = resize(e.tmp, n)
	if e.mode == DataSpan {
		e.j = resize(e.j, n*n)
	}
	if cap(e.ipiv) < n {
		e.ipiv = make([]int, n)
	}
	e.ipiv = e.ipiv[:n]
}

func resize(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

func (e *engine) n() int { return e.b*e.d + e.om*e.b }

// hOf returns the hidden magnetisations part of z.
func (e *engine) hOf() []float64 { return e.z[e.b*e.d:] }

// weights fills u from the coefficient part of z.
func (e *engine) weights() {
	if e.mode == Exact {
		copy(e.u, e.z[:e.b*e.c])
		return
	}
	k, c := e.k, e.c
	for b := 0; b < e.b; b++ {
		zb := e.z[b*k : (b+1)*k]
		for j := 0; j < c; j++ {
			s := 0.0
			sig := e.cl.Sigma[j*k : (j+1)*k]
			for l := 0; l < k; l++ {
				s += sig[l] * zb[l]
			}
			e.u[b*c+j] = s
		}
	}
}

// eval computes all derived quantities and the residuals from z. It returns
// the max residuals of Eq. 20 and of Eq. 21 (full, per class) and of the
// solved rows (equal to the Eq. 21 one in mode Exact).
func (e *engine) eval() (r20, r21, rsolved float64) {
	e.weights()
	k, c, nb := e.k, e.c, e.b
	f, sig := e.cl.F, e.cl.Sigma
	h := e.hOf()
	for b := 0; b < nb; b++ {
		ub := e.u[b*c : (b+1)*c]
		for l := 0; l < k; l++ {
			s := 0.0
			for j := 0; j < c; j++ {
				s += f[j] * sig[j*k+l] * ub[j]
			}
			th := math.Tanh(s)
			e.in[b*k+l] = s
			e.hk[b*k+l] = th
			e.dhk[b*k+l] = 1 - th*th
		}
	}
	for w := 0; w < e.om; w++ {
		hw := h[w*nb : (w+1)*nb]
		for j := 0; j < c; j++ {
			a := 0.0
			for b := 0; b < nb; b++ {
				a += e.phi[b] * e.u[b*c+j] * hw[b]
			}
			vv := math.Tanh(e.alpha * a)
			e.v[w*c+j] = vv
			e.dv[w*c+j] = 1 - vv*vv
		}
		for b := 0; b < nb; b++ {
			s := 0.0
			for j := 0; j < c; j++ {
				s += f[j] * e.u[b*c+j] * e.v[w*c+j]
			}
			e.s[w*nb+b] = s
			e.t[w*nb+b] = math.Tanh(s)
			rr := hw[b] - e.t[w*nb+b]
			e.r[nb*e.d+w*nb+b] = rr
			r20 = math.Max(r20, math.Abs(rr))
		}
	}
	ik := 1 / float64(k)
	for b := 0; b < nb; b++ {
		for j := 0; j < c; j++ {
			g := 0.0
			for l := 0; l < k; l++ {
				g += sig[j*k+l] * e.hk[b*k+l]
			}
			g *= ik
			m := 0.0
			for w := 0; w < e.om; w++ {
				m += e.pw[w] * e.v[w*c+j] * h[w*nb+b]
			}
			g -= m + e.gamma*e.u[b*c+j]
			e.g[b*c+j] = g
			r21 = math.Max(r21, math.Abs(g))
		}
	}
	if e.mode == Exact {
		copy(e.r[:nb*c], e.g)
		rsolved = r21
	} else {
		// Galerkin projection of Eq. F12 on the data: x^{-1} Σᵀ F G.
		for b := 0; b < nb; b++ {
			for l := 0; l < k; l++ {
				s := 0.0
				row := e.xinvSTF[l*c : (l+1)*c]
				for j := 0; j < c; j++ {
					s += row[j] * e.g[b*c+j]
				}
				e.r[b*k+l] = s
				rsolved = math.Max(rsolved, math.Abs(s))
			}
		}
	}
	return r20, r21, math.Max(rsolved, r20)
}

// jacobian fills the Jacobian of the residual vector (after eval).
func (e *engine) jacobian() {
	k, c, nb, om := e.k, e.c, e.b, e.om
	f, sig := e.cl.F, e.cl.Sigma
	h := e.hOf()
	nf := nb*c + om*nb
	e.jf = resize(e.jf, nf*nf) // allocated on first use: chord steps need none
	if e.mode == Exact {
		e.j = e.jf
	}
	jf := e.jf
	for i := range jf {
		jf[i] = 0
	}
	ik := 1 / float64(k)
	al := e.alpha
	hcol := nb * c // first h column
	// rows G(b,j)
	for b := 0; b < nb; b++ {
		for j := 0; j < c; j++ {
			row := jf[(b*c+j)*nf : (b*c+j+1)*nf]
			sj := sig[j*k : (j+1)*k]
			// data term within block b
			for j2 := 0; j2 < c; j2++ {
				s := 0.0
				s2 := sig[j2*k : (j2+1)*k]
				for l := 0; l < k; l++ {
					s += sj[l] * e.dhk[b*k+l] * s2[l]
				}
				row[b*c+j2] = ik * s * f[j2]
			}
			row[b*c+j] -= e.gamma
			// state term, diagonal in the class j
			for w := 0; w < om; w++ {
				hw := h[w*nb : (w+1)*nb]
				pi := e.pw[w]
				coef := pi * hw[b] * e.dv[w*c+j] * al
				for b2 := 0; b2 < nb; b2++ {
					row[b2*c+j] -= coef * e.phi[b2] * hw[b2]
					row[hcol+w*nb+b2] -= coef * e.phi[b2] * e.u[b2*c+j]
				}
				row[hcol+w*nb+b] -= pi * e.v[w*c+j]
			}
		}
	}
	// rows R1(w,b) = h − tanh(s)
	for w := 0; w < om; w++ {
		hw := h[w*nb : (w+1)*nb]
		for b := 0; b < nb; b++ {
			ri := hcol + w*nb + b
			row := jf[ri*nf : (ri+1)*nf]
			ds := 1 - e.t[w*nb+b]*e.t[w*nb+b]
			ub := e.u[b*c : (b+1)*c]
			for j := 0; j < c; j++ {
				row[b*c+j] -= ds * f[j] * e.v[w*c+j]
				x := ds * f[j] * ub[j] * e.dv[w*c+j] * al
				for b2 := 0; b2 < nb; b2++ {
					row[b2*c+j] -= x * e.phi[b2] * hw[b2]
					row[hcol+w*nb+b2] -= x * e.phi[b2] * e.u[b2*c+j]
				}
			}
			row[ri] += 1
		}
	}
	if e.mode == Exact {
		return
	}
	// Reduce to data-span coefficients: rows projected with x^{-1}ΣᵀF,
	// columns through u = Σ z.
	n := e.n()
	jr := e.j[:n*n]
	hr := nb * k
	for i := range jr {
		jr[i] = 0
	}
	colMap := func(src []float64, dst []float64) { // src: nf columns, dst: n columns
		for b := 0; b < nb; b++ {
			for l := 0; l < k; l++ {
				s := 0.0
				for j := 0; j < c; j++ {
					s += src[b*c+j] * sig[j*k+l]
				}
				dst[b*k+l] = s
			}
		}
		copy(dst[hr:], src[hcol:])
	}
	// state rows
	for w := 0; w < om*nb; w++ {
		colMap(jf[(hcol+w)*nf:(hcol+w+1)*nf], jr[(hr+w)*n:(hr+w+1)*n])
	}
	// block rows: first map columns of each G row, then combine rows
	buf := make([]float64, n)
	for b := 0; b < nb; b++ {
		for j := 0; j < c; j++ {
			colMap(jf[(b*c+j)*nf:(b*c+j+1)*nf], buf)
			for l := 0; l < k; l++ {
				a := e.xinvSTF[l*c+j]
				dst := jr[(b*k+l)*n : (b*k+l+1)*n]
				for i := range buf {
					dst[i] += a * buf[i]
				}
			}
		}
	}
}

// linearSolve solves J Δ = −r (Δ in e.tmp) with the Jacobian at the
// current z (after eval): by the structured solver, which builds the parts
// of J it needs itself, when it is cheaper than a dense LU (mode Exact with
// several blocks), otherwise by a dense LU of the full Jacobian.
func (e *engine) linearSolve() bool {
	if e.mode == Exact && e.b*e.k+e.om*e.b < e.n()/2 {
		return e.structuredSolve()
	}
	e.fact = nil
	e.jacobian()
	return e.newtonSolve()
}

// newtonSolve solves J Δ = −r in place (Δ in e.tmp). It reports false if
// the Jacobian is singular.
func (e *engine) newtonSolve() bool {
	n := e.n()
	a := blas64.General{Rows: n, Cols: n, Stride: n, Data: e.j[:n*n]}
	if ok := lapack64.Getrf(a, e.ipiv); !ok {
		return false
	}
	for i := 0; i < n; i++ {
		e.tmp[i] = -e.r[i]
	}
	bm := blas64.General{Rows: n, Cols: 1, Stride: 1, Data: e.tmp[:n]}
	lapack64.Getrs(blas.NoTrans, a, bm, e.ipiv)
	for _, x := range e.tmp[:n] {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func (e *engine) norm2() float64 {
	s := 0.0
	for _, x := range e.r[:e.n()] {
		s += x * x
	}
	return s
}

// newton runs damped Newton iterations at fixed state count until the
// residuals are below tol. It returns the number of steps.
func (e *engine) newton(ctx context.Context, tol float64, maxIter int) (int, error) {
	_, _, res := e.eval()
	n := e.n()
	z0 := make([]float64, n)
	for it := 0; it < maxIter; it++ {
		if res < tol {
			return it, nil
		}
		if err := ctx.Err(); err != nil {
			return it, err
		}
		// Chord step with a stored factorisation (from an earlier Newton
		// step or the previous continuation step), kept if it reduces the
		// residual norm tenfold; otherwise a fresh Jacobian.
		if e.chordSolve(e.fact) {
			copy(z0, e.z[:n])
			m0 := e.norm2()
			for i := 0; i < n; i++ {
				e.z[i] = z0[i] + e.tmp[i]
			}
			_, _, res = e.eval()
			if e.norm2() <= 1e-2*m0 || res < tol {
				continue
			}
			copy(e.z[:n], z0)
			_, _, res = e.eval()
		}
		if !e.linearSolve() {
			return it, fmt.Errorf("singular Jacobian at Newton step %d (residual %.3g)", it, res)
		}
		copy(z0, e.z[:n])
		m0 := e.norm2()
		lam := 1.0
		accepted := false
		for tries := 0; tries < 30; tries++ {
			for i := 0; i < n; i++ {
				e.z[i] = z0[i] + lam*e.tmp[i]
			}
			_, _, res = e.eval()
			if e.norm2() < (1-1e-4*lam)*m0 || (res < tol) {
				accepted = true
				break
			}
			lam /= 2
		}
		if !accepted {
			copy(e.z[:n], z0)
			_, _, res = e.eval()
			return it, fmt.Errorf("line search of Newton's method failed at step %d (residual %.3g)", it, res)
		}
	}
	if res < tol {
		return maxIter, nil
	}
	return maxIter, fmt.Errorf("no convergence in %d Newton steps (residual %.3g)", maxIter, res)
}

// relax runs the paper's damped fixed-point iteration ("inertial term") on
// the weights, u ← u + η·G (G the Eq. 21 residual, projected on the data in
// mode DataSpan), with the states re-found by Mattis initialisation at every
// step, until max|G| < tol or maxIter steps. It is the globalisation used
// before Newton when Newton alone does not converge from a rough start.
func (e *engine) relax(ctx context.Context, eta, tol float64, maxIter int) (int, float64, error) {
	nu := e.b * e.d
	res := math.Inf(1)
	for it := 0; it < maxIter; it++ {
		if it%64 == 0 {
			if err := ctx.Err(); err != nil {
				return it, res, err
			}
		}
		e.weights()
		e.loadStates(e.mattis(nil))
		_, r21, rs := e.eval()
		res = r21
		if e.mode == DataSpan {
			res = rs
		}
		if res < tol {
			return it, res, nil
		}
		for i := 0; i < nu; i++ {
			e.z[i] += eta * e.r[i]
		}
	}
	return maxIter, res, nil
}
