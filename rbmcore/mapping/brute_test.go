package mapping

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// testModel is an RBM given as its two layers and N×M row-major weights.
type testModel struct {
	vis, hid rbm.Layer
	w        []float64
	n, m     int
}

// hiddenKinds are the hidden layer kinds the tests map: every registered
// kind of scalar units, in a fixed order for the kinds with closed forms
// (the tests' random streams depend on it), then any others.
var hiddenKinds = func() []string {
	kinds := []string{"binary", "gaussian", "relu", "poisson", "spin", "drelu"}
	for _, k := range rbm.LayerKinds() {
		l, err := rbm.NewLayer(k, 1, 0)
		if err != nil || l.States() > 1 || slices.Contains(kinds, k) {
			continue
		}
		kinds = append(kinds, k)
	}
	return kinds
}()

// newHidden returns m hidden units of the kind with random parameters:
// fields uniform in [-thetaMax, thetaMax], precisions in [0.5, 2].
func newHidden(kind string, m int, rng *rand.Rand, thetaMax float64) rbm.Layer {
	th := func() float64 { return thetaMax * (2*rng.Float64() - 1) }
	gm := func() float64 { return 0.5 + 1.5*rng.Float64() }
	switch kind {
	case "binary":
		l := rbm.Binary(m)
		for u := range l.Theta {
			l.Theta[u] = th()
		}
		return l
	case "spin":
		l := rbm.Spin(m)
		for u := range l.Theta {
			l.Theta[u] = th()
		}
		return l
	case "poisson":
		l := rbm.Poisson(m)
		for u := range l.Theta {
			l.Theta[u] = th()
		}
		return l
	case "gaussian":
		l := rbm.Gaussian(m)
		for u := range l.Theta {
			l.Theta[u], l.Gamma[u] = th(), gm()
		}
		return l
	case "relu":
		l := rbm.ReLU(m)
		for u := range l.Theta {
			l.Theta[u], l.Gamma[u] = th(), gm()
		}
		return l
	case "drelu":
		l := rbm.DReLU(m)
		for u := range l.ThetaPlus {
			l.ThetaPlus[u], l.ThetaMinus[u] = th(), th()
			l.GammaPlus[u], l.GammaMinus[u] = gm(), gm()
		}
		return l
	}
	// Any other registered kind: random fields, curvatures ("gamma…") in
	// [0.5, 2], other parameters at their defaults.
	l, err := rbm.NewLayer(kind, m, 0)
	if err != nil {
		panic(err)
	}
	for p, name := range l.ParamNames() {
		for u := range l.Params()[p] {
			switch {
			case strings.HasPrefix(name, "theta"):
				l.Params()[p][u] = th()
			case strings.HasPrefix(name, "gamma"):
				l.Params()[p][u] = gm()
			}
		}
	}
	return l
}

// randomModel draws weights N(0, sd²) with a fraction of "large" weights
// uniform in ±[2, 5].
func randomModel(kind string, n, m int, rng *rand.Rand, sd, large, thetaMax float64, spinVisible bool) testModel {
	t := testModel{n: n, m: m, hid: newHidden(kind, m, rng, thetaMax), w: make([]float64, n*m)}
	var theta []float64
	if spinVisible {
		l := rbm.Spin(n)
		theta, t.vis = l.Theta, l
	} else {
		l := rbm.Binary(n)
		theta, t.vis = l.Theta, l
	}
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	for i := range t.w {
		if rng.Float64() < large {
			t.w[i] = (2 + 3*rng.Float64()) * float64(1-2*rng.IntN(2))
		} else {
			t.w[i] = sd * rng.NormFloat64()
		}
	}
	return t
}

// bruteForce enumerates the unnormalised log-marginal
// F(v) = Σ_i θ_i x_i + Σ_µ Γ_µ(Σ_i w_iµ x_i) (x = v, or s = 2v−1 for a spin
// visible layer) over all 2^N states, using only the layer's UnitCGF, and
// returns its Möbius inversion I(S) = Σ_{T⊆S} (−1)^{|S|−|T|} F(1_T) together
// with a bound on the rounding error of each I(S).
func bruteForce(t testModel) (I, errBound []float64) {
	n, m := t.n, t.m
	spin := t.vis.Kind() == "spin"
	theta := paramByName(t.vis, "theta")
	size := 1 << n
	F := make([]float64, size)
	absF := make([]float64, size)
	in := make([]float64, 1)
	out := make([]float64, 1)
	for v := 0; v < size; v++ {
		x := func(i int) float64 {
			b := float64(v >> i & 1)
			if spin {
				return 2*b - 1
			}
			return b
		}
		var f, af float64
		for i := 0; i < n; i++ {
			f += theta[i] * x(i)
			af += math.Abs(theta[i] * x(i))
		}
		for mu := 0; mu < m; mu++ {
			in[0] = 0
			for i := 0; i < n; i++ {
				in[0] += t.w[i*m+mu] * x(i)
			}
			t.hid.UnitCGF(mu, in, out)
			f += out[0]
			af += math.Abs(out[0])
		}
		F[v], absF[v] = f, af
	}
	I = make([]float64, size)
	errBound = make([]float64, size)
	for S := 1; S < size; S++ {
		var sum, bound float64
		// Enumerate subsets T of S.
		for T := S; ; T = (T - 1) & S {
			if (popcount(S)-popcount(T))&1 == 1 {
				sum -= F[T]
			} else {
				sum += F[T]
			}
			bound += absF[T]
			if T == 0 {
				break
			}
		}
		I[S] = sum
		errBound[S] = 16 * 0x1p-52 * bound
	}
	return I, errBound
}

func maskOf(sites []int) int {
	m := 0
	for _, k := range sites {
		m |= 1 << k
	}
	return m
}

func mustMapper(tb testing.TB, t testModel) *Mapper {
	tb.Helper()
	mp, err := newMapper(t.vis, t.hid, t.w)
	if err != nil {
		tb.Fatal(err)
	}
	return mp
}

// TestAllMatchesBruteForce is the done-when test: for N ≤ 8 and every hidden
// kind, with small, moderate and large weights and fields up to ±10, each
// I(S) equals the Möbius inversion of the enumerated log-marginal to 1e-9
// relative (plus the brute force's own rounding bound).
func TestAllMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type regime struct {
		sd, large, thetaMax float64
	}
	regimes := []regime{{0.05, 0, 1}, {0.5, 0, 3}, {1, 0.15, 10}, {2, 0.3, 10}}
	checked, tight := 0, 0
	for _, kind := range hiddenKinds {
		for ri, r := range regimes {
			for _, spinVis := range []bool{false, true} {
				n := 5 + rng.IntN(4)
				m := 1 + rng.IntN(5)
				rr := r
				if kind == "poisson" && r.large > 0 {
					rr.thetaMax = 3 // e^{Σw+θ} must stay representable with some precision
				}
				tm := randomModel(kind, n, m, rng, rr.sd, rr.large, rr.thetaMax, spinVis)
				want, bound := bruteForce(tm)
				mp := mustMapper(t, tm)
				terms, err := mp.All(context.Background(), n)
				if err != nil {
					t.Fatal(err)
				}
				if len(terms) != (1<<n)-1 {
					t.Fatalf("%s: %d terms, want %d", kind, len(terms), (1<<n)-1)
				}
				for _, term := range terms {
					S := maskOf(term.Sites)
					tol := 1e-9*math.Abs(want[S]) + bound[S]
					if d := math.Abs(term.Value - want[S]); !(d <= tol) {
						t.Errorf("%s regime %d spin=%v N=%d M=%d: I%v = %.17g, brute force %.17g (diff %.3g, tol %.3g)",
							kind, ri, spinVis, n, m, term.Sites, term.Value, want[S], d, tol)
					}
					checked++
					if bound[S] < 1e-9*math.Abs(want[S]) {
						tight++
					}
				}
			}
		}
	}
	t.Logf("%d terms checked, %d with the brute-force rounding bound below 1e-9 relative", checked, tight)
	if tight < checked/2 {
		t.Errorf("only %d of %d comparisons were at 1e-9 relative precision", tight, checked)
	}
}

// TestTermMatchesAll checks Term, Fields and Triplets against All.
func TestTermMatchesAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, kind := range hiddenKinds {
		tm := randomModel(kind, 6, 4, rng, 0.7, 0.1, 2, false)
		mp := mustMapper(t, tm)
		all, err := mp.All(context.Background(), 3)
		if err != nil {
			t.Fatal(err)
		}
		byMask := map[int]float64{}
		for _, term := range all {
			byMask[maskOf(term.Sites)] = term.Value
		}
		f, err := mp.Fields(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range f {
			if v != byMask[1<<k] {
				t.Errorf("%s: Fields[%d] = %v, All gives %v", kind, k, v, byMask[1<<k])
			}
		}
		tr, err := mp.Triplets(context.Background(), []int{5, 1, 3, 1, 0})
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 4 {
			t.Fatalf("%s: %d triplets of 4 distinct sites, want 4", kind, len(tr))
		}
		for _, term := range tr {
			// Triplets organises Term's series by pairs: equal to rounding.
			if want := byMask[maskOf(term.Sites)]; !(math.Abs(term.Value-want) <= 1e-12*math.Abs(want)+1e-300) {
				t.Errorf("%s: triplet %v = %v, All gives %v", kind, term.Sites, term.Value, byMask[maskOf(term.Sites)])
			}
		}
		v, err := mp.Term(4, 2)
		if err != nil {
			t.Fatal(err)
		}
		if v != byMask[maskOf([]int{2, 4})] {
			t.Errorf("%s: Term(4,2) = %v, want %v", kind, v, byMask[maskOf([]int{2, 4})])
		}
	}
}

func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tm := randomModel("binary", 4, 2, rng, 0.5, 0, 1, false)
	mp := mustMapper(t, tm)
	for _, sites := range [][]int{{}, {4}, {-1}, {1, 1}} {
		if _, err := mp.Term(sites...); err == nil {
			t.Errorf("Term(%v): no error", sites)
		}
	}
	if _, err := mp.All(context.Background(), 5); err == nil {
		t.Error("All(maxOrder 5 > N 4): no error")
	}
	bad := append([]float64(nil), tm.w...)
	bad[3] = math.NaN()
	if _, err := newMapper(tm.vis, tm.hid, bad); err == nil {
		t.Error("NaN weight: no error")
	}
	if _, err := newMapper(tm.vis, tm.hid, bad[:5]); err == nil {
		t.Error("short weights: no error")
	}
	if _, err := newMapper(tm.vis, rbm.Potts(2, 3), tm.w); err == nil {
		t.Error("Potts hidden layer (3 states per unit): no error")
	}
	// Exponential units with λ̃ = e^709: every u_k u_l λ̃ overflows.
	hot := rbm.Poisson(2)
	hot.Theta[0], hot.Theta[1] = 709, 709
	if _, err := mustMapper(t, testModel{vis: tm.vis, hid: hot, w: []float64{1, 1, 1, 1, 1, 1, 1, 1}, n: 4, m: 2}).Pairwise(context.Background()); err == nil {
		t.Error("Pairwise with overflowing couplings: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mp.All(ctx, 4); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, err := mp.Pairwise(ctx); err == nil {
		t.Error("Pairwise with a cancelled context: no error")
	}
	if _, err := mp.Triplets(ctx, []int{0, 1, 2, 3}); err == nil {
		t.Error("Triplets with a cancelled context: no error")
	}
}

// Linear (Gaussian) hidden units: every term of order ≥ 3 is exactly zero,
// for binary and spin visible layers and any γ, θ.
func TestLinearHigherOrdersExactlyZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, spinVis := range []bool{false, true} {
		tm := randomModel("gaussian", 7, 5, rng, 1.5, 0.2, 5, spinVis)
		terms, err := mustMapper(t, tm).All(context.Background(), 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, term := range terms {
			if len(term.Sites) >= 3 && term.Value != 0 {
				t.Errorf("spin=%v: Linear I%v = %g, want exactly 0", spinVis, term.Sites, term.Value)
			}
		}
	}
}

// TestExponentialProductForm: for Exponential (poisson) hidden units every
// interaction is I(S) = Σ_µ λ̃_µ Π_{k∈S} u_kµ with λ̃ = e^θ, u = e^w − 1
// ([BR21] Eq. 20d; plus the visible bias for |S| = 1), evaluated here
// directly from the parameters: All and Pairwise, {0,1} and ±1 visible
// layers (through v = (1+s)/2: weights 2w, fields θ − Σ_i w_iµ), weights up
// to |w| = 5.
func TestExponentialProductForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, spinVis := range []bool{false, true} {
		for _, r := range []struct{ sd, large float64 }{{0.05, 0}, {0.7, 0}, {1, 0.2}} {
			tm := randomModel("poisson", 7, 4, rng, r.sd, r.large, 2, spinVis)
			n, m := tm.n, tm.m
			theta := paramByName(tm.hid, "theta")
			bias := append([]float64(nil), paramByName(tm.vis, "theta")...)
			w := append([]float64(nil), tm.w...)
			lam := make([]float64, m)
			for mu := range lam {
				x := theta[mu]
				if spinVis {
					for i := 0; i < n; i++ {
						x -= tm.w[i*m+mu]
					}
				}
				lam[mu] = math.Exp(x)
			}
			if spinVis {
				for i := range w {
					w[i] *= 2
				}
				for i := range bias {
					bias[i] *= 2
				}
			}
			product := func(sites []int) (sum, abs float64) {
				for mu := 0; mu < m; mu++ {
					p := lam[mu]
					for _, k := range sites {
						p *= math.Expm1(w[k*m+mu])
					}
					sum += p
					abs += math.Abs(p)
				}
				if len(sites) == 1 {
					sum += bias[sites[0]]
					abs += math.Abs(bias[sites[0]])
				}
				return sum, abs
			}
			mp := mustMapper(t, tm)
			terms, err := mp.All(t.Context(), n)
			if err != nil {
				t.Fatal(err)
			}
			for _, term := range terms {
				want, abs := product(term.Sites)
				if d := math.Abs(term.Value - want); !(d <= 1e-13*abs) {
					t.Errorf("spin=%v sd=%v: I%v = %.17g, Σ λ̃ Π u = %.17g", spinVis, r.sd, term.Sites, term.Value, want)
				}
			}
			j, err := mp.Pairwise(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < n; k++ {
				for l := k + 1; l < n; l++ {
					want, abs := product([]int{k, l})
					if d := math.Abs(j.At(k, l) - want); !(d <= 1e-13*abs) {
						t.Errorf("spin=%v sd=%v: J[%d][%d] = %.17g, Σ λ̃ u u = %.17g", spinVis, r.sd, k, l, j.At(k, l), want)
					}
				}
			}
		}
	}
}
