package replica

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// exactLogLik is L(W)/N (Eq. 6) of a finite RBM with N visible and M = αN
// hidden units, all in one block, for K = 2 data points whose sites split
// into n1 sites of class (+,+) and n2 of class (+,−); w_iµ = u_c/N. The
// partition function sums exactly over the class magnetisations s_c with
// binomial multiplicities.
func exactLogLik(n1, n2, m int, u []float64, gamma float64) float64 {
	n := float64(n1 + n2)
	lbin := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c
	}
	var terms []float64
	mx := math.Inf(-1)
	for a := 0; a <= n1; a++ {
		s1 := float64(2*a - n1)
		for b := 0; b <= n2; b++ {
			s2 := float64(2*b - n2)
			x := lbin(n1, a) + lbin(n2, b) + float64(m)*(logCosh((u[0]*s1+u[1]*s2)/n)+math.Ln2)
			terms = append(terms, x)
			mx = math.Max(mx, x)
		}
	}
	z := 0.0
	for _, x := range terms {
		z += math.Exp(x - mx)
	}
	lnZ := mx + math.Log(z)
	f1, f2 := float64(n1)/n, float64(n2)/n
	i1, i2 := f1*u[0]+f2*u[1], f1*u[0]-f2*u[1]
	data := float64(m) * (logCosh(i1) + logCosh(i2) + 2*math.Ln2) / 2
	reg := gamma / 2 * float64(m) * (f1*u[0]*u[0] + f2*u[1]*u[1])
	return (data - lnZ - reg) / n
}

// The class-sum partition function equals brute-force enumeration over all
// 2^N visible states.
func TestExactLogLikBruteForce(t *testing.T) {
	n1, n2, m := 6, 3, 5
	u := []float64{1.7, -0.8}
	n := n1 + n2
	z := 0.0
	for v := 0; v < 1<<uint(n); v++ {
		in := 0.0
		for i := 0; i < n; i++ {
			s := 1.0
			if v&(1<<uint(i)) != 0 {
				s = -1
			}
			if i < n1 {
				in += u[0] * s / float64(n)
			} else {
				in += u[1] * s / float64(n)
			}
		}
		z += math.Pow(2*math.Cosh(in), float64(m))
	}
	f1, f2 := float64(n1)/float64(n), float64(n2)/float64(n)
	i1, i2 := f1*u[0]+f2*u[1], f1*u[0]-f2*u[1]
	want := (float64(m)*(math.Log(2*math.Cosh(i1))+math.Log(2*math.Cosh(i2)))/2 - math.Log(z) - 0.1/2*float64(m)*(f1*u[0]*u[0]+f2*u[1]*u[1])) / float64(n)
	if got := exactLogLik(n1, n2, m, u, 0.1); math.Abs(got-want) > 1e-12 {
		t.Fatalf("class-sum L/N = %.15g, brute force %.15g", got, want)
	}
}

// Finite-size check of the stationarity solution: maximise the exact
// regularised log-likelihood of finite RBMs (N = 16 … 512, M = N) and
// compare with the N → ∞ solution. The gap in the weights and in L/N must
// shrink as N grows.
func TestFiniteSizeGap(t *testing.T) {
	a := 0.75 // class (+,+) fraction, x_12 = 0.5
	cl, err := NewClasses([][]float64{{1, 1}, {1, -1}}, []float64{a, 1 - a})
	if err != nil {
		t.Fatal(err)
	}
	gamma, alpha := 0.2, 1.0
	inf, err := SolveParamagnetic(context.Background(), Problem{Classes: cl, Alpha: alpha, Gamma: gamma})
	if err != nil {
		t.Fatal(err)
	}
	if len(inf.States) != 1 || len(inf.Blocks) != 1 {
		t.Fatalf("expected the rank-1 ordered phase, got Ω = %d, B = %d", len(inf.States), len(inf.Blocks))
	}
	checkResiduals(t, inf)
	uInf := inf.Blocks[0].U
	prevGap, firstGap := math.Inf(1), 0.0
	firstL, lastL := 0.0, 0.0
	for _, n := range []int{16, 32, 64, 128, 256, 512} {
		n1 := int(a * float64(n))
		f := func(u []float64) float64 { return exactLogLik(n1, n-n1, n, u, gamma) }
		u := maximise2(t, f, uInf)
		gap := math.Hypot(u[0]-uInf[0], u[1]-uInf[1])
		lgap := math.Abs(f(u) - inf.LogLik)
		t.Logf("N = %4d: u_N = (%.5f, %.5f), u_∞ = (%.5f, %.5f), |Δu| = %.5f, |ΔL/N| = %.2e", n, u[0], u[1], uInf[0], uInf[1], gap, lgap)
		if n == 16 {
			firstGap, firstL = gap, lgap
		}
		lastL = lgap
		if gap >= prevGap {
			t.Fatalf("N = %d: weight gap %g did not shrink (previous %g)", n, gap, prevGap)
		}
		prevGap = gap
	}
	if prevGap > firstGap/8 {
		t.Fatalf("gap at N = 512 is %g, at N = 16 %g: expected ~1/N decay", prevGap, firstGap)
	}
	// the N → ∞ log-likelihood of the solver is the limit of the exact one
	if lastL > firstL/8 || lastL > 5e-3 {
		t.Fatalf("|L_N/N − L_∞/N| = %g at N = 512 (%g at N = 16): no ~1/N convergence", lastL, firstL)
	}
}

// maximise2 maximises a smooth function of two variables by Newton's method
// with central-difference derivatives, from x0.
func maximise2(t *testing.T, f func([]float64) float64, x0 []float64) []float64 {
	t.Helper()
	x := append([]float64(nil), x0...)
	const h = 1e-4
	at := func(dx, dy float64) float64 { return f([]float64{x[0] + dx, x[1] + dy}) }
	for it := 0; it < 100; it++ {
		f0 := at(0, 0)
		gx := (at(h, 0) - at(-h, 0)) / (2 * h)
		gy := (at(0, h) - at(0, -h)) / (2 * h)
		hxx := (at(h, 0) - 2*f0 + at(-h, 0)) / (h * h)
		hyy := (at(0, h) - 2*f0 + at(0, -h)) / (h * h)
		hxy := (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
		det := hxx*hyy - hxy*hxy
		if !(hxx < 0 && det > 0) {
			t.Fatalf("not at a maximum: Hessian (%g %g; %g %g)", hxx, hxy, hxy, hyy)
		}
		dx := -(hyy*gx - hxy*gy) / det
		dy := -(-hxy*gx + hxx*gy) / det
		x[0] += dx
		x[1] += dy
		if math.Hypot(dx, dy) < 1e-10 {
			return x
		}
	}
	t.Fatal("Newton maximisation did not converge")
	return nil
}

// fullLogLik is L(W)/N (Eq. 6) for an arbitrary N×M weight matrix
// (w[i*m+µ]) and data points xi (K×N), by enumeration of the 2^N visible
// states (the hidden units are summed in closed form).
func fullLogLik(xi [][]float64, w []float64, n, m int, gamma float64) float64 {
	in := make([]float64, m)
	logW := func(v func(i int) float64) float64 {
		for mu := range in {
			in[mu] = 0
		}
		for i := 0; i < n; i++ {
			s := v(i)
			for mu := 0; mu < m; mu++ {
				in[mu] += w[i*m+mu] * s
			}
		}
		x := 0.0
		for _, a := range in {
			x += logCosh(a) + math.Ln2
		}
		return x
	}
	terms := make([]float64, 1<<uint(n))
	mx := math.Inf(-1)
	for st := range terms {
		terms[st] = logW(func(i int) float64 {
			if st&(1<<uint(i)) != 0 {
				return -1
			}
			return 1
		})
		mx = math.Max(mx, terms[st])
	}
	z := 0.0
	for _, x := range terms {
		z += math.Exp(x - mx)
	}
	lnZ := mx + math.Log(z)
	data := 0.0
	for _, d := range xi {
		data += logW(func(i int) float64 { return d[i] }) / float64(len(xi))
	}
	reg := 0.0
	for _, x := range w {
		reg += x * x
	}
	return (data - lnZ - float64(n)*gamma/2*reg) / float64(n)
}

// The block-symmetric maximiser of the finite-N likelihood used by
// TestFiniteSizeGap (all hidden units identical, one weight per site class)
// is a genuine local maximum of the exact likelihood over all N×M weights:
// at N = M = 8 the gradient over the 64 weights vanishes and the Hessian
// (central differences of the enumerated L) is negative definite; the
// restricted likelihood equals the enumerated one there.
func TestFiniteSizeMaximumUnrestricted(t *testing.T) {
	n1, n2, m := 6, 2, 8
	n := n1 + n2
	gamma := 0.2
	cl, err := NewClasses([][]float64{{1, 1}, {1, -1}}, []float64{0.75, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := SolveParamagnetic(context.Background(), Problem{Classes: cl, Alpha: 1, Gamma: gamma})
	if err != nil {
		t.Fatal(err)
	}
	u := maximise2(t, func(u []float64) float64 { return exactLogLik(n1, n2, m, u, gamma) }, inf.Blocks[0].U)
	xi := [][]float64{make([]float64, n), make([]float64, n)}
	w := make([]float64, n*m)
	for i := 0; i < n; i++ {
		c, s2 := 0, 1.0
		if i >= n1 {
			c, s2 = 1, -1
		}
		xi[0][i], xi[1][i] = 1, s2
		for mu := 0; mu < m; mu++ {
			w[i*m+mu] = u[c] / float64(n)
		}
	}
	f := func() float64 { return fullLogLik(xi, w, n, m, gamma) }
	if d := math.Abs(f() - exactLogLik(n1, n2, m, u, gamma)); d > 1e-12 {
		t.Fatalf("class-sum and enumerated L/N differ by %g", d)
	}
	const h = 1e-3
	nw := len(w)
	grad := 0.0
	hess := mat.NewSymDense(nw, nil)
	f0 := f()
	for a := 0; a < nw; a++ {
		wa := w[a]
		w[a] = wa + h
		fp := f()
		w[a] = wa - h
		fm := f()
		w[a] = wa
		grad = math.Max(grad, math.Abs(fp-fm)/(2*h))
		hess.SetSym(a, a, (fp-2*f0+fm)/(h*h))
		for b := a + 1; b < nw; b++ {
			wb := w[b]
			var s float64
			for _, sg := range [][2]float64{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}} {
				w[a], w[b] = wa+sg[0]*h, wb+sg[1]*h
				s += sg[0] * sg[1] * f()
			}
			w[a], w[b] = wa, wb
			hess.SetSym(a, b, s/(4*h*h))
		}
	}
	if grad > 1e-8 {
		t.Fatalf("|∇L| = %g at the block-symmetric maximiser", grad)
	}
	var es mat.EigenSym
	if !es.Factorize(hess, false) {
		t.Fatal("Hessian eigen-decomposition failed")
	}
	ev := es.Values(nil)
	t.Logf("Hessian of L/N over the %d weights: eigenvalues in [%.4g, %.4g]", nw, ev[0], ev[nw-1])
	// the regularisation alone contributes −γ to every eigenvalue
	if !(ev[nw-1] < -0.01*gamma) {
		t.Fatalf("largest Hessian eigenvalue %g: not a strict local maximum over all weights", ev[nw-1])
	}
}
