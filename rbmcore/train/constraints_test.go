package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// paramsByName returns copies of m's parameter slices keyed by name.
func paramsByName(m *rbm.RBM) map[string][]float64 {
	ps, names := modelParams(m)
	out := map[string][]float64{}
	for p, n := range names {
		out[n] = slices.Clone(ps[p])
	}
	return out
}

// centreColourMeans subtracts, for every visible site of q colours and
// every hidden unit, the colour mean of the weights (the zero-sum
// projection, written independently of rbm.ZeroSumGauge).
func centreColourMeans(w *mat.Dense, q int) {
	r, c := w.Dims()
	for i := 0; i < r; i += q {
		for j := 0; j < c; j++ {
			s := 0.0
			for a := 0; a < q; a++ {
				s += w.At(i+a, j)
			}
			for a := 0; a < q; a++ {
				w.Set(i+a, j, w.At(i+a, j)-s/float64(q))
			}
		}
	}
}

// centreFields subtracts the per-site mean of q-colour fields.
func centreFields(theta []float64, q int) {
	for i := 0; i < len(theta); i += q {
		s := 0.0
		for _, x := range theta[i : i+q] {
			s += x
		}
		for a := range theta[i : i+q] {
			theta[i+a] -= s / float64(q)
		}
	}
}

// exactSGD applies n steps θ ← θ + η ∇ of the exactly enumerated weighted
// log-likelihood, with finite-difference gradients (fdGradient), to every
// parameter not in frozen, calling project after each step.
func exactSGD(m *rbm.RBM, x *mat.Dense, w []float64, states *mat.Dense, lr float64, n int, frozen []string, project func(*rbm.RBM)) {
	for step := 0; step < n; step++ {
		g := fdGradient(m, x, w, states)
		ps, names := modelParams(m)
		for p := range ps {
			if slices.Contains(frozen, names[p]) {
				continue
			}
			for k := range ps[p] {
				ps[p][k] += lr * g[p][k]
			}
		}
		project(m)
	}
}

// compareParams reports entries of got and want (same architecture) that
// differ by more than tol.
func compareParams(t *testing.T, label string, got, want *rbm.RBM, tol float64) {
	t.Helper()
	gp, names := modelParams(got)
	wp, _ := modelParams(want)
	for p := range gp {
		for k := range gp[p] {
			if d := math.Abs(gp[p][k] - wp[p][k]); !(d <= tol*(1+math.Abs(wp[p][k]))) {
				t.Errorf("%s: %s[%d] = %.10f, want %.10f", label, names[p], k, gp[p][k], wp[p][k])
			}
		}
	}
}

// TestFreezeTrainingRun trains with Adam, penalties, centring and the
// InitCentred initialisation while freezing some parameters, and checks that
// the frozen ones stay bit-identical (Init included) while all others
// move; then a set-up with Potts visible units, dReLU hidden units
// with their fields held at 0.
func TestFreezeTrainingRun(t *testing.T) {
	set := basSet(t)
	gs := rbm.Gaussian(4)
	for j := range gs.Gamma {
		gs.Gamma[j] = 1.5 + 0.1*float64(j) // Init would reset γ to 1
	}
	m := rbm.New(rbm.Binary(9), gs, rbm.Seed(5))
	before := paramsByName(m)
	frozen := []string{"hidden.gamma", "visible.theta"}
	tr := setup{method: PCD{Chains: 20}, opt: Adam{}, Options: Options{Batch: 7, Epochs: 20, LR: 0.02, Centred: true, Freeze: frozen, Seed: 3, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}, Regularisers: []Regulariser{L2{Lambda: 0.01}, FieldsL2{Lambda: 0.1}}, Init: InitCentred{Pseudocount: 0.01}}}
	if _, err := tr.fit(context.Background(), m, set); err != nil {
		t.Fatal(err)
	}
	after := paramsByName(m)
	for name, b := range before {
		same := slices.Equal(after[name], b)
		if want := slices.Contains(frozen, name); same != want {
			t.Errorf("%s: unchanged = %v, want %v (frozen %v)", name, same, want, frozen)
		}
	}

	const n, q = 5, 3
	clock, err := data.ClockRing{N: n, P: q, Beta: 1.2}.Sample(context.Background(), 300, 1)
	if err != nil {
		t.Fatal(err)
	}
	m = rbm.New(rbm.Potts(n, q), rbm.DReLU(3), rbm.Seed(2))
	before = paramsByName(m)
	frozen = []string{"hidden.theta_plus", "hidden.theta_minus"}
	tr = setup{method: PT{Chains: 30}, opt: Adam{}, Options: Options{Batch: 50, Epochs: 10, LR: 0.01, Freeze: frozen, Seed: 4, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}, Regularisers: []Regulariser{L1Squared{Lambda: 0.025}}, Init: InitGaussian{}}}
	if _, err := tr.fit(context.Background(), m, clock); err != nil {
		t.Fatal(err)
	}
	after = paramsByName(m)
	for name, b := range before {
		if same := slices.Equal(after[name], b); same != slices.Contains(frozen, name) {
			t.Errorf("Potts × dReLU: %s unchanged = %v, frozen %v", name, same, frozen)
		}
	}
	// With the hidden fields frozen the weights are projected onto the
	// zero-sum gauge (Σ_a w_iµ(a) = 0) instead of moving colour means into them.
	for i := 0; i < n; i++ {
		for mu := 0; mu < 3; mu++ {
			s := 0.0
			for a := 0; a < q; a++ {
				s += m.W.At(i*q+a, mu)
			}
			if math.Abs(s) > 1e-12 {
				t.Errorf("Σ_a w_%d,%d(a) = %v, want 0", i, mu, s)
			}
		}
	}
}

// TestFreezeMatchesProjectedGradient checks the exact semantics of Freeze
// against independent finite-difference gradient steps: frozen weights of
// a Potts model that is not in the zero-sum gauge (the fields must not
// drift by the weights' colour means), and frozen hidden fields (the
// weights are projected onto Σ_a w = 0).
func TestFreezeMatchesProjectedGradient(t *testing.T) {
	const q, lr, steps = 3, 0.2, 3
	for _, frozen := range [][]string{{"weights"}, {"hidden.theta"}, {"visible.theta", "weights"}} {
		m := tinyModels()[2] // Potts(3, 3) × Binary(3), random weights
		x, w, states := tinyData(t, m)
		want := m.Clone()
		project := func(m *rbm.RBM) {
			if !slices.Contains(frozen, "visible.theta") {
				centreFields(m.Visible.Params()[0], q)
			}
			if !slices.Contains(frozen, "weights") {
				centreColourMeans(m.W, q) // the colour means are dropped: the hidden fields are frozen
			}
		}
		project(want) // Fit starts by putting the model into the constraints
		exactSGD(want, x, w, states, lr, steps, frozen, project)
		set := &data.Set{X: x, Kind: data.KindPotts, Q: q, Weights: w, Source: "tiny"}
		tr := setup{method: Exact{}, Options: Options{Epochs: steps, Batch: x.RawMatrix().Rows, LR: lr, Freeze: frozen, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
		before := paramsByName(m)
		if _, err := tr.fit(context.Background(), m, set); err != nil {
			t.Fatal(err)
		}
		compareParams(t, "Freeze "+strings.Join(frozen, ","), m, want, 1e-6)
		for _, name := range frozen {
			if !slices.Equal(paramsByName(m)[name], before[name]) {
				t.Errorf("Freeze %v: %s changed", frozen, name)
			}
		}
	}
}

// TestFreezeUnknownName checks that a parameter name the model does not
// have is an error naming it.
func TestFreezeUnknownName(t *testing.T) {
	m := rbm.New(rbm.Binary(9), rbm.ReLU(2), rbm.Seed(1))
	tr := setup{Options: Options{Freeze: []string{"hidden.gamma", "hidden.gama"}, Epochs: 1}}
	_, err := tr.fit(context.Background(), m, basSet(t))
	if err == nil || !strings.Contains(err.Error(), `"hidden.gama"`) || !strings.Contains(err.Error(), "hidden.gamma") {
		t.Fatalf("error %v, want one naming hidden.gama and listing the model's parameters", err)
	}
}

// TestMinGammaProjection makes one exact SGD step that would take a
// curvature of a ReLU and of a dReLU layer to minus its value and checks
// the result against the finite-difference step followed by max(γ, 0.05);
// with MinGamma < 0 the same step is a DivergenceError on that curvature
// and the model keeps its initial parameters.
func TestMinGammaProjection(t *testing.T) {
	for _, idx := range []int{0, 1} { // Binary × ReLU, Spin × dReLU
		m := tinyModels()[idx]
		x, w, states := tinyData(t, m)
		g := fdGradient(m, x, w, states)
		ps, names := modelParams(m)
		lr, crossing := 0.0, ""
		for p := range ps {
			for k := range ps[p] {
				if isCurvature(names[p]) && g[p][k] < 0 {
					if l := 2 * ps[p][k] / -g[p][k]; lr == 0 || l < lr {
						lr, crossing = l, names[p]
					}
				}
			}
		}
		if lr == 0 {
			t.Fatalf("%s: no curvature with a negative gradient", m)
		}
		want := m.Clone()
		exactSGD(want, x, w, states, lr, 1, nil, func(m *rbm.RBM) {
			ps, names := modelParams(m)
			for p := range ps {
				for k := range ps[p] {
					if isCurvature(names[p]) {
						ps[p][k] = math.Max(ps[p][k], 0.05)
					}
				}
			}
		})
		set := &data.Set{X: x, Kind: data.KindReal, Q: 1, Weights: w, Source: "tiny"}
		tr := setup{method: Exact{}, Options: Options{Epochs: 1, Batch: 5, LR: lr, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
		orig := m.Clone()
		if _, err := tr.fit(context.Background(), m, set); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		compareParams(t, m.String(), m, want, 1e-5*lr)
		if got := paramsByName(m)[crossing]; slices.Min(got) != 0.05 {
			t.Errorf("%s: %s = %v, want its minimum at the floor 0.05", m, crossing, got)
		}

		tr.MinGamma = -1
		_, err := tr.fit(context.Background(), orig, set)
		var de *DivergenceError
		if !errors.As(err, &de) || !isCurvature(de.Param) || de.Value > 0 {
			t.Fatalf("%s without MinGamma: error %v, want a DivergenceError on a curvature ≤ 0", m, err)
		}
		compareParams(t, "kept model", orig, tinyModels()[idx], 0)
	}
}

// TestPoissonDivergence trains Exponential (Poisson) hidden units on
// MNIST with a learning rate at which the weights explode while staying
// far below the generic threshold 1e3 ([BR21]'s protocol, on the 300
// MNIST test images bundled with the data package, 60 updates): the run
// must stop with a DivergenceError on the weights beyond ln(1e15), keeping
// the last good update.
func TestPoissonDivergence(t *testing.T) {
	t.Setenv("HARMONIUM_DATA", "../data/testdata")
	digits, err := data.MNIST(context.Background(), "test", data.CatalogueOptions{Binarize: true})
	if err != nil {
		t.Fatal(err)
	}
	m := rbm.New(rbm.Binary(784), rbm.Poisson(10), rbm.Seed(1))
	var last [][]float64
	tr := setup{method: CD{}, Options: Options{Epochs: 20, Batch: 100, LR: 0.05, Seed: 1, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}, OnUpdate: func(Update) { last = paramsOf(m) }, Init: InitCentred{}}}
	_, err = tr.fit(context.Background(), m, digits)
	var de *DivergenceError
	if !errors.As(err, &de) {
		t.Fatalf("error %v, want a DivergenceError", err)
	}
	t.Log(err)
	if de.Param != "weights" || !(math.Abs(de.Value) > poissonMaxWeight) || de.Limit != poissonMaxWeight || de.Epoch < 1 {
		t.Errorf("divergence report %+v, want weights beyond %v", de, poissonMaxWeight)
	}
	for _, x := range m.W.RawMatrix().Data {
		if math.Abs(x) > poissonMaxWeight {
			t.Fatalf("kept weight %v beyond %v", x, poissonMaxWeight)
		}
	}
	if last == nil || !sameParams(paramsOf(m), last) {
		t.Error("the model is not the one of the last good update")
	}
	if got := weightLimit(0, rbm.New(rbm.Poisson(3), rbm.Binary(2))); got != poissonMaxWeight {
		t.Errorf("default limit with Poisson visible units %v", got)
	}
	if got := weightLimit(0, rbm.New(rbm.Binary(3), rbm.ReLU(2))); got != defaultMaxWeight {
		t.Errorf("default limit without Poisson units %v", got)
	}
}

// exactPL returns the mean log pseudo-likelihood of the rows of v from
// free energies only: log P(v_i | v_−i) = −F(v) − log Σ_{v_i'} e^{−F(v with
// v_i')}, for binary visible units.
func exactPL(m *rbm.RBM, v *mat.Dense) float64 {
	rows, n := v.Dims()
	s := 0.0
	for r := 0; r < rows; r++ {
		for i := 0; i < n; i++ {
			alt := mat.NewDense(2, n, nil)
			alt.SetRow(0, v.RawRowView(r))
			alt.SetRow(1, v.RawRowView(r))
			alt.Set(1, i, 1-v.At(r, i))
			f := m.FreeEnergy(alt)
			s += -f[0] - (-f[0] + math.Log1p(math.Exp(f[0]-f[1])))
		}
	}
	return s / float64(rows)
}

// TestStochasticPL checks the monitor's pseudo-likelihood against the
// free-energy computation: exact when asked, and in expectation (within 4
// standard errors over 3000 draws) for the stochastic estimate, which
// must vary between draws.
func TestStochasticPL(t *testing.T) {
	set := basSet(t)
	m := rbm.New(rbm.Binary(9), rbm.Binary(5), rbm.Seed(4), rbm.WeightScale(0.8))
	want := exactPL(m, set.X)
	ctx := context.Background()
	got, err := pseudoLikelihood(ctx, m, set.X, nil)
	if err != nil || math.Abs(got-want) > 1e-10 {
		t.Fatalf("exact pseudo-likelihood %v (%v), free energies give %v", got, err, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const draws = 3000
	s, s2 := 0.0, 0.0
	for k := 0; k < draws; k++ {
		x, err := pseudoLikelihood(ctx, m, set.X, rng)
		if err != nil {
			t.Fatal(err)
		}
		s += x
		s2 += x * x
	}
	mean := s / draws
	sd := math.Sqrt(s2/draws - mean*mean)
	se := sd / math.Sqrt(draws)
	t.Logf("exact %.4f, stochastic %.4f ± %.4f (sd per draw %.3f)", want, mean, se, sd)
	if !(sd > 0.01) || math.Abs(mean-want) > 4*se || 4*se > 0.05*math.Abs(want) {
		t.Errorf("stochastic pseudo-likelihood %v ± %v (sd %v), exact %v", mean, se, sd, want)
	}

	// Through Fit: identical training (the monitor's randomness is
	// its own), the per-epoch stochastic values average to the exact ones.
	run := func(stochastic bool) *History {
		m := rbm.New(rbm.Binary(9), rbm.Binary(5), rbm.Seed(4), rbm.WeightScale(0.3))
		tr := setup{method: PCD{}, Options: Options{Batch: 14, Epochs: 300, LR: 0.02, Seed: 2, Monitor: Monitor{StochasticPL: stochastic, ReconEvery: -1}}}
		h, err := tr.fit(ctx, m, set)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ex, st := run(false), run(true)
	var d []float64
	for e := range ex.Records {
		d = append(d, st.Records[e].PseudoLikelihood-ex.Records[e].PseudoLikelihood)
	}
	dm, ds := 0.0, 0.0
	for _, x := range d {
		dm += x / float64(len(d))
	}
	for _, x := range d {
		ds += (x - dm) * (x - dm) / float64(len(d)-1)
	}
	se = math.Sqrt(ds / float64(len(d)))
	if !(ds > 0) || math.Abs(dm) > 4*se {
		t.Errorf("Fit: stochastic − exact pseudo-likelihood %v ± %v over %d epochs", dm, se, len(d))
	}
}
