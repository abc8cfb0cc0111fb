package train

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// unitMoments returns the conditional mean and variance of a one-unit dReLU
// layer with parameters xi (γ₊, γ₋, θ₊, θ₋) at input x, from the layer's own
// Mean and Var.
func unitMoments(xi [4]float64, x float64) (m, s2 float64) {
	l := &rbm.DReLULayer{GammaPlus: []float64{xi[0]}, GammaMinus: []float64{xi[1]},
		ThetaPlus: []float64{xi[2]}, ThetaMinus: []float64{xi[3]}}
	out := make([]float64, 1)
	l.Mean([]float64{x}, out)
	m = out[0]
	l.Var([]float64{x}, out)
	return m, out[0]
}

// TestDReLUCumulants checks the cumulants of cumulantsAt against central
// finite differences of the layer's mean and variance, in the input and in
// each of γ₊, γ₋, θ₊, θ₋, on units with one branch, both branches and a
// gap between them (θ₊ < 0 < ... a jump), at inputs on either side.
func TestDReLUCumulants(t *testing.T) {
	units := [][4]float64{
		{1, 1, 0, 0},        // a Gaussian
		{0.5, 3, 1.5, -0.7}, // asymmetric
		{2, 0.4, -2, 2},     // a gap around h = 0: both thresholds repel
		{1.3, 0.8, 4, 3},    // mostly positive
	}
	for _, xi := range units {
		l := &rbm.DReLULayer{GammaPlus: []float64{xi[0]}, GammaMinus: []float64{xi[1]},
			ThetaPlus: []float64{xi[2]}, ThetaMinus: []float64{xi[3]}}
		for _, x := range []float64{-3, -0.8, 0, 0.4, 2.5} {
			c := cumulantsAt(l, 0, x)
			m, s2 := unitMoments(xi, x)
			if math.Abs(c.m-m) > 1e-12*(1+math.Abs(m)) || math.Abs(c.s2-s2) > 1e-11*(1+s2) {
				t.Errorf("unit %v, I = %v: mean, variance %v, %v; the layer's %v, %v", xi, x, c.m, c.s2, m, s2)
			}
			const h = 1e-5
			_, sp := unitMoments(xi, x+h)
			_, sm := unitMoments(xi, x-h)
			if fd := (sp - sm) / (2 * h); math.Abs(c.k3-fd) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("unit %v, I = %v: Γ‴ = %v, finite differences %v", xi, x, c.k3, fd)
			}
			for p := 0; p < 4; p++ {
				up, dn := xi, xi
				up[p] += h
				dn[p] -= h
				mp, sp := unitMoments(up, x)
				mm, sm := unitMoments(dn, x)
				fdm, fds := (mp-mm)/(2*h), (sp-sm)/(2*h)
				if math.Abs(c.dm[p]-fdm) > 1e-6*(1+math.Abs(fdm)) || math.Abs(c.ds2[p]-fds) > 1e-6*(1+math.Abs(fds)) {
					t.Errorf("unit %v, I = %v, parameter %d: ∂m, ∂s2 = %v, %v; finite differences %v, %v", xi, x, p, c.dm[p], c.ds2[p], fdm, fds)
				}
			}
		}
	}
}

// smallDReLU returns a Potts(3, 3) × dReLU(2) RBM with asymmetric hidden
// potentials and the one-hot rows of all 27 visible configurations.
func smallDReLU() (*rbm.RBM, *mat.Dense) {
	m := rbm.New(rbm.Potts(3, 3), rbm.DReLU(2), rbm.Seed(4), rbm.WeightScale(0.8))
	d := m.Hidden.(*rbm.DReLULayer)
	copy(d.GammaPlus, []float64{0.7, 2.1})
	copy(d.GammaMinus, []float64{1.6, 0.5})
	copy(d.ThetaPlus, []float64{0.3, -0.9})
	copy(d.ThetaMinus, []float64{-0.4, 1.2})
	copy(m.Visible.Params()[0], []float64{0.2, -0.5, 0.3, 0, 0.8, -0.8, -0.1, 0.4, -0.3})
	x := mat.NewDense(27, 9, nil)
	for s := 0; s < 27; s++ {
		for i, c := 0, s; i < 3; i, c = i+1, c/3 {
			x.Set(s, i*3+c%3, 1)
		}
	}
	return m, x
}

// logProbs returns log P(v) of the rows of x, exactly.
func logProbs(t *testing.T, m *rbm.RBM, x *mat.Dense) []float64 {
	logZ, err := m.ExactLogZ(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := m.FreeEnergy(x)
	for k := range f {
		f[k] = -f[k] - logZ
	}
	return f
}

// dataVariances returns v_µ over the rows of x with weights c (nil:
// uniform), from the layer's Mean and Var.
func dataVariances(m *rbm.RBM, x *mat.Dense, c []float64) []float64 {
	in := m.HiddenInput(x)
	rows, nh := in.Dims()
	mean, vr := make([]float64, rows*nh), make([]float64, rows*nh)
	m.Hidden.Mean(in.RawMatrix().Data, mean)
	m.Hidden.Var(in.RawMatrix().Data, vr)
	v := make([]float64, nh)
	for u := 0; u < nh; u++ {
		mbar := 0.0
		for b := 0; b < rows; b++ {
			cb := 1 / float64(rows)
			if c != nil {
				cb = c[b]
			}
			mbar += cb * mean[b*nh+u]
		}
		for b := 0; b < rows; b++ {
			cb := 1 / float64(rows)
			if c != nil {
				cb = c[b]
			}
			d := mean[b*nh+u] - mbar
			v[u] += cb * (vr[b*nh+u] + d*d)
		}
	}
	return v
}

// TestBatchNormRescaleIsSymmetry checks that the rescaling leaves log P(v)
// of every visible configuration unchanged (exact enumeration) and takes
// the data variances v_µ to v_µ^(1−rate): to 1 with rate 1.
func TestBatchNormRescaleIsSymmetry(t *testing.T) {
	for _, rate := range []float64{1, 0.5} {
		m, x := smallDReLU()
		c := []float64{0.1, 0.3, 0.05, 0.2, 0.15, 0.2} // weighted rows
		batch := mat.DenseCopyOf(x.Slice(3, 9, 0, 9))
		before := logProbs(t, m, x)
		v0 := dataVariances(m, batch, c)
		var s bnStats
		s.compute(m.Hidden.(*rbm.DReLULayer), m.HiddenInput(batch).RawMatrix().Data, 6, c)
		for u := range v0 {
			if math.Abs(s.v[u]-v0[u]) > 1e-12*v0[u] {
				t.Errorf("v_%d = %v, from the layer's moments %v", u, s.v[u], v0[u])
			}
			if math.Abs(v0[u]-1) < 0.3 {
				t.Fatalf("v_%d = %v: the test model should start far from unit variance", u, v0[u])
			}
		}
		s.rescale(m, rate)
		after := logProbs(t, m, x)
		for k := range before {
			if math.Abs(after[k]-before[k]) > 1e-12 {
				t.Errorf("rate %v: log P(v_%d) %v → %v", rate, k, before[k], after[k])
			}
		}
		for u, v := range dataVariances(m, batch, c) {
			if want := math.Pow(v0[u], 1-rate); math.Abs(v-want) > 1e-12 {
				t.Errorf("rate %v: v_%d = %v after rescaling, want %v", rate, u, v, want)
			}
		}
	}
}

// TestBatchNormPenaltyDirection checks the ascent direction of a run with
// the λ₁² penalty and BatchNorm, with no likelihood gradient, against
// central finite differences of −Σ_µ v_µ R_µ, v_µ from the layer's moments
// on the minibatch, in every weight and hidden parameter.
func TestBatchNormPenaltyDirection(t *testing.T) {
	m, x := smallDReLU()
	batch := mat.DenseCopyOf(x.Slice(5, 12, 0, 9))
	rows, nv := batch.Dims()
	nh := m.Hidden.Len()
	const l1sq = 0.3
	penalty := func() float64 { return normalisedPenalty(m, batch, l1sq) }
	cfg, err := Options{BatchNorm: BatchNorm{Rate: 1}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	// No centring (µ = 0): the direction is the penalty's alone.
	r := &run{o: cfg, pen: penalties{l1sq: l1sq}, m: m, lg: newLayerGrads(m), dir: newGradient(m), mu: make([]float64, nv)}
	r.pos = newPhase(slices.Clone(batch.RawMatrix().Data), rows, nv, nh, false, 1)
	r.bn.compute(m.Hidden.(*rbm.DReLULayer), m.HiddenInput(batch).RawMatrix().Data, rows, nil)
	r.direction()
	check := func(name string, p []float64, dir []float64) {
		for k := range p {
			old := p[k]
			p[k] = old + 1e-6
			up := penalty()
			p[k] = old - 1e-6
			down := penalty()
			p[k] = old
			if fd := -(up - down) / 2e-6; math.Abs(fd-dir[k]) > 1e-7*(1+math.Abs(fd)) {
				t.Errorf("%s[%d]: direction %v, −∂(Σ v R) %v", name, k, dir[k], fd)
			}
		}
	}
	check("weights", m.W.RawMatrix().Data, r.dir.W.RawMatrix().Data)
	for p, name := range m.Hidden.ParamNames() {
		check(name, m.Hidden.Params()[p], r.dir.Hidden[p])
	}
}

// TestBatchNormFit trains with full-batch updates and checks that every
// hidden unit ends at unit variance over the data with BatchNorm (the last
// step moves it by little) and not without it, and that a resumed run
// equals the uninterrupted one.
func TestBatchNormFit(t *testing.T) {
	set := basSet(t)
	mk := func() *rbm.RBM { return rbm.New(rbm.Binary(9), rbm.DReLU(3), rbm.Seed(5), rbm.WeightScale(0.3)) }
	base := setup{method: PCD{Chains: 10}, opt: RMSprop{}, Options: Options{Batch: set.Len(), Epochs: 30, LR: 2e-3, Seed: 3,
		Regularisers: []Regulariser{L1Squared{Lambda: 0.1}}, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
	for _, rate := range []float64{0, 1} {
		tr := base
		tr.BatchNorm = BatchNorm{Rate: rate}
		m := mk()
		if _, err := tr.fit(context.Background(), m, set); err != nil {
			t.Fatal(err)
		}
		far := 0.0
		for _, v := range dataVariances(m, set.X, nil) {
			far = math.Max(far, math.Abs(v-1))
		}
		if rate > 0 && far > 0.02 || rate == 0 && far < 0.2 {
			t.Errorf("rate %v: largest |v_µ − 1| over the data %v", rate, far)
		}
	}
	tr := base
	tr.BatchNorm = BatchNorm{Rate: 0.3}
	tr.Batch = 5
	full := mk()
	if _, err := tr.fit(context.Background(), full, set); err != nil {
		t.Fatal(err)
	}
	short := tr
	short.Epochs = 12
	short.Checkpoint = filepath.Join(t.TempDir(), "bn.ckpt")
	if _, err := short.fit(context.Background(), mk(), set); err != nil {
		t.Fatal(err)
	}
	resumed := mk()
	if _, err := tr.resume(context.Background(), short.Checkpoint, resumed, set); err != nil {
		t.Fatal(err)
	}
	if !sameParams(paramsOf(resumed), paramsOf(full)) {
		t.Error("BatchNorm: resumed run differs from the uninterrupted one")
	}
}

// TestBatchNormErrors checks the settings BatchNorm refuses.
func TestBatchNormErrors(t *testing.T) {
	set := basSet(t)
	for _, c := range []struct {
		m    *rbm.RBM
		o    Options
		want string
	}{
		{rbm.New(rbm.Binary(9), rbm.DReLU(2)), Options{BatchNorm: BatchNorm{Rate: -0.1}}, "Rate"},
		{rbm.New(rbm.Binary(9), rbm.DReLU(2)), Options{BatchNorm: BatchNorm{Rate: 1.5}}, "Rate"},
		{rbm.New(rbm.Binary(9), rbm.DReLU(2)), Options{BatchNorm: BatchNorm{Rate: math.NaN()}}, "Rate"},
		{rbm.New(rbm.Binary(9), rbm.ReLU(2)), Options{BatchNorm: BatchNorm{Rate: 0.5}}, "dReLU"},
		{rbm.New(rbm.Binary(9), rbm.DReLU(2)), Options{BatchNorm: BatchNorm{Rate: 0.5}, Freeze: []string{"hidden.gamma_minus"}}, "hidden.gamma_minus"},
		{rbm.New(rbm.Binary(9), rbm.DReLU(2)), Options{BatchNorm: BatchNorm{Rate: 0.5}, Freeze: []string{"weights"}}, "weights"},
	} {
		if _, err := Fit(context.Background(), c.m, set, nil, nil, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", c.o.BatchNorm, err, c.want)
		}
	}
}

// TestBatchNormStep checks one whole update (exact likelihood gradient,
// plain SGD) against its definition: the direction is the exact gradient
// (finite differences of the log-likelihood) minus that of Σ_µ v_µ R_µ;
// centring subtracts µ_i (g_θ₊ + g_θ₋)_µ from the weight direction; the
// thresholds follow the step's change of Σ_i w_iµ µ_i; then every unit is
// rescaled by f = v_µ^(rate/2) (weights and thresholds × f, curvatures
// × f²), v_µ taken before the step.
func TestBatchNormStep(t *testing.T) {
	hid := rbm.DReLU(2)
	copy(hid.GammaPlus, []float64{0.7, 2.1})
	copy(hid.GammaMinus, []float64{1.6, 0.5})
	copy(hid.ThetaPlus, []float64{0.3, -0.9})
	copy(hid.ThetaMinus, []float64{-0.4, 1.2})
	m := rbm.New(rbm.Binary(4), hid, rbm.Seed(11), rbm.WeightScale(0.6))
	copy(m.Visible.Params()[0], []float64{0.3, -0.2, 0.1, 0.5})
	states, _ := allStates(m.Visible)
	x := mat.NewDense(5, 4, []float64{1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0})
	set := &data.Set{X: x, Kind: data.KindBinary, Q: 1, Source: "bn"}
	const lr, l1sq, rate = 1e-3, 0.2, 0.5
	nv, nh := 4, 2
	g := fdGradient(m, x, nil, states) // visible θ, γ₊, γ₋, θ₊, θ₋, W
	penalty := func() float64 { return normalisedPenalty(m, x, l1sq) }
	params, _ := modelParams(m)
	for p := 1; p < len(params); p++ {
		for k := range params[p] {
			old := params[p][k]
			params[p][k] = old + 1e-6
			up := penalty()
			params[p][k] = old - 1e-6
			down := penalty()
			params[p][k] = old
			g[p][k] -= (up - down) / 2e-6
		}
	}
	mu := set.Mean()
	for i := 0; i < nv; i++ {
		for u := 0; u < nh; u++ {
			g[5][i*nh+u] -= mu[i] * (g[3][u] + g[4][u])
		}
	}
	want := paramsOf(m)
	for p := range want {
		for k := range want[p] {
			want[p][k] += lr * g[p][k]
		}
	}
	for u := 0; u < nh; u++ {
		shift := 0.0
		for i := 0; i < nv; i++ {
			shift += lr * g[5][i*nh+u] * mu[i]
		}
		want[3][u] -= shift
		want[4][u] -= shift
	}
	for u, v := range dataVariances(m, x, nil) {
		f := math.Pow(v, rate/2)
		want[1][u] *= f * f
		want[2][u] *= f * f
		want[3][u] *= f
		want[4][u] *= f
		for i := 0; i < nv; i++ {
			want[5][i*nh+u] *= f
		}
	}
	tr := setup{method: Exact{}, opt: SGD{}, Options: Options{Batch: 5, Epochs: 1, LR: lr, BatchNorm: BatchNorm{Rate: rate},
		Regularisers: []Regulariser{L1Squared{Lambda: l1sq}}, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
	if _, err := tr.fit(context.Background(), m, set); err != nil {
		t.Fatal(err)
	}
	_, names := modelParams(m)
	for p, got := range paramsOf(m) {
		for k, x := range got {
			if math.Abs(x-want[p][k]) > 1e-9 {
				t.Errorf("%s[%d] = %.12f after the update, want %.12f", names[p], k, x, want[p][k])
			}
		}
	}
}

// normalisedPenalty is Σ_µ v_µ R_µ written out: the λ₁² penalty
// l1sq/(2N)·(Σ_i |w_iµ|)² of each unit times its data variance on x.
func normalisedPenalty(m *rbm.RBM, x *mat.Dense, l1sq float64) float64 {
	nv, nh := m.W.Dims()
	v := dataVariances(m, x, nil)
	r := 0.0
	for u := 0; u < nh; u++ {
		s := 0.0
		for i := 0; i < nv; i++ {
			s += math.Abs(m.W.At(i, u))
		}
		r += v[u] * l1sq / (2 * float64(nv)) * s * s
	}
	return r
}
