package replica

// Tests of the Done-when items of issue 7 against computations written here
// from scratch (power iteration on the raw overlap matrix, the alternating
// mean-field iteration, the inequalities (25) term by term), each with a
// negative control showing that the check can fail.

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// topEigenPower returns the top eigenvalue and unit eigenvector of a
// symmetric positive semi-definite matrix by power iteration.
func topEigenPower(x [][]float64) (float64, []float64) {
	k := len(x)
	v := make([]float64, k)
	for i := range v {
		v[i] = 1 + 0.1*float64(i) // not orthogonal to the top eigenvector
	}
	lam := 0.0
	for it := 0; it < 5000; it++ {
		w := make([]float64, k)
		n := 0.0
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				w[a] += x[a][b] * v[b]
			}
			n += w[a] * w[a]
		}
		n = math.Sqrt(n)
		d := 0.0
		for a := range w {
			w[a] /= n
			d = math.Max(d, math.Abs(w[a]-v[a]))
		}
		v, lam = w, n
		if d < 1e-15 {
			break
		}
	}
	return lam, v
}

// classOverlap is x_kl = Σ_c f_c σ_ck σ_cl, written out.
func classOverlap(cl *Classes) [][]float64 {
	k := cl.K
	x := make([][]float64, k)
	for a := range x {
		x[a] = make([]float64, k)
		for b := range x[a] {
			for j, f := range cl.F {
				x[a][b] += f * cl.Sigma[j*k+a] * cl.Sigma[j*k+b]
			}
		}
	}
	return x
}

// Done-when: the paramagnetic solution is parallel to the top eigenvector of
// x for small weights. Solutions of the full solver (SolveParamagnetic: Eqs.
// 20–21, one block, Ω = 0) at γ = γ_c(1−ε): the weights u(σ) tend to the
// direction Σ_k e_k σ_k of the top eigenvector e (power iteration on x
// computed here) as ε → 0, with |u| → 0 like √ε; far below γ_c the
// non-linearity tilts them (negative control).
func TestParamagneticParallelTopEigenvector(t *testing.T) {
	cl, err := NewClasses([][]float64{{1, 1, 1}, {1, -1, 1}, {1, 1, -1}, {1, -1, -1}}, []float64{0.5, 0.25, 0.15, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	lam, e := topEigenPower(classOverlap(cl))
	gc := lam / 3
	dir := spanWeights(cl, e)
	cosine := func(u []float64) (float64, float64) {
		d, nu, nd := 0.0, 0.0, 0.0
		for j, f := range cl.F {
			d += f * u[j] * dir[j]
			nu += f * u[j] * u[j]
			nd += f * dir[j] * dir[j]
		}
		return math.Abs(d) / math.Sqrt(nu*nd), math.Sqrt(nu)
	}
	ctx := context.Background()
	prevDev, prevNorm := math.Inf(1), math.Inf(1)
	for _, eps := range []float64{1e-2, 1e-3, 1e-4} {
		s, err := SolveParamagnetic(ctx, Problem{Classes: cl, Alpha: 0.5, Gamma: gc * (1 - eps)})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.States) != 0 || len(s.Blocks) != 1 || s.SpontaneousEig() >= 1 {
			t.Fatalf("ε = %g: Ω = %d, B = %d, top eigenvalue %g: want the paramagnetic one-block solution", eps, len(s.States), len(s.Blocks), s.SpontaneousEig())
		}
		checkResiduals(t, s)
		cs, norm := cosine(s.Blocks[0].U)
		dev := 1 - cs
		t.Logf("ε = %g: 1 − cos = %.3g, |u|_f = %.4g", eps, dev, norm)
		if !(dev < prevDev) || !(norm < prevNorm) || !(norm > 0) {
			t.Fatalf("ε = %g: 1 − cos = %g (before %g), |u| = %g (before %g): should both shrink", eps, dev, prevDev, norm, prevNorm)
		}
		if eps == 1e-4 && dev > 1e-8 {
			t.Fatalf("1 − cos = %g at ε = 1e-4: not tangent to the top eigenvector", dev)
		}
		prevDev, prevNorm = dev, norm
	}
	// |u| ∝ √ε: a factor 10 between ε = 1e-2 and 1e-4 (within 20 %)
	s2, _ := SolveParamagnetic(ctx, Problem{Classes: cl, Alpha: 0.5, Gamma: gc * (1 - 1e-2)})
	_, n2 := cosine(s2.Blocks[0].U)
	if r := n2 / prevNorm; r < 8 || r > 12 {
		t.Fatalf("|u|(ε = 1e-2)/|u|(ε = 1e-4) = %g, want ≈ 10 (|u| ∝ √ε)", r)
	}
	// negative control: far below the threshold the direction is tilted
	far, err := SolveParamagnetic(ctx, Problem{Classes: cl, Alpha: 0.5, Gamma: gc * 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if len(far.States) == 0 {
		if cs, _ := cosine(far.Blocks[0].U); 1-cs < 1e-4 {
			t.Fatalf("γ = 0.3 γ_c: 1 − cos = %g, expected a visible tilt", 1-cs)
		}
	}
}

// Done-when: the over-regularised threshold equals λ_max/K. Random biased
// data (K = 4, N = 300): λ_max by power iteration on ξξᵀ/N computed from the
// raw matrix; Classes.Threshold agrees, the solver returns W = 0 just above
// λ_max/K and W ≠ 0 just below, and a downward sweep brackets the "zero"
// event around it.
func TestThresholdIsLambdaMaxOverK(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	k, n := 4, 300
	xi := mat.NewDense(k, n, nil)
	for i := 0; i < n; i++ {
		for r := 0; r < k; r++ {
			s := 1.0
			if rng.Float64() < 0.2+0.1*float64(r) {
				s = -1
			}
			xi.Set(r, i, s)
		}
	}
	x := make([][]float64, k)
	for a := range x {
		x[a] = make([]float64, k)
		for b := range x[a] {
			for i := 0; i < n; i++ {
				x[a][b] += xi.At(a, i) * xi.At(b, i) / float64(n)
			}
		}
	}
	lam, _ := topEigenPower(x)
	gc := lam / float64(k)
	cl, err := ClassesFromData(xi)
	if err != nil {
		t.Fatal(err)
	}
	th, err := cl.Threshold()
	if err != nil || math.Abs(th-gc) > 1e-12 {
		t.Fatalf("Threshold() = %g (%v), λ_max/K = %g", th, err, gc)
	}
	ctx := context.Background()
	above, err := SolveParamagnetic(ctx, Problem{Classes: cl, Alpha: 0.6, Gamma: gc * (1 + 1e-4)})
	if err != nil {
		t.Fatal(err)
	}
	below, err := SolveParamagnetic(ctx, Problem{Classes: cl, Alpha: 0.6, Gamma: gc * (1 - 1e-3)})
	if err != nil {
		t.Fatal(err)
	}
	if above.Norm() != 0 || !(below.Norm() > 1e-8) {
		t.Fatalf("‖W‖² = %g at γ_c(1+1e-4), %g at γ_c(1−1e-3)", above.Norm(), below.Norm())
	}
	checkResiduals(t, below)
	var gs []float64
	for i := 1; i <= 20; i++ {
		gs = append(gs, gc*(1.05-0.01*float64(i)))
	}
	path, err := Sweep(ctx, above, gs, SweepOptions{LocateTol: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range path.Events {
		if e.Kind == "zero" {
			found = true
			// (the grid point 1.00·γ_c may round to just below γ_c)
			if !(e.Hi <= gc && gc <= e.Lo*(1+1e-12) && e.Lo-e.Hi <= 1e-4+1e-12) {
				t.Fatalf("W → 0 bracketed in [%g, %g], λ_max/K = %g", e.Hi, e.Lo, gc)
			}
		}
	}
	if !found {
		t.Fatalf("no zero event in %v", path)
	}
	for _, s := range path.Solutions {
		checkResiduals(t, s)
	}
}

// Done-when: BAM solutions satisfy the inequalities (25),
//
//	Σ_i w_iµ ξ^k_i ξ̂^k_µ ≥ 0  and  Σ_µ w_iµ ξ^k_i ξ̂^k_µ ≥ 0,
//
// written here per block and site class from the blocks and states alone
// (data point of a state: its largest overlap, recomputed; ξ̂ = sign⟨h⟩).
// Negative control: the hidden signs of another data point's state violate
// them (the check can fail). Also checks that the states are those reached
// by the alternating iteration from the data points (checkMattis).
func TestBAMInequalities25(t *testing.T) {
	cl := mustClasses(t, fig4)
	k := cl.K
	ctx := context.Background()
	start, _, err := BAMStart(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03}, BAMOptions{MaxMargin: true})
	if err != nil {
		t.Fatal(err)
	}
	path, err := Sweep(ctx, start, []float64{0.01, 0.003}, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// ineq returns the smallest value of the two families of (25) for data
	// point l with hidden signs hat (per block).
	ineq := func(s *Solution, l int, hat []float64) float64 {
		worst := math.Inf(1)
		for b, bl := range s.Blocks {
			in := 0.0
			for j, f := range cl.F {
				in += f * cl.Sigma[j*k+l] * bl.U[j]
			}
			worst = math.Min(worst, hat[b]*in)
		}
		for j := range cl.F {
			a := 0.0
			for b, bl := range s.Blocks {
				a += bl.Frac * bl.U[j] * hat[b]
			}
			worst = math.Min(worst, cl.Sigma[j*k+l]*a)
		}
		return worst
	}
	for _, s := range append([]*Solution{start}, path.Solutions...) {
		checkResiduals(t, s)
		checkMattis(t, s)
		if len(s.States) != k {
			t.Fatalf("γ = %g: Ω = %d, want K = %d", s.Problem.Gamma, len(s.States), k)
		}
		hats := make([][]float64, k)
		for _, st := range s.States {
			best, l := math.Inf(-1), -1
			for r := 0; r < k; r++ {
				q := 0.0
				for j, f := range cl.F {
					q += f * cl.Sigma[j*k+r] * st.V[j]
				}
				if q > best {
					best, l = q, r
				}
			}
			if hats[l] != nil {
				t.Fatalf("γ = %g: two states closest to data point %d", s.Problem.Gamma, l)
			}
			hats[l] = make([]float64, len(st.H))
			for b, h := range st.H {
				hats[l][b] = math.Copysign(1, h)
			}
		}
		for l := 0; l < k; l++ {
			if w := ineq(s, l, hats[l]); !(w > 0) {
				t.Fatalf("γ = %g, data point %d: inequalities (25) violated (min %g)", s.Problem.Gamma, l, w)
			}
			other := hats[(l+1)%k]
			if w := ineq(s, l, other); !(w < 0) {
				t.Fatalf("γ = %g: the hidden signs of data point %d satisfy (25) for data point %d (min %g): the check cannot fail", s.Problem.Gamma, (l+1)%k, l, w)
			}
		}
		if v, err := s.BAMViolation(); err != nil || !(v > 0) {
			t.Fatalf("γ = %g: BAMViolation = %g (%v), the inequalities hold", s.Problem.Gamma, v, err)
		}
	}
}

// checkMattis runs the alternating mean-field iteration (Eq. 20) from every
// data point, written here from scratch, and asserts that its limit is one
// of the reported states (up to sign), or the paramagnetic state when it
// tends to 0. The solution must not be close to a transition (the iteration
// slows down there).
func checkMattis(t *testing.T, s *Solution) {
	t.Helper()
	cl := s.Problem.Classes
	k, c, nb := cl.K, len(cl.F), len(s.Blocks)
	al := s.Problem.Alpha
	v := make([]float64, c)
	h := make([]float64, nb)
	for l := 0; l < k; l++ {
		for j := 0; j < c; j++ {
			v[j] = cl.Sigma[j*k+l]
		}
		for it := 0; it < 200000; it++ {
			d := 0.0
			for b, bl := range s.Blocks {
				a := 0.0
				for j, f := range cl.F {
					a += f * bl.U[j] * v[j]
				}
				x := math.Tanh(a)
				d = math.Max(d, math.Abs(x-h[b]))
				h[b] = x
			}
			for j := 0; j < c; j++ {
				a := 0.0
				for b, bl := range s.Blocks {
					a += bl.Frac * bl.U[j] * h[b]
				}
				v[j] = math.Tanh(al * a)
			}
			if d < 1e-13 {
				break
			}
		}
		mx := 0.0
		for _, x := range h {
			mx = math.Max(mx, math.Abs(x))
		}
		if mx < 1e-6 {
			continue // paramagnetic limit
		}
		found := false
		for _, st := range s.States {
			dp, dm := 0.0, 0.0
			for b := range h {
				dp = math.Max(dp, math.Abs(h[b]-st.H[b]))
				dm = math.Max(dm, math.Abs(h[b]+st.H[b]))
			}
			if math.Min(dp, dm) < 1e-7 {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("γ = %g: the iteration from data point %d ends at h = %v, not a reported state", s.Problem.Gamma, l, h)
		}
	}
}

// stateStable (a Cholesky test of (1−1e-9)I − S) agrees with the top
// eigenvalue of the symmetrised Jacobian S of the alternating iteration,
// computed here with an eigen-decomposition, on random weights and states
// scaled to straddle the threshold.
func TestStateStableEigen(t *testing.T) {
	cl := mustClasses(t, fig4)
	rng := rand.New(rand.NewPCG(21, 22))
	p := Problem{Classes: cl, Alpha: 0.8, Gamma: 0.05}
	nb, c := 4, len(cl.F)
	stable, unstable := 0, 0
	for trial := 0; trial < 400; trial++ {
		phi := []float64{0.1 + rng.Float64(), 0.1 + rng.Float64(), 0.1 + rng.Float64(), 0.1 + rng.Float64()}
		e := newEngine(&p, phi)
		scale := 0.5 + 3*rng.Float64()
		for i := range e.u {
			e.u[i] = scale * rng.NormFloat64()
		}
		h := make([]float64, nb)
		for b := range h {
			h[b] = math.Tanh(2 * rng.NormFloat64())
		}
		s := mat.NewSymDense(nb, nil)
		for b := 0; b < nb; b++ {
			for b2 := b; b2 < nb; b2++ {
				m := 0.0
				for j := 0; j < c; j++ {
					a := 0.0
					for q := 0; q < nb; q++ {
						a += phi[q] * e.u[q*c+j] * h[q]
					}
					v := math.Tanh(0.8 * a)
					m += cl.F[j] * e.u[b*c+j] * (1 - v*v) * e.u[b2*c+j]
				}
				s.SetSym(b, b2, 0.8*m*math.Sqrt(phi[b]*(1-h[b]*h[b])*phi[b2]*(1-h[b2]*h[b2])))
			}
		}
		var es mat.EigenSym
		if !es.Factorize(s, false) {
			t.Fatal("eigen-decomposition failed")
		}
		vals := es.Values(nil)
		want := vals[nb-1] < 1-1e-9
		if math.Abs(vals[nb-1]-1) < 1e-6 {
			continue // too close to call
		}
		if got := e.stateStable(h); got != want {
			t.Fatalf("trial %d: stateStable = %v, top eigenvalue %g", trial, got, vals[nb-1])
		}
		if want {
			stable++
		} else {
			unstable++
		}
	}
	if stable < 20 || unstable < 20 {
		t.Fatalf("%d stable and %d unstable cases: the test does not straddle the threshold", stable, unstable)
	}
}
