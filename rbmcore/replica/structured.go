package replica

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// structuredSolve solves J Δ = −r (Δ in e.tmp) in mode Exact using the
// structure of the Jacobian instead of a dense LU of size n = B·C + Ω·B.
// The weight block is J_uu = E + U Vᵀ: E (−γ plus the state terms) couples
// the blocks only within a class, so it is block diagonal with C blocks of
// size B×B after reordering; U Vᵀ (the data terms) has rank B·K. With
// y = Vᵀ Δ_u as extra unknowns, Δ_u is eliminated through E⁻¹ and a dense
// system of size B·K + Ω·B remains (bordering / Woodbury). The parts of the
// Jacobian it needs (E, J_uh, J_hh, and J_hu through its coefficients) are
// built here from the quantities of eval, never the dense n×n matrix of
// jacobian (which TestStructuredSolve compares with). It reports false if a
// factorisation is singular.
func (e *engine) structuredSolve() bool {
	k, c, nb, om := e.k, e.c, e.b, e.om
	f, sig := e.cl.F, e.cl.Sigma
	n := e.n()
	nu, nh := nb*c, om*nb
	ny := nb * k
	m2 := ny + nh + 1 // columns: U, J_uh, r_u
	nr := ny + nh
	h := e.hOf()
	pi := e.pw // state weights π_ω
	al := e.alpha
	// A fresh factorisation each time: it is kept (immutable) for chord
	// steps, also by the Solution for the next continuation step.
	fa := &factorisation{b: nb, c: c, om: om,
		ec: make([]float64, c*nb*nb), y: make([]float64, nu*m2), r: make([]float64, nr*nr),
		piv: make([]int, nb*c+nr), a1: make([]float64, nh*c), a2: make([]float64, nh*c), zc: make([]float64, nh)}
	e.fact = nil
	e.sRhs = resize(e.sRhs, nr)
	e.sT = resize(e.sT, nh*m2)
	piv := fa.piv
	ik := 1 / float64(k)
	// right-hand sides, in class-major order: Y[(c,b), :] = [U | J_uh | −r_u],
	// J_uh[(b,c), (ω,b')] = −π_ω[α h_ωb dv_ωc φ_b' u_b'c + δ_bb' v_ωc]
	y := fa.y
	for b := 0; b < nb; b++ {
		for cc := 0; cc < c; cc++ {
			row := y[(cc*nb+b)*m2 : (cc*nb+b+1)*m2]
			for l := 0; l < k; l++ {
				row[b*k+l] = sig[cc*k+l] * e.dhk[b*k+l] * ik
			}
			for w := 0; w < om; w++ {
				coef := pi[w] * h[w*nb+b] * e.dv[w*c+cc] * al
				dst := row[ny+w*nb : ny+(w+1)*nb]
				for b2 := range dst {
					dst[b2] = -coef * e.phi[b2] * e.u[b2*c+cc]
				}
				dst[b] -= pi[w] * e.v[w*c+cc]
			}
			row[m2-1] = -e.r[b*c+cc]
		}
	}
	// E_c and Y ← E_c⁻¹ Y, class by class:
	// E_c[b,b'] = −γ δ_bb' − α Σ_ω π_ω h_ωb dv_ωc φ_b' h_ωb'
	for cc := 0; cc < c; cc++ {
		ec := fa.ec[cc*nb*nb : (cc+1)*nb*nb]
		for b := 0; b < nb; b++ {
			row := ec[b*nb : (b+1)*nb]
			for b2 := range row {
				row[b2] = 0
			}
			row[b] = -e.gamma
			for w := 0; w < om; w++ {
				hw := h[w*nb : (w+1)*nb]
				coef := pi[w] * hw[b] * e.dv[w*c+cc] * al
				for b2 := range row {
					row[b2] -= coef * e.phi[b2] * hw[b2]
				}
			}
		}
		a := blas64.General{Rows: nb, Cols: nb, Stride: nb, Data: ec}
		p := piv[cc*nb : (cc+1)*nb]
		if !lapack64.Getrf(a, p) {
			return false
		}
		lapack64.Getrs(blas.NoTrans, a, blas64.General{Rows: nb, Cols: m2, Stride: m2, Data: y[cc*nb*m2 : (cc+1)*nb*m2]}, p)
	}
	// reduced system
	r := fa.r
	rhs := e.sRhs
	// y rows: (Vᵀ Y)[(b,l)] = Σ_c f_c σ_cl Y[(c,b)]
	for b := 0; b < nb; b++ {
		for l := 0; l < k; l++ {
			ri := b*k + l
			out := r[ri*nr : (ri+1)*nr]
			acc := 0.0
			for cc := 0; cc < c; cc++ {
				w := f[cc] * sig[cc*k+l]
				row := y[(cc*nb+b)*m2 : (cc*nb+b+1)*m2]
				for q := 0; q < nr; q++ {
					out[q] += w * row[q]
				}
				acc += w * row[m2-1]
			}
			out[ri]++
			rhs[ri] = acc
		}
	}
	// h rows: T = J_hu Y, using the structure of J_hu: the row of R1(ω,b) is
	// −ds_ωb f_c' [δ_bb' v_ωc' + u_bc' dv_ωc' α φ_b' h_ωb'] at column (b',c').
	if nh > 0 {
		e.sZ = resize(e.sZ, c*m2)
		z := e.sZ
		t := e.sT
		for w := 0; w < om; w++ {
			// Z[c,:] = α Σ_b' φ_b' h_ωb' Y[(c,b'),:]
			for i := range z {
				z[i] = 0
			}
			for cc := 0; cc < c; cc++ {
				zc := z[cc*m2 : (cc+1)*m2]
				for b2 := 0; b2 < nb; b2++ {
					a := e.alpha * e.phi[b2] * h[w*nb+b2]
					fa.zc[w*nb+b2] = a
					row := y[(cc*nb+b2)*m2 : (cc*nb+b2+1)*m2]
					for q := range zc {
						zc[q] += a * row[q]
					}
				}
			}
			for b := 0; b < nb; b++ {
				q := w*nb + b
				trow := t[q*m2 : (q+1)*m2]
				for i := range trow {
					trow[i] = 0
				}
				ds := 1 - e.t[q]*e.t[q]
				for cc := 0; cc < c; cc++ {
					a1 := -ds * f[cc] * e.v[w*c+cc]
					a2 := -ds * f[cc] * e.u[b*c+cc] * e.dv[w*c+cc]
					fa.a1[q*c+cc], fa.a2[q*c+cc] = a1, a2
					row := y[(cc*nb+b)*m2 : (cc*nb+b+1)*m2]
					zc := z[cc*m2 : (cc+1)*m2]
					for i := range trow {
						trow[i] += a1*row[i] + a2*zc[i]
					}
				}
				out := r[(ny+q)*nr : (ny+q+1)*nr]
				for p := 0; p < nr; p++ {
					out[p] = -trow[p]
				}
				// J_hh[(ω,b),(ω,b')] = δ_bb' − ds α φ_b' Σ_c f_c u_bc dv_ωc u_b'c
				ub := e.u[b*c : (b+1)*c]
				dvw := e.dv[w*c : (w+1)*c]
				for b2 := 0; b2 < nb; b2++ {
					ub2 := e.u[b2*c : (b2+1)*c]
					s := 0.0
					for cc := range ub {
						s += f[cc] * ub[cc] * dvw[cc] * ub2[cc]
					}
					out[ny+w*nb+b2] -= ds * al * e.phi[b2] * s
				}
				out[ny+q]++
				rhs[ny+q] = -e.r[nu+q] - trow[m2-1]
			}
		}
	}
	ra := blas64.General{Rows: nr, Cols: nr, Stride: nr, Data: r}
	rp := piv[nb*c : nb*c+nr]
	if !lapack64.Getrf(ra, rp) {
		return false
	}
	lapack64.Getrs(blas.NoTrans, ra, blas64.General{Rows: nr, Cols: 1, Stride: 1, Data: rhs}, rp)
	// Δ_u = Y_r − Y_U y − Y_h Δ_h ; Δ_h from the reduced solution
	for b := 0; b < nb; b++ {
		for cc := 0; cc < c; cc++ {
			row := y[(cc*nb+b)*m2 : (cc*nb+b+1)*m2]
			s := row[m2-1]
			for q := 0; q < nr; q++ {
				s -= row[q] * rhs[q]
			}
			e.tmp[b*c+cc] = s
		}
	}
	copy(e.tmp[nu:n], rhs[ny:nr])
	for _, x := range e.tmp[:n] {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	e.fact = fa
	return true
}

// factorisation is the structured factorisation of a Jacobian (see
// structuredSolve): the LU factors of the class blocks E_c, Y = E_c⁻¹[U | J_uh]
// (class-major rows, the last column unused), the LU factors of the reduced
// system, and the coefficients of J_hu. It is never modified once built.
type factorisation struct {
	b, c, om int
	ec, y, r []float64
	piv      []int
	a1, a2   []float64 // Ω·B×C: J_hu = a1 δ_bb' + a2 zc
	zc       []float64 // Ω×B: α φ_b' h_ωb'
}

// chordSolve solves J₀ Δ = −r (Δ in e.tmp) with the Jacobian J₀ of a
// stored factorisation (a chord step of Newton's method): only the
// right-hand side is processed, O(B·C·(B·K + Ω·B)) work instead of a
// factorisation. It reports false if the factorisation does not fit the
// current unknowns.
func (e *engine) chordSolve(fa *factorisation) bool {
	if fa == nil || e.mode != Exact || fa.b != e.b || fa.c != e.c || fa.om != e.om {
		return false
	}
	k, c, nb, om := e.k, e.c, e.b, e.om
	f, sig := e.cl.F, e.cl.Sigma
	n := e.n()
	nu, nh := nb*c, om*nb
	ny := nb * k
	nr := ny + nh
	m2 := nr + 1
	e.sRhs = resize(e.sRhs, nr)
	e.sZ = resize(e.sZ, nu+c)
	yr, zc, rhs := e.sZ[:nu], e.sZ[nu:nu+c], e.sRhs
	for cc := 0; cc < c; cc++ {
		for b := 0; b < nb; b++ {
			yr[cc*nb+b] = -e.r[b*c+cc]
		}
		luSolve(fa.ec[cc*nb*nb:(cc+1)*nb*nb], nb, fa.piv[cc*nb:(cc+1)*nb], yr[cc*nb:(cc+1)*nb])
	}
	for b := 0; b < nb; b++ {
		for l := 0; l < k; l++ {
			acc := 0.0
			for cc := 0; cc < c; cc++ {
				acc += f[cc] * sig[cc*k+l] * yr[cc*nb+b]
			}
			rhs[b*k+l] = acc
		}
	}
	for w := 0; w < om; w++ {
		for cc := 0; cc < c; cc++ {
			s := 0.0
			for b2 := 0; b2 < nb; b2++ {
				s += fa.zc[w*nb+b2] * yr[cc*nb+b2]
			}
			zc[cc] = s
		}
		for b := 0; b < nb; b++ {
			q := w*nb + b
			s := 0.0
			for cc := 0; cc < c; cc++ {
				s += fa.a1[q*c+cc]*yr[cc*nb+b] + fa.a2[q*c+cc]*zc[cc]
			}
			rhs[ny+q] = -e.r[nu+q] - s
		}
	}
	luSolve(fa.r, nr, fa.piv[nb*c:nb*c+nr], rhs)
	for b := 0; b < nb; b++ {
		for cc := 0; cc < c; cc++ {
			row := fa.y[(cc*nb+b)*m2 : (cc*nb+b)*m2+nr]
			s := yr[cc*nb+b]
			for q, x := range row {
				s -= x * rhs[q]
			}
			e.tmp[b*c+cc] = s
		}
	}
	copy(e.tmp[nu:n], rhs[ny:nr])
	for _, x := range e.tmp[:n] {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// luSolve solves A x = b in place for one right-hand side, with the
// row-major LU factors and 0-based pivots of lapack64.Getrf (as Getrs does,
// without the overhead of its blocked triangular solves, which dominates for
// one right-hand side).
func luSolve(lu []float64, n int, piv []int, x []float64) {
	for i := 0; i < n; i++ {
		if p := piv[i]; p != i {
			x[i], x[p] = x[p], x[i]
		}
	}
	for i := 1; i < n; i++ {
		s := x[i]
		row := lu[i*n : i*n+i]
		for j, a := range row {
			s -= a * x[j]
		}
		x[i] = s
	}
	for i := n - 1; i >= 0; i-- {
		s := x[i]
		for j := i + 1; j < n; j++ {
			s -= lu[i*n+j] * x[j]
		}
		x[i] = s / lu[i*n+i]
	}
}
