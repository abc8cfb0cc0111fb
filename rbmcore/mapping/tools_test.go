package mapping

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

func TestZeroFieldBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, kind := range hiddenKinds {
		for _, spinVis := range []bool{false, true} {
			tm := randomModel(kind, 6, 15, rng, 1, 0, 1, spinVis)
			if kind == "poisson" {
				paramByName(tm.hid, "theta")[0] = -5
			}
			mp := mustMapper(t, tm)
			b, err := mp.ZeroFieldBias(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			copy(paramByName(tm.vis, "theta"), b)
			f, err := mustMapper(t, tm).Fields(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for k, x := range f {
				if math.Abs(x) > 1e-12*math.Max(1, math.Abs(b[k])) {
					t.Errorf("%s spin=%v: field %d = %g after ZeroFieldBias", kind, spinVis, k, x)
				}
			}
		}
	}
}

// Eq. 22 on J12 = 0.5, J13 = −0.3, J34 = 0.25 (zero elsewhere) and
// h = (0.1, −0.2, 0.3, 0): numpy gives λ_min = −0.5991436 and
// b = h + λ_min/2; then random J for M = N−1 and smaller M.
func TestLinearFromCouplings(t *testing.T) {
	j := mat.NewDense(4, 4, []float64{
		0, 0.5, -0.3, 0,
		0.5, 0, 0, 0,
		-0.3, 0, 0, 0.25,
		0, 0, 0.25, 0,
	})
	h := []float64{0.1, -0.2, 0.3, 0}
	m, err := LinearFromCouplings(j, h, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantB := []float64{-1.99571801e-01, -4.99571801e-01, 4.28198784e-04, -2.99571801e-01}
	for i, b := range m.Visible.(*rbm.BinaryLayer).Theta {
		if math.Abs(b-wantB[i]) > 1e-9 {
			t.Errorf("b[%d] = %.12f, numpy %.12f", i, b, wantB[i])
		}
	}
	checkLinear := func(name string, m *rbm.RBM, j mat.Matrix, h []float64, exact bool) {
		mp, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mp.Pairwise(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		f, _ := mp.Fields(context.Background())
		n := len(h)
		for a := 0; a < n; a++ {
			if math.Abs(f[a]-h[a]) > 1e-13 {
				t.Errorf("%s: field %d = %v, want %v", name, a, f[a], h[a])
			}
			for b := a + 1; exact && b < n; b++ {
				if math.Abs(got.At(a, b)-j.At(a, b)) > 1e-13 {
					t.Errorf("%s: J[%d][%d] = %v, want %v", name, a, b, got.At(a, b), j.At(a, b))
				}
			}
		}
	}
	checkLinear("reference", m, j, h, true)
	rng := rand.New(rand.NewPCG(23, 24))
	const n = 7
	jr := mat.NewSymDense(n, nil)
	hr := make([]float64, n)
	for a := 0; a < n; a++ {
		hr[a] = rng.NormFloat64()
		for b := a + 1; b < n; b++ {
			jr.SetSym(a, b, rng.NormFloat64())
		}
	}
	full, err := LinearFromCouplings(jr, hr, n-1)
	if err != nil {
		t.Fatal(err)
	}
	checkLinear("random M=N-1", full, jr, hr, true)
	// Smaller M: WWᵀ is the best rank-M approximation of J + λ0 I, so no
	// random perturbation of W does better, and the residual is orthogonal
	// to W.
	var lam0 float64
	{
		var e mat.EigenSym
		e.Factorize(jr, false)
		lam0 = -e.Values(nil)[0]
	}
	target := mat.NewDense(n, n, nil)
	target.Copy(jr)
	for a := 0; a < n; a++ {
		target.Set(a, a, lam0)
	}
	resid := func(w mat.Matrix) float64 {
		var r mat.Dense
		r.Mul(w, w.T())
		r.Sub(target, &r)
		return mat.Norm(&r, 2)
	}
	for _, mm := range []int{1, 3, 5} {
		low, err := LinearFromCouplings(jr, hr, mm)
		if err != nil {
			t.Fatal(err)
		}
		checkLinear("random low rank", low, jr, hr, false)
		best := resid(low.W)
		for trial := 0; trial < 50; trial++ {
			var p mat.Dense
			p.CloneFrom(low.W)
			for a := 0; a < n; a++ {
				for b := 0; b < mm; b++ {
					p.Set(a, b, p.At(a, b)+0.01*rng.NormFloat64())
				}
			}
			if r := resid(&p); r < best-1e-12 {
				t.Errorf("M=%d: perturbed W has residual %v < %v", mm, r, best)
			}
		}
	}
	if _, err := LinearFromCouplings(mat.NewDense(2, 3, nil), []float64{0, 0}, 1); err == nil {
		t.Error("non-square J: no error")
	}
	if _, err := LinearFromCouplings(mat.NewDense(2, 2, []float64{0, 1, 2, 0}), []float64{0, 0}, 1); err == nil {
		t.Error("asymmetric J: no error")
	}
}

// threeBody is a three-body design: an N = 3, M = 4 Exponential RBM
// with zero fields and thresholds that is a pure three-body model,
// I3 = 4a³ ([BR21] Fig. 2).
func threeBody(a float64) *rbm.RBM {
	wp, wm := math.Log1p(a), math.Log1p(-a)
	w := mat.NewDense(3, 4, []float64{
		wp, wp, wm, wm,
		wp, wm, wp, wm,
		wp, wm, wm, wp,
	})
	return &rbm.RBM{Visible: rbm.Binary(3), Hidden: rbm.Poisson(4), W: w}
}

func TestThreeBodyAndProbabilities(t *testing.T) {
	m := threeBody(0.5)
	terms, err := All(context.Background(), m, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range terms {
		want := 0.0
		if len(term.Sites) == 3 {
			want = 0.5
		}
		if math.Abs(term.Value-want) > 1e-15 {
			t.Errorf("I%v = %v, want %v", term.Sites, term.Value, want)
		}
	}
	p, err := Probabilities(terms, 3)
	if err != nil {
		t.Fatal(err)
	}
	for v, x := range p {
		want := 0.1156240291
		if v == 7 {
			want = 0.1906317962
		}
		if math.Abs(x-want) > 1e-10 {
			t.Errorf("P(%03b) = %.10f, reference %.10f", v, x, want)
		}
	}
	// Against the engine's free energy over all states (independent of the
	// mapping) for a random model, and Gibbs samples of the three-body RBM.
	rng := rand.New(rand.NewPCG(25, 26))
	for _, kind := range hiddenKinds {
		tm := randomModel(kind, 5, 3, rng, 0.8, 0, 1, false)
		rm := &rbm.RBM{Visible: tm.vis, Hidden: tm.hid, W: mat.NewDense(5, 3, tm.w)}
		all, err := All(context.Background(), rm, 5)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Probabilities(all, 5)
		if err != nil {
			t.Fatal(err)
		}
		states := mat.NewDense(32, 5, nil)
		for v := 0; v < 32; v++ {
			for k := 0; k < 5; k++ {
				states.Set(v, k, float64(v>>k&1))
			}
		}
		fe := rm.FreeEnergy(states)
		z := 0.0
		for _, f := range fe {
			z += math.Exp(-f)
		}
		for v := range p {
			if want := math.Exp(-fe[v]) / z; math.Abs(p[v]-want) > 1e-12 {
				t.Errorf("%s: P(%05b) = %v, engine free energy gives %v", kind, v, p[v], want)
			}
		}
	}
	// Blocked Gibbs sampling of the three-body RBM (20000 independent chains
	// of 30 sweeps) reproduces the table within 5 binomial standard errors.
	const chains, sweeps = 20000, 30
	v := mat.NewDense(chains, 3, nil)
	for i := 0; i < chains; i++ {
		for k := 0; k < 3; k++ {
			v.Set(i, k, float64(rng.IntN(2)))
		}
	}
	for s := 0; s < sweeps; s++ {
		hs, err := m.SampleHidden(rng, v)
		if err != nil {
			t.Fatal(err)
		}
		if v, err = m.SampleVisible(rng, hs); err != nil {
			t.Fatal(err)
		}
	}
	freq, err := StateFrequencies(v)
	if err != nil {
		t.Fatal(err)
	}
	for s, f := range freq {
		se := math.Sqrt(p[s] * (1 - p[s]) / chains)
		if math.Abs(f-p[s]) > 5*se {
			t.Errorf("state %03b: Gibbs frequency %.4f, model %.4f (±%.4f)", s, f, p[s], se)
		}
	}
}

// ToSpin against the direct Walsh transform 2^{−N} Σ_σ F(σ) Π_{k∈T} σ_k of
// the log-marginal, the reference ReLU coefficients, and FromSpin as its
// inverse; a spin-visible RBM's terms against the transform of its own
// log-marginal in ±1 variables.
func TestSpinConversion(t *testing.T) {
	mp, err := New(referenceModel("relu"))
	if err != nil {
		t.Fatal(err)
	}
	terms, err := mp.All(context.Background(), 4)
	if err != nil {
		t.Fatal(err)
	}
	spin, err := ToSpin(terms)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		termKey([]int{0}):          0.318160450529,
		termKey([]int{0, 1}):       -0.0356900322227,
		termKey([]int{0, 1, 2}):    -0.00650004369534,
		termKey([]int{0, 1, 2, 3}): -0.00020181191572,
	}
	for _, s := range spin {
		if w, ok := want[termKey(s.Sites)]; ok && math.Abs(s.Value-w) > 1e-11 {
			t.Errorf("Ĵ%v = %.12g, reference %.12g", s.Sites, s.Value, w)
		}
	}
	back, err := FromSpin(spin)
	if err != nil {
		t.Fatal(err)
	}
	for i := range terms {
		if math.Abs(back[i].Value-terms[i].Value) > 1e-14 || len(back[i].Sites) != len(terms[i].Sites) {
			t.Errorf("FromSpin(ToSpin): %v = %v, want %v %v", back[i].Sites, back[i].Value, terms[i].Sites, terms[i].Value)
		}
	}
	rng := rand.New(rand.NewPCG(27, 28))
	for _, kind := range hiddenKinds {
		const n = 5
		tm := randomModel(kind, n, 3, rng, 0.6, 0, 1, true)
		rm := &rbm.RBM{Visible: tm.vis, Hidden: tm.hid, W: mat.NewDense(n, 3, tm.w)}
		all, err := All(context.Background(), rm, n)
		if err != nil {
			t.Fatal(err)
		}
		js, err := ToSpin(all)
		if err != nil {
			t.Fatal(err)
		}
		states := mat.NewDense(1<<n, n, nil)
		for v := 0; v < 1<<n; v++ {
			for k := 0; k < n; k++ {
				states.Set(v, k, float64(2*(v>>k&1)-1))
			}
		}
		fe := rm.FreeEnergy(states)
		for _, term := range js {
			direct := 0.0
			for v := 0; v < 1<<n; v++ {
				p := -fe[v]
				for _, k := range term.Sites {
					p *= float64(2*(v>>k&1) - 1)
				}
				direct += p
			}
			direct /= 1 << n
			if math.Abs(direct-term.Value) > 1e-12 {
				t.Errorf("%s spin visible: Ĵ%v = %v, Walsh transform of the free energy %v", kind, term.Sites, term.Value, direct)
			}
		}
	}
}

func TestStrengthAndRegression(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	tm := randomModel("binary", 8, 6, rng, 0.2, 0, 0.5, false)
	mp := mustMapper(t, tm)
	all, _ := mp.All(context.Background(), 3)
	exact := make([]float64, 3)
	count := make([]float64, 3)
	for _, term := range all {
		v := term.Value
		if len(term.Sites) == 1 {
			v -= mp.bias[term.Sites[0]]
		}
		exact[len(term.Sites)-1] += v * v
		count[len(term.Sites)-1]++
	}
	rms, err := mp.StrengthByOrder(context.Background(), 3, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	for s := range rms {
		if want := math.Sqrt(exact[s] / count[s]); math.Abs(rms[s]-want) > 1e-15*want {
			t.Errorf("RMS order %d = %v, want %v", s+1, rms[s], want)
		}
	}
	sampled, err := mp.StrengthByOrder(context.Background(), 3, 20, rng)
	if err != nil {
		t.Fatal(err)
	}
	if r := sampled[2] / rms[2]; r < 0.5 || r > 2 {
		t.Errorf("sampled RMS_3 %v far from exact %v", sampled[2], rms[2])
	}
	slope, w, err := StrengthSlope([]float64{0.5, 0.05, 0.005})
	if err != nil || math.Abs(slope-math.Log(0.1)) > 1e-14 || math.Abs(w-0.1) > 1e-15 {
		t.Errorf("StrengthSlope = %v, %v, %v; want ln 0.1, 0.1", slope, w, err)
	}
	if s, _ := OrderLimit(0.1); math.Abs(s-7.272540897341713) > 1e-12 {
		t.Errorf("OrderLimit(0.1) = %v, want 7.2725 (reference value)", s)
	}
	if _, err := OrderLimit(0); err == nil {
		t.Error("OrderLimit(0): no error")
	}
	ref := mat.NewDense(3, 3, []float64{0, 1, 2, 1, 0, -1, 2, -1, 0})
	j := mat.NewDense(3, 3, []float64{0, 0.5, 1, 0.5, 0, -0.5, 1, -0.5, 0})
	g, err := RegressCouplings(j, ref)
	if err != nil || math.Abs(g.Alpha-0.5) > 1e-15 || math.Abs(g.Slope-0.5) > 1e-15 || math.Abs(g.Intercept) > 1e-15 || math.Abs(g.R2-1) > 1e-15 {
		t.Errorf("RegressCouplings = %+v, %v; want α = slope = 0.5, intercept 0, R² 1", g, err)
	}
	j.Set(0, 1, 1.5)
	g, _ = RegressCouplings(j, ref)
	// Through the origin: Σxy/Σx² = (1.5 + 2 + 0.5)/6; OLS: x̄ = 2/3, ȳ = 2/3.
	if math.Abs(g.Alpha-4.0/6) > 1e-15 || math.Abs(g.Slope-(4-4.0/3)/(6-4.0/3)) > 1e-15 {
		t.Errorf("RegressCouplings = %+v", g)
	}
}
