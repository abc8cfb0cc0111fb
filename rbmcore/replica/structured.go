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
// system of size B·K + Ω·B remains (bordering / Woodbury). It reports false
// if a factorisation is singular.
func (e *engine) structuredSolve() bool {
	k, c, nb, om := e.k, e.c, e.b, e.om
	f, sig := e.cl.F, e.cl.Sigma
	n := e.n()
	nu, nh := nb*c, om*nb
	ny := nb * k
	m2 := ny + nh + 1 // columns: U, J_uh, r_u
	nr := ny + nh
	j := e.j[:n*n]
	e.sEc = resize(e.sEc, c*nb*nb)
	e.sY = resize(e.sY, nu*m2)
	e.sR = resize(e.sR, nr*nr)
	e.sRhs = resize(e.sRhs, nr)
	e.sT = resize(e.sT, nh*m2)
	if cap(e.sPiv) < nb*c+nr {
		e.sPiv = make([]int, nb*c+nr)
	}
	piv := e.sPiv[:nb*c+nr]
	ik := 1 / float64(k)
	// right-hand sides, in class-major order: Y[(c,b), :] = [U | J_uh | −r_u]
	y := e.sY
	for i := range y {
		y[i] = 0
	}
	for b := 0; b < nb; b++ {
		for cc := 0; cc < c; cc++ {
			row := y[(cc*nb+b)*m2 : (cc*nb+b+1)*m2]
			for l := 0; l < k; l++ {
				row[b*k+l] = sig[cc*k+l] * e.dhk[b*k+l] * ik
			}
			src := j[(b*c+cc)*n+nu : (b*c+cc)*n+n]
			copy(row[ny:ny+nh], src)
			row[m2-1] = -e.r[b*c+cc]
		}
	}
	// E_c and Y ← E_c⁻¹ Y, class by class
	for cc := 0; cc < c; cc++ {
		ec := e.sEc[cc*nb*nb : (cc+1)*nb*nb]
		for b := 0; b < nb; b++ {
			for b2 := 0; b2 < nb; b2++ {
				ec[b*nb+b2] = j[(b*c+cc)*n+b2*c+cc]
			}
			s := 0.0
			for l := 0; l < k; l++ {
				s += e.dhk[b*k+l]
			}
			ec[b*nb+b] -= f[cc] * s * ik
		}
		a := blas64.General{Rows: nb, Cols: nb, Stride: nb, Data: ec}
		p := piv[cc*nb : (cc+1)*nb]
		if !lapack64.Getrf(a, p) {
			return false
		}
		lapack64.Getrs(blas.NoTrans, a, blas64.General{Rows: nb, Cols: m2, Stride: m2, Data: y[cc*nb*m2 : (cc+1)*nb*m2]}, p)
	}
	// reduced system
	r := e.sR
	rhs := e.sRhs
	for i := range r {
		r[i] = 0
	}
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
		h := e.hOf()
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
					row := y[(cc*nb+b)*m2 : (cc*nb+b+1)*m2]
					zc := z[cc*m2 : (cc+1)*m2]
					for i := range trow {
						trow[i] += a1*row[i] + a2*zc[i]
					}
				}
				out := r[(ny+q)*nr : (ny+q+1)*nr]
				for p := 0; p < ny; p++ {
					out[p] = -trow[p]
				}
				for p := 0; p < nh; p++ {
					out[ny+p] = j[(nu+q)*n+nu+p] - trow[ny+p]
				}
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
	return true
}
