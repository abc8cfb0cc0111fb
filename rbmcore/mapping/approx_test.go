package mapping

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// Eq. 19 on the reference model: J̃_12 and the normalised RMS error over
// the 6 pairs (reference values computed independently with numpy).
func TestEq19Reference(t *testing.T) {
	want := map[string][2]float64{
		"gaussian": {-0.31, 0},
		"relu":     {-0.135843704054, 0.1755162439},
		"binary":   {-0.0828894651037, 0.0962983090041},
		"poisson":  {-0.411566115972, 0.363268995278},
	}
	for kind, w := range want {
		mp, err := New(referenceModel(kind))
		if err != nil {
			t.Fatal(err)
		}
		jt, err := mp.ApproxPairwise()
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(jt.At(0, 1) - w[0]); d > 1e-11 {
			t.Errorf("%s: J̃_12 = %.13g, reference %.13g", kind, jt.At(0, 1), w[0])
		}
		a, err := mp.ApproxTerm(1, 0)
		if err != nil || math.Abs(a-jt.At(0, 1)) > 1e-15 {
			t.Errorf("%s: ApproxTerm(1,0) = %v (%v), ApproxPairwise %v", kind, a, err, jt.At(0, 1))
		}
		j, err := mp.Pairwise(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		e, err := NRMSE(j, jt)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(e - w[1]); d > 1e-10 {
			t.Errorf("%s: NRMSE = %.13g, reference %.13g", kind, e, w[1])
		}
	}
}

// Cumulants against closed forms (κ3, κ4 of Step from σ, ReLU κ3, κ4 at
// c = 0 from the reference values) and against finite differences of the
// engine's mean (Γ') for every kind.
func TestCumulants(t *testing.T) {
	kappaOf := func(kind string, theta float64, s int) float64 {
		var l rbm.Layer
		switch kind {
		case "relu":
			l = rbm.ReLU(1)
		case "binary":
			l = rbm.Binary(1)
		case "poisson":
			l = rbm.Poisson(1)
		case "gaussian":
			l = rbm.Gaussian(1)
		}
		paramByName(l, "theta")[0] = theta
		mp := mustMapper(t, testModel{vis: rbm.Binary(1), hid: l, w: []float64{0.1}, n: 1, m: 1})
		k, err := mp.Cumulants(s)
		if err != nil {
			t.Fatal(err)
		}
		return k[0]
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	cases := []struct {
		kind      string
		c         float64 // [BR21] threshold, θ = −c
		s         int
		want, tol float64
	}{
		{"relu", -1, 2, 0.629686285776605, 1e-14},
		{"relu", 0, 2, 0.363380227632419, 1e-14},
		{"relu", 2, 2, 0.114279100414082, 1e-14},
		{"relu", 0, 3, 0.2180136, 1e-7},
		{"relu", 0, 4, 0.11477, 1e-5},
		{"binary", -1, 2, 0.196611933241482, 1e-14},
		{"binary", 0, 2, 0.25, 1e-15},
		{"binary", 2, 2, 0.104993585403507, 1e-14},
		{"binary", 1.3, 3, sig(-1.3) * sig(1.3) * (1 - 2*sig(-1.3)), 1e-14},
		{"binary", 1.3, 4, sig(-1.3) * sig(1.3) * (1 - 6*sig(-1.3)*sig(1.3)), 1e-14},
		{"binary", 0.7, 1, sig(-0.7), 1e-15},
		{"poisson", -1, 2, math.E, 1e-14},
		{"poisson", 2, 5, math.Exp(-2), 1e-16},
		{"gaussian", 0.5, 1, -0.5, 0},
		{"gaussian", 0.5, 2, 1, 0},
		{"gaussian", 0.5, 3, 0, 0},
	}
	for _, c := range cases {
		if got := kappaOf(c.kind, -c.c, c.s); math.Abs(got-c.want) > c.tol {
			t.Errorf("%s c=%v: κ%d = %.15g, want %.15g", c.kind, c.c, c.s, got, c.want)
		}
	}
	// κ2 = Γ''(0) by central differences of the engine's Γ' for every kind,
	// including those (spin, drelu) without closed forms here.
	rng := rand.New(rand.NewPCG(9, 10))
	for _, kind := range hiddenKinds {
		tm := randomModel(kind, 3, 4, rng, 0.3, 0, 2, false)
		mp := mustMapper(t, tm)
		k2, err := mp.Cumulants(2)
		if err != nil {
			t.Fatal(err)
		}
		const h = 1e-4
		for mu := 0; mu < tm.m; mu++ {
			in := make([]float64, tm.m)
			lo, hi := make([]float64, tm.m), make([]float64, tm.m)
			for u := range in {
				in[u] = -h
			}
			tm.hid.Mean(in, lo)
			for u := range in {
				in[u] = h
			}
			tm.hid.Mean(in, hi)
			fd := (hi[mu] - lo[mu]) / (2 * h)
			if math.Abs(fd-k2[mu]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s unit %d: κ2 = %.10g, finite difference of the mean %.10g", kind, mu, k2[mu], fd)
			}
		}
	}
}

// Eqs. 19/21 converge to the exact terms as the weights shrink, at the
// predicted order: with W → εW the leading-order error is the next term of
// the cumulant series, Σ_µ κ^(s+1)_µ Π_k w_kµ · Σ_k w_kµ / 2 = O(ε^{s+1}),
// so (exact − Eq. 21) must approach it with a relative deviation O(ε).
func TestSmallWeightConvergence(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, kind := range []string{"binary", "relu", "poisson", "spin", "gaussian"} {
		// One hidden unit per model, so that the prediction is not a small
		// difference of several units' terms.
		for trial := 0; trial < 4; trial++ {
			tm := randomModel(kind, 5, 1, rng, 1, 0, 1.5, false)
			for _, sites := range [][]int{{0, 1}, {1, 2, 4}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}} {
				var prev float64
				for i, eps := range []float64{1e-2, 1e-3} {
					scaled := tm.scaled(eps)
					mp := mustMapper(t, scaled)
					exact, err := mp.Term(sites...)
					if err != nil {
						t.Fatal(err)
					}
					lo, err := mp.ApproxTerm(sites...)
					if err != nil {
						t.Fatal(err)
					}
					next, err := mp.Cumulants(len(sites) + 1)
					if err != nil {
						t.Fatal(err)
					}
					pred := 0.0
					for mu := range next {
						p, sum := next[mu]/2, 0.0
						for _, k := range sites {
							p *= scaled.w[k*tm.m+mu]
							sum += scaled.w[k*tm.m+mu]
						}
						pred += p * sum
					}
					if kind == "gaussian" {
						if math.Abs(exact-lo) > 1e-15*math.Abs(lo) {
							t.Errorf("Linear I%v = %v, Eq. 21 gives %v: they must agree exactly", sites, exact, lo)
						}
						continue
					}
					dev := math.Abs((exact-lo)-pred) / math.Abs(pred)
					if i > 0 && !(dev < 0.2*prev+1e-9) {
						t.Errorf("%s I%v ε=%g: exact − Eq.21 = %.4g, predicted %.4g (deviation %.3g after %.3g): not converging at order s+1",
							kind, sites, eps, exact-lo, pred, dev, prev)
					}
					prev = dev
				}
				if kind != "gaussian" && !(prev < 0.1) {
					t.Errorf("%s I%v: deviation from the predicted next order %.3g at ε = 1e-3", kind, sites, prev)
				}
			}
		}
	}
}

func TestRMSWeight(t *testing.T) {
	m := &rbm.RBM{Visible: rbm.Binary(2), Hidden: rbm.Binary(2), W: mat.NewDense(2, 2, []float64{1, -1, 3, 1})}
	if got, want := RMSWeight(m), math.Sqrt(12.0/4); math.Abs(got-want) > 1e-15 {
		t.Errorf("RMSWeight = %v, want %v", got, want)
	}
}

// Eq. 19 for a kind without closed-form higher cumulants (dReLU, through the
// layer's mean and variance): the error of the pairwise approximation is
// O(ε³) as the weights shrink like ε, so it drops by 10³ per decade of ε.
func TestSmallWeightConvergenceGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 4; trial++ {
		tm := randomModel("drelu", 4, 1, rng, 1, 0, 1.5, false)
		var errs []float64
		for _, eps := range []float64{1e-2, 1e-3} {
			mp := mustMapper(t, tm.scaled(eps))
			exact, err := mp.Term(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			lo, err := mp.ApproxTerm(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			errs = append(errs, math.Abs(exact-lo))
		}
		if r := errs[0] / errs[1]; !(r > 500 && r < 2000) {
			t.Errorf("dReLU trial %d: Eq. 19 error %.3g at ε = 1e-2, %.3g at 1e-3: ratio %.3g, want ≈ 1000 (third order)", trial, errs[0], errs[1], r)
		}
	}
}

// scaled returns a copy of tm with every weight multiplied by eps.
func (tm testModel) scaled(eps float64) testModel {
	out := tm
	out.w = make([]float64, len(tm.w))
	for j, x := range tm.w {
		out.w[j] = eps * x
	}
	return out
}
