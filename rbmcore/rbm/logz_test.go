package rbm

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// referenceModel is an N=4, M=3 model with binary visible units and
// hidden units of the activations of Bulso & Roudi 2021 (thresholds
// c → θ = -c) of the given kind.
func referenceModel(hidden Layer) *RBM {
	v := Binary(4)
	copy(v.Theta, []float64{0.1, -0.2, 0.3, -0.4})
	c := []float64{0.25, -0.5, 1.0}
	for p, name := range hidden.ParamNames() {
		if name == "theta" {
			for k := range c {
				hidden.Params()[p][k] = -c[k]
			}
		}
	}
	w := mat.NewDense(4, 3, []float64{0.5, -0.3, 0.8, -0.7, 0.4, 0.2, 0.1, 0.9, -0.6, 0.3, -0.5, 0.45})
	return &RBM{Visible: v, Hidden: hidden, W: w}
}

// TestReferenceValues checks log Z' = log Z - Σ_µ Γ_µ(0) and log PL(1010)
// of referenceModel against values computed independently by enumeration,
// for the four activations of Bulso & Roudi 2021.
func TestReferenceValues(t *testing.T) {
	for _, c := range []struct {
		hidden    Layer
		logZp, pl float64
	}{
		{Gaussian(3), 3.47271049589, -2.83031158696},
		{ReLU(3), 3.63617983783, -1.97595344989},
		{Binary(3), 3.22453716878, -2.068698744},
		{Poisson(3), 4.88679922177, -2.35485462527},
	} {
		m := referenceModel(c.hidden)
		lz, err := m.ExactLogZ(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		g0 := []float64{0}
		m.Hidden.CGF(make([]float64, 3), g0)
		if got := lz - g0[0]; math.Abs(got-c.logZp) > 1e-10 {
			t.Errorf("%v: log Z' = %.12f, reference %.12f", m, got, c.logZp)
		}
		pl, err := m.PseudoLikelihood(context.Background(), mat.NewDense(1, 4, []float64{1, 0, 1, 0}))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(pl[0]-c.pl) > 1e-10 {
			t.Errorf("%v: log PL(1010) = %.12f, reference %.12f", m, pl[0], c.pl)
		}
	}
}

// TestExactLogZ compares ExactLogZ with a brute-force double sum over
// (v, h) and checks that enumerating either layer gives the same value.
func TestExactLogZ(t *testing.T) {
	m := New(Spin(5), Binary(4), Seed(2), WeightScale(0.8))
	randomiseFields(m, 3)
	vs, hs := enumStates(m.Visible), enumStates(m.Hidden)
	nvs, _ := vs.Dims()
	nhs, _ := hs.Dims()
	var lw []float64
	for a := 0; a < nvs; a++ {
		v := mat.NewDense(nhs, 5, nil)
		for b := 0; b < nhs; b++ {
			v.SetRow(b, vs.RawRowView(a))
		}
		for _, e := range m.Energy(v, hs) {
			lw = append(lw, -e)
		}
	}
	want := logSumExp(lw)
	got, err := m.ExactLogZ(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-11 {
		t.Errorf("ExactLogZ = %.14f, brute force %.14f", got, want)
	}
	// a 12×10 binary model summed both ways
	m2 := New(Binary(12), Binary(10), Seed(4), WeightScale(0.5))
	randomiseFields(m2, 5)
	ctx := context.Background()
	a, err := logSumConfigs(ctx, m2, m2.Visible, m2.Hidden, false, configs(m2.Visible))
	if err != nil {
		t.Fatal(err)
	}
	b, err := logSumConfigs(ctx, m2, m2.Hidden, m2.Visible, true, configs(m2.Hidden))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a-b) > 1e-10 {
		t.Errorf("visible enumeration %.14f, hidden enumeration %.14f", a, b)
	}
	if _, err := New(Gaussian(3), ReLU(3)).ExactLogZ(ctx); err == nil {
		t.Error("ExactLogZ of a continuous model gave no error")
	}
}

// TestPseudoLikelihood compares the exact pseudo-likelihood with
// conditionals computed from exact P(v) by enumeration, for binary, spin
// and Potts visible layers, and checks the stochastic estimator's mean.
func TestPseudoLikelihood(t *testing.T) {
	for _, vis := range []Layer{Binary(5), Spin(4), Potts(3, 3)} {
		m := New(vis, DReLU(3), Seed(6), WeightScale(0.7))
		randomiseFields(m, 7)
		vs := enumStates(m.Visible)
		f := m.FreeEnergy(vs)
		pl, err := m.PseudoLikelihood(context.Background(), vs)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := vs.Dims()
		idx := map[string]int{}
		for r := 0; r < rows; r++ {
			idx[fmt.Sprint(vs.RawRowView(r))] = r
		}
		vals := m.Visible.(Discrete).UnitValues()
		q := m.Visible.States()
		for r := 0; r < rows; r++ {
			want := 0.0
			for i := 0; i < m.Visible.Len(); i++ {
				var lw []float64
				for _, val := range vals {
					alt := append([]float64(nil), vs.RawRowView(r)...)
					copy(alt[i*q:(i+1)*q], val)
					lw = append(lw, -f[idx[fmt.Sprint(alt)]])
				}
				want += -f[r] - logSumExp(lw)
			}
			if math.Abs(pl[r]-want) > 1e-11 {
				t.Errorf("%v row %d: PL %v, exact %v", m, r, pl[r], want)
			}
		}
		// stochastic estimator: mean over many draws of one row
		rng := NewRNG(1, 2)
		one := mat.NewDense(4000, Width(m.Visible), nil)
		for r := 0; r < 4000; r++ {
			one.SetRow(r, vs.RawRowView(rows/2))
		}
		sp, err := m.StochasticPseudoLikelihood(context.Background(), rng, one)
		if err != nil {
			t.Fatal(err)
		}
		var s, s2 float64
		for _, x := range sp {
			s += x
			s2 += x * x
		}
		mean := s / 4000
		se := math.Sqrt((s2/4000 - mean*mean) / 4000)
		if math.Abs(mean-pl[rows/2]) > 5*se+1e-12 {
			t.Errorf("%v: stochastic PL mean %v ± %v, exact %v", m, mean, se, pl[rows/2])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(Binary(3), Binary(2)).PseudoLikelihood(ctx, mat.NewDense(40, 3, nil)); err == nil {
		t.Error("PL with a cancelled context gave no error")
	}
	if _, err := New(Poisson(2), Binary(2)).PseudoLikelihood(context.Background(), mat.NewDense(1, 2, nil)); err == nil {
		t.Error("PL of a poisson visible layer gave no error")
	}
}

// TestAISBracketsExact: forward and reverse AIS with 100 runs bracket the
// exact log Z (±3 SEM) for N = 20 (relu hidden, visible enumeration) and
// N = 24 (binary hidden, hidden enumeration).
func TestAISBracketsExact(t *testing.T) {
	ctx := context.Background()
	for _, m := range []*RBM{
		New(Binary(20), ReLU(6), Seed(8), WeightScale(0.3)),
		New(Binary(24), Binary(8), Seed(9), WeightScale(0.3)),
	} {
		randomiseFields(m, 10)
		exact, err := m.ExactLogZ(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewChains(m, 500, 11)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx, 200, nil); err != nil {
			t.Fatal(err)
		}
		base, err := BaseFromData(m.Visible, c.V, 1)
		if err != nil {
			t.Fatal(err)
		}
		a := AIS{Runs: 100, Betas: SMSchedule(1500), Base: base, Seed: 12}
		fwd, err := a.Run(ctx, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		rev, err := a.Reverse(ctx, m, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: exact %.5f, AIS %.5f [%.5f, %.5f], reverse %.5f [%.5f, %.5f]", m, exact,
			fwd.LogZ, fwd.LogZLow, fwd.LogZHigh, rev.LogZ, rev.LogZLow, rev.LogZHigh)
		for _, r := range []AISResult{fwd, rev} {
			if !(r.LogZLow <= exact && exact <= r.LogZHigh) || math.Abs(r.LogZ-exact) > 0.05 {
				t.Errorf("%v (reverse %v): log Z %.5f [%.5f, %.5f] does not bracket exact %.5f", m, r.Reverse, r.LogZ, r.LogZLow, r.LogZHigh, exact)
			}
			if len(r.LogWeights) != 100 {
				t.Errorf("%d log-weights", len(r.LogWeights))
			}
		}
		if clean, _ := fwd.WithoutOutliers(); math.Abs(clean.LogZ-exact) > 0.05 {
			t.Errorf("without outliers: %v vs %v", clean.LogZ, exact)
		}
	}
}

// TestAISSingleStepIsImportanceSampling: with the schedule {0, 1} the AIS
// weights are plain importance weights f_1(v)/f_0(v), v from the base.
func TestAISSingleStepIsImportanceSampling(t *testing.T) {
	m := New(Binary(6), Binary(3), Seed(1), WeightScale(0.5))
	exact, _ := m.ExactLogZ(context.Background())
	r, err := AIS{Runs: 20000, Betas: []float64{0, 1}, Seed: 3}.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.LogZLow <= exact && exact <= r.LogZHigh) {
		t.Errorf("importance sampling %v [%v, %v], exact %v", r.LogZ, r.LogZLow, r.LogZHigh, exact)
	}
}

func ExampleAIS() {
	m := New(Binary(12), Binary(6), Seed(1), WeightScale(0.2))
	exact, _ := m.ExactLogZ(context.Background())
	r, err := AIS{Runs: 50, Betas: LinearSchedule(500), Seed: 1}.Run(context.Background(), m, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.LogZLow <= exact && exact <= r.LogZHigh, math.Abs(r.LogZ-exact) < 0.01)
	// Output: true true
}

// TestAISOtherVisibleLayers: the interpolated visible layer path works for
// Potts, spin, Gaussian and dReLU visible layers (data-fitted bases where
// BaseFromData fits one), bracketing the exact log Z.
func TestAISOtherVisibleLayers(t *testing.T) {
	for i, m := range []*RBM{
		New(Potts(7, 3), ReLU(4), Seed(1), WeightScale(0.4)),
		New(Spin(12), Potts(3, 3), Seed(2), WeightScale(0.3)),
		New(Gaussian(5), Binary(8), Seed(3), WeightScale(0.3)),
		New(DReLU(4), Spin(7), Seed(4), WeightScale(0.3)),
	} {
		randomiseFields(m, uint64(20+i))
		checkAISBracketsExact(t, m, 100, 1000)
	}
}

// checkAISBracketsExact runs forward AIS (runs × steps) on m from the
// independent-site model fitted to 300 Gibbs samples of m, and checks that
// it brackets the exact log Z and lies within 0.05 nats of it.
func checkAISBracketsExact(t *testing.T, m *RBM, runs, steps int) {
	t.Helper()
	ctx := context.Background()
	exact, err := m.ExactLogZ(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChains(m, 300, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx, 100, nil); err != nil {
		t.Fatal(err)
	}
	base, err := BaseFromData(m.Visible, c.V, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := AIS{Runs: runs, Betas: SMSchedule(steps), Base: base, Seed: 6}.Run(ctx, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.LogZLow <= exact && exact <= r.LogZHigh) || math.Abs(r.LogZ-exact) > 0.05 {
		t.Errorf("%v: AIS %.5f [%.5f, %.5f], exact %.5f", m, r.LogZ, r.LogZLow, r.LogZHigh, exact)
	}
	t.Logf("%v: AIS %.5f [%.5f, %.5f], exact %.5f", m, r.LogZ, r.LogZLow, r.LogZHigh, exact)
}

// TestAISBracketsEveryKind: for every registered kind as the visible layer
// (binary hidden units, enumerated for the exact log Z), forward AIS from a
// data-fitted base (where the kind is a DataFitter) brackets the exact
// log Z within ±3 SEM and 0.05 nats.
func TestAISBracketsEveryKind(t *testing.T) {
	for i, vk := range allKinds() {
		t.Run(vk, func(t *testing.T) {
			t.Parallel()
			vis := makeLayer(vk, 5)
			m := New(vis, Binary(6), Seed(uint64(40+i)), WeightScale(0.3))
			randomiseFields(m, uint64(50+i))
			checkAISBracketsExact(t, m, 200, 3000)
		})
	}
}

// TestSoftplusSums checks ExactLogZ's sums of softplus over a binary layer
// against the layer's own CGF (a log1p per unit) on rows wider than 512
// units, with inputs from deep in both tails, and that a NaN input is not
// hidden.
func TestSoftplusSums(t *testing.T) {
	const rows, width = 7, 1100
	l := Binary(width)
	rng := NewRNG(3, 1)
	for u := range l.Theta {
		l.Theta[u] = 2 * rng.NormFloat64()
	}
	in := make([]float64, rows*width)
	for k := range in {
		in[k] = 15 * rng.NormFloat64()
		if k%97 == 0 {
			in[k] = 800 * (rng.Float64() - 0.5)
		}
	}
	want, got := make([]float64, rows), make([]float64, rows)
	l.CGF(in, want)
	softplusSums(l.Theta, in, got)
	for r := range want {
		if d := math.Abs(got[r] - want[r]); d > 1e-11*math.Abs(want[r]) {
			t.Errorf("row %d: %v, per-unit CGF %v (difference %.3g)", r, got[r], want[r], d)
		}
	}
	in[width+5] = math.NaN()
	softplusSums(l.Theta, in, got)
	if !math.IsNaN(got[1]) || math.IsNaN(got[0]) {
		t.Errorf("NaN in row 1: sums %v, %v", got[0], got[1])
	}
}
