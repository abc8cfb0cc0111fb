package train

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

func basSet(t *testing.T) *data.Set {
	set, err := data.BarsAndStripes(3)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func paramsOf(m *rbm.RBM) [][]float64 {
	p, _ := modelParams(m.Clone())
	return p
}

func sameParams(a, b [][]float64) bool {
	for p := range a {
		for k := range a[p] {
			if a[p][k] != b[p][k] {
				return false
			}
		}
	}
	return true
}

// TestCancelLeavesLastUpdate cancels training from the update callback and
// checks that the model equals that of a run which simply did the same
// number of updates.
func TestCancelLeavesLastUpdate(t *testing.T) {
	set := basSet(t)
	base := setup{method: PCD{}, Options: Options{Batch: 4, Epochs: 5, LR: 0.05, Seed: 7, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
	m1 := rbm.New(rbm.Binary(9), rbm.Binary(5), rbm.Seed(3))
	ctx, cancel := context.WithCancel(context.Background())
	tr := base
	tr.OnUpdate = func(u Update) {
		if u.Update == 6 {
			cancel()
		}
	}
	hist, err := tr.fit(ctx, m1, set)
	if !errors.Is(err, context.Canceled) || hist == nil || len(hist.Records) != 1 {
		t.Fatalf("err %v, history %v: want context.Canceled after one epoch record", err, hist)
	}
	// Reference: 6 updates = epoch 1 (4 updates) + 2 more, stopped by an
	// update callback that cancels before the 7th.
	m2 := rbm.New(rbm.Binary(9), rbm.Binary(5), rbm.Seed(3))
	ctx2, cancel2 := context.WithCancel(context.Background())
	ref := base
	n := 0
	ref.OnUpdate = func(u Update) {
		if n++; n == 6 {
			cancel2()
		}
	}
	ref.fit(ctx2, m2, set)
	if !sameParams(paramsOf(m1), paramsOf(m2)) {
		t.Error("cancelled runs with the same seed differ: the model is not at a completed update")
	}
	// And the cancelled model differs from the initial one (updates happened).
	if sameParams(paramsOf(m1), paramsOf(rbm.New(rbm.Binary(9), rbm.Binary(5), rbm.Seed(3)))) {
		t.Error("the model did not change")
	}
}

// TestDivergenceKeepsLastGood drives a Poisson hidden layer with a huge
// learning rate and checks the reported divergence and the kept state.
func TestDivergenceKeepsLastGood(t *testing.T) {
	set := basSet(t)
	m := rbm.New(rbm.Binary(9), rbm.Gaussian(3), rbm.Seed(2), rbm.WeightScale(0.5))
	var last [][]float64
	tr := setup{method: CD{}, Options: Options{Batch: 16, Epochs: 50, LR: 50, MaxWeight: 20, Seed: 1, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}, OnUpdate: func(Update) { last = paramsOf(m) }}}
	_, err := tr.fit(context.Background(), m, set)
	var de *DivergenceError
	if !errors.As(err, &de) {
		t.Fatalf("error %v, want a DivergenceError", err)
	}
	if de.Epoch < 1 || de.Param == "" || !strings.Contains(err.Error(), "epoch") {
		t.Errorf("divergence report %+v", de)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("the kept model is invalid: %v", err)
	}
	for _, w := range m.W.RawMatrix().Data {
		if math.Abs(w) > 20 {
			t.Fatalf("kept weight %v above MaxWeight", w)
		}
	}
	if last != nil && !sameParams(paramsOf(m), last) {
		t.Error("the model is not the one of the last good update")
	}
}

// TestDivergenceAfterWeightStep: a curvature γ that goes negative in the
// first update (projection disabled) is found after plain SGD's weight
// pass has already swapped the new weights in (weights fine: MaxWeight
// huge); the model must come back to its initial parameters, bit for bit,
// in the weight array it had before Fit.
func TestDivergenceAfterWeightStep(t *testing.T) {
	m := rbm.New(rbm.Binary(9), rbm.Gaussian(3), rbm.Seed(2), rbm.WeightScale(0.5))
	before, array := paramsOf(m), &m.W.RawMatrix().Data[0]
	tr := setup{method: CD{}, Options: Options{Batch: 4, Epochs: 5, LR: 5, MaxWeight: 1e12, MinGamma: -1, Seed: 1, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
	_, err := tr.fit(context.Background(), m, basSet(t))
	var de *DivergenceError
	if !errors.As(err, &de) || !strings.HasPrefix(de.Param, "hidden.gamma") || de.Update != 1 {
		t.Fatalf("error %v, want a DivergenceError on hidden.gamma in the first update", err)
	}
	if !sameParams(paramsOf(m), before) {
		t.Error("the model is not the initial one (the last good state)")
	}
	if &m.W.RawMatrix().Data[0] != array {
		t.Error("the weights are no longer in the model's own array")
	}
}

// TestWeightsStayInTheirArray: plain SGD swaps the arrays of the weights
// and of the direction at every update, but a slice of the weights taken
// before Fit shows the current weights in OnUpdate and OnEpoch and after
// Fit (odd and even numbers of updates).
func TestWeightsStayInTheirArray(t *testing.T) {
	set := basSet(t)
	for _, updates := range []int{3, 4} {
		m := rbm.New(rbm.Binary(9), rbm.Binary(4), rbm.Seed(5))
		w := m.W.RawMatrix().Data
		before := slices.Clone(w)
		check := func(when string) {
			if &m.W.RawMatrix().Data[0] != &w[0] {
				t.Errorf("%d updates, %s: the weights are not in the model's own array", updates, when)
			}
		}
		tr := setup{method: PCD{Chains: 4}, Options: Options{Batch: 16, Epochs: updates, LR: 0.1, Seed: 1, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}, OnUpdate: func(Update) { check("OnUpdate") }, OnEpoch: func(Record) bool { check("OnEpoch"); return true }}}
		if _, err := tr.fit(context.Background(), m, set); err != nil {
			t.Fatal(err)
		}
		check("after Fit")
		if slices.Equal(w, before) {
			t.Errorf("%d updates: the weights did not change", updates)
		}
		tr.OnUpdate, tr.OnEpoch = nil, nil
		m2 := rbm.New(rbm.Binary(9), rbm.Binary(4), rbm.Seed(5))
		w2 := m2.W.RawMatrix().Data
		if _, err := tr.fit(context.Background(), m2, set); err != nil {
			t.Fatal(err)
		}
		if &m2.W.RawMatrix().Data[0] != &w2[0] || !slices.Equal(w2, w) {
			t.Errorf("%d updates without callbacks: the final weights are not in the model's own array", updates)
		}
	}
}

// TestCheckpointResume checks that exact-gradient and PCD runs with Adam,
// and a PCD run with RMSprop, interrupted after 3 epochs and resumed from
// their checkpoints end bit-identical to uninterrupted 6-epoch runs, and that
// a corrupt checkpoint or a different architecture is rejected.
func TestCheckpointResume(t *testing.T) {
	set := basSet(t)
	dir := t.TempDir()
	mk := func() *rbm.RBM { return rbm.New(rbm.Binary(9), rbm.ReLU(4), rbm.Seed(5), rbm.WeightScale(0.2)) }
	for _, c := range []struct {
		method Method
		opt    Optimiser
		file   string
	}{{Exact{}, Adam{}, "exact.ckpt"}, {PCD{Chains: 7}, Adam{}, "pcd.ckpt"}, {PCD{Chains: 7}, RMSprop{}, "pcd-rmsprop.ckpt"}} {
		method := c.method
		tr := setup{method: method, opt: c.opt, Options: Options{Batch: 5, Epochs: 6, LR: 0.02, Seed: 3}}
		full := mk()
		hFull, err := tr.fit(context.Background(), full, set)
		if err != nil {
			t.Fatal(err)
		}
		part := mk()
		short := tr
		short.Epochs = 3
		short.Checkpoint = filepath.Join(dir, c.file)
		if _, err := short.fit(context.Background(), part, set); err != nil {
			t.Fatal(err)
		}
		resumed := mk() // fresh parameters: all of them must come from the file
		hRes, err := tr.resume(context.Background(), short.Checkpoint, resumed, set)
		if err != nil {
			t.Fatal(err)
		}
		if !sameParams(paramsOf(resumed), paramsOf(full)) {
			t.Errorf("%s: resumed run differs from the uninterrupted one", method)
		}
		if len(hRes.Records) != 6 || hRes.Records[5].Updates != hFull.Records[5].Updates ||
			hRes.Records[4].PseudoLikelihood != hFull.Records[4].PseudoLikelihood {
			t.Errorf("%s: resumed history\n%v\nfull\n%v", method, hRes, hFull)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "pcd.ckpt"))
	bad := filepath.Join(dir, "bad.ckpt")
	os.WriteFile(bad, raw[:len(raw)/2], 0o644)
	tr := setup{method: PCD{Chains: 7}, Options: Options{Batch: 5, Epochs: 6}}
	if _, err := tr.resume(context.Background(), bad, mk(), set); err == nil || !strings.Contains(err.Error(), "bad.ckpt") {
		t.Errorf("truncated checkpoint: error %v", err)
	}
	other := rbm.New(rbm.Binary(9), rbm.Binary(4))
	if _, err := tr.resume(context.Background(), filepath.Join(dir, "pcd.ckpt"), other, set); err == nil {
		t.Error("checkpoint accepted for a different architecture")
	}
}

func TestOptimizers(t *testing.T) {
	g1, g2 := []float64{1, -2}, []float64{0.5, 0.5}
	run := func(opt Optimiser) []float64 {
		p := [][]float64{{0, 0}}
		o, err := opt.newState(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range [][]float64{g1, g2} {
			o.begin()
			// in two ranges, as the weight pass does
			o.apply(0, 0, 1, p[0], g, 0.1)
			o.apply(0, 1, 2, p[0], g, 0.1)
		}
		return p[0]
	}
	// SGD: 0.1(g1+g2).
	if p := run(SGD{}); math.Abs(p[0]-0.15) > 1e-15 || math.Abs(p[1]+0.15) > 1e-15 {
		t.Errorf("SGD %v", p)
	}
	// Momentum µ = 0.5: v1 = g1, v2 = 0.5 g1 + g2, θ = 0.1(v1+v2).
	if p := run(Momentum{Mu: 0.5}); math.Abs(p[0]-0.1*(1+1)) > 1e-15 || math.Abs(p[1]-0.1*(-2-0.5)) > 1e-15 {
		t.Errorf("momentum %v", p)
	}
	// Adam, written out: m_t, v_t with bias correction.
	b1, b2, eps := 0.9, 0.999, 1e-8
	want := make([]float64, 2)
	for k := range want {
		m1, v1 := (1-b1)*g1[k], (1-b2)*g1[k]*g1[k]
		want[k] += 0.1 * (m1 / (1 - b1)) / (math.Sqrt(v1/(1-b2)) + eps)
		m2, v2 := b1*m1+(1-b1)*g2[k], b2*v1+(1-b2)*g2[k]*g2[k]
		want[k] += 0.1 * (m2 / (1 - b1*b1)) / (math.Sqrt(v2/(1-b2*b2)) + eps)
	}
	if p := run(Adam{}); math.Abs(p[0]-want[0]) > 1e-12 || math.Abs(p[1]-want[1]) > 1e-12 {
		t.Errorf("Adam %v, want %v", p, want)
	}
	if _, err := (Adam{Eps: -1}).newState(nil); err == nil {
		t.Error("Adam with ε < 0 accepted")
	}
	// RMSprop, written out: the bias-corrected mean square only.
	rho := 0.9
	for k := range want {
		v1 := (1 - rho) * g1[k] * g1[k]
		want[k] = 0.1 * g1[k] / (math.Sqrt(v1/(1-rho)) + eps)
		v2 := rho*v1 + (1-rho)*g2[k]*g2[k]
		want[k] += 0.1 * g2[k] / (math.Sqrt(v2/(1-rho*rho)) + eps)
	}
	if p := run(RMSprop{Rho: rho}); math.Abs(p[0]-want[0]) > 1e-12 || math.Abs(p[1]-want[1]) > 1e-12 {
		t.Errorf("RMSprop %v, want %v", p, want)
	}
	if _, err := (RMSprop{Rho: 1}).newState(nil); err == nil {
		t.Error("RMSprop with ρ = 1 accepted")
	}
}

func TestSchedules(t *testing.T) {
	for _, c := range []struct {
		epoch, k int
		lr       float64
	}{{1, 1, 0.5}, {10, 1, 0.5}, {11, 2, 0.25}, {491, 50, 0.01}, {500, 50, 0.01}} {
		k, lr := GrowingK(c.epoch, 7, 0.5)
		if k != c.k || math.Abs(lr-c.lr) > 1e-15 {
			t.Errorf("GrowingK(%d) = %d, %v; want %d, %v", c.epoch, k, lr, c.k, c.lr)
		}
	}
	g := GeometricDecay(100, 0.5, 0.01)
	if _, lr := g(50, 1, 1); lr != 1 {
		t.Errorf("decay before start: %v", lr)
	}
	if _, lr := g(100, 1, 1); math.Abs(lr-0.01) > 1e-12 {
		t.Errorf("decay at the end: %v", lr)
	}
	if _, lr := g(75, 1, 1); math.Abs(lr-0.1) > 1e-12 {
		t.Errorf("decay halfway: %v, want 0.1", lr)
	}
}

// TestPenaltiesFiniteDifferences checks the ascent direction with no data
// signal against finite differences of the penalties.
func TestPenaltiesFiniteDifferences(t *testing.T) {
	m := rbm.New(rbm.Binary(4), rbm.Binary(3), rbm.Seed(9), rbm.WeightScale(0.5))
	m.Visible.Params()[0][1] = 0.7
	pen := penalties{l2: 0.3, l1: 0.05, l1sq: 0.2, fields: 0.4}
	penalty := func() float64 {
		w := m.W.RawMatrix().Data
		nv, nh := m.W.Dims()
		r := 0.0
		for _, x := range w {
			r += pen.l2/2*x*x + pen.l1*math.Abs(x)
		}
		for j := 0; j < nh; j++ {
			s := 0.0
			for i := 0; i < nv; i++ {
				s += math.Abs(w[i*nh+j])
			}
			r += pen.l1sq / (2 * float64(nv)) * s * s
		}
		for _, th := range m.Visible.Params()[0] {
			r += pen.fields / 2 * th * th
		}
		return r
	}
	cfg, _ := Options{}.withDefaults()
	// The elementwise penalties are applied by the weight pass: the generic
	// loops (step without the scan), with a zero step (lr 0) leaving W as
	// it is, and plain SGD's fused loop (step with the scan), which leaves W
	// as it is and writes W + lr·direction over the direction.
	for _, fused := range []bool{false, true} {
		r := &run{o: cfg, pen: pen, m: m, lg: newLayerGrads(m), dir: newGradient(m), prod: newProducts(m, false, false)}
		r.params, r.names = modelParams(m)
		r.frozen, r.backup = make([]bool, len(r.params)), zerosLike(r.params)
		r.opt, _ = SGD{}.newState(r.params)
		r.wpass.init(r)
		r.direction()
		r.opt.begin()
		if fused {
			r.wpass.lr = 1e-3
		}
		if err := r.wpass.run(false, true, fused); err != nil {
			t.Fatal(err)
		}
		params, names := modelParams(m)
		dirs := r.dir.slices()
		if last := len(dirs) - 1; fused {
			if !r.wpass.inDir {
				t.Fatal("plain SGD with the scan did not take the one-pass step")
			}
			for k, x := range dirs[last] {
				dirs[last][k] = (x - params[last][k]) / r.wpass.lr
			}
		}
		for p := range params {
			for k := range params[p] {
				old := params[p][k]
				params[p][k] = old + 1e-6
				up := penalty()
				params[p][k] = old - 1e-6
				down := penalty()
				params[p][k] = old
				if fd := -(up - down) / 2e-6; math.Abs(fd-dirs[p][k]) > 1e-6 {
					t.Errorf("fused %v: %s[%d]: direction %v, −∂R %v", fused, names[p], k, dirs[p][k], fd)
				}
			}
		}
	}
}

// TestCentredStep checks one centred update against the gradient of the
// exact likelihood in the centred parametrisation (Melchior et al. 2016):
// ΔW/η = ∇W − µ∇cᵀ − ∇b λᵀ, Δb/η = ∇b − ΔW λ/η, Δc/η = ∇c − ΔWᵀµ/η.
func TestCentredStep(t *testing.T) {
	m := rbm.New(rbm.Binary(4), rbm.Binary(3), rbm.Seed(11), rbm.WeightScale(0.6))
	states, _ := allStates(m.Visible)
	x := mat.NewDense(5, 4, []float64{1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0})
	set := &data.Set{X: x, Kind: data.KindBinary, Q: 1, Source: "c"}
	g := fdGradient(m, x, nil, states) // visible θ, hidden θ, W
	mu := set.Mean()
	lam := make([]float64, 3)
	h := m.MeanHidden(x)
	for r := 0; r < 5; r++ {
		for j := 0; j < 3; j++ {
			lam[j] += h.At(r, j) / 5
		}
	}
	before := paramsOf(m)
	const lr = 1e-3
	tr := setup{method: Exact{}, Options: Options{Batch: 5, Epochs: 1, LR: lr, Centred: true, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
	if _, err := tr.fit(context.Background(), m, set); err != nil {
		t.Fatal(err)
	}
	after := paramsOf(m)
	gb, gc, gw := g[0], g[1], g[2]
	wc := make([]float64, 12)
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			wc[i*3+j] = gw[i*3+j] - mu[i]*gc[j] - gb[i]*lam[j]
		}
	}
	check := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: step/η = %.8f, want %.8f", name, got, want)
		}
	}
	for k := range wc {
		check("W", (after[2][k]-before[2][k])/lr, wc[k])
	}
	for i := 0; i < 4; i++ {
		want := gb[i]
		for j := 0; j < 3; j++ {
			want -= wc[i*3+j] * lam[j]
		}
		check("visible θ", (after[0][i]-before[0][i])/lr, want)
	}
	for j := 0; j < 3; j++ {
		want := gc[j]
		for i := 0; i < 4; i++ {
			want -= wc[i*3+j] * mu[i]
		}
		check("hidden θ", (after[1][j]-before[1][j])/lr, want)
	}
}

// TestMonitorLikelihood checks the recorded pseudo-likelihood and
// log-likelihood against rbm's functions on the final model, and the AIS
// path against the exact value on a model too large to enumerate cheaply
// in the trainer's exact branch.
func TestMonitorLikelihood(t *testing.T) {
	set := basSet(t)
	m := rbm.New(rbm.Binary(9), rbm.Binary(6), rbm.Seed(4))
	tr := setup{method: PCD{}, Options: Options{Batch: 8, Epochs: 3, LR: 0.05, Monitor: Monitor{LogLikEvery: 3, UpdatePL: 5}}}
	hist, err := tr.fit(context.Background(), m, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.UpdatePL) != 6 {
		t.Errorf("%d per-update pseudo-likelihoods for 6 updates", len(hist.UpdatePL))
	}
	for _, v := range hist.UpdatePL {
		if !(v < 0 && v > -9*math.Log(2)*3) {
			t.Errorf("per-update pseudo-likelihood %v out of range", v)
		}
	}
	last := hist.Last()
	pl, _ := m.PseudoLikelihood(context.Background(), set.X)
	want := 0.0
	for _, x := range pl {
		want += x / float64(len(pl))
	}
	logZ, _ := m.ExactLogZ(context.Background())
	ll, _ := m.LogLikelihood(set.X, logZ)
	if math.Abs(last.PseudoLikelihood-want) > 1e-12 || math.Abs(last.LogLik-ll) > 1e-12 || math.IsNaN(last.ReconError) {
		t.Errorf("record %+v; want PL %v, LL %v", last, want, ll)
	}
	if !math.IsNaN(hist.Records[0].LogLik) {
		t.Error("log-likelihood measured at epoch 1 with LogLikEvery 3")
	}
	// AIS branch: Gaussian visible × ReLU hidden has no discrete layer.
	g := rbm.New(rbm.Gaussian(3), rbm.ReLU(2), rbm.Seed(1), rbm.WeightScale(0.3))
	x := mat.NewDense(4, 3, []float64{0.1, -0.5, 1, 0.3, 0.2, 0, -1, 0.4, 0.2, 0.5, 0.5, -0.3})
	gs := &data.Set{X: x, Kind: data.KindReal, Q: 1, Source: "g"}
	aisLL, lo, hi, err := logLikelihood(context.Background(), g, x, gs, Monitor{AISRuns: 50, AISBetas: 2000}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !(lo <= aisLL && aisLL <= hi) || hi-lo > 1 || math.IsNaN(aisLL) {
		t.Errorf("AIS LL %v not inside its bounds [%v, %v]", aisLL, lo, hi)
	}
}

func TestEarlyStoppingAndHistory(t *testing.T) {
	set := basSet(t)
	m := rbm.New(rbm.Binary(9), rbm.Binary(8), rbm.Seed(1))
	// A schedule that makes training useless after epoch 3 (η tiny but
	// the chains keep the PL flat): the recon metric stops improving.
	sched := func(epoch, k int, lr float64) (int, float64) {
		if epoch > 3 {
			return k, 1e-12
		}
		return k, lr
	}
	epochs := 0
	tr := setup{method: Exact{}, Options: Options{Batch: 16, Epochs: 30, LR: 0.5, Schedule: sched, OnEpoch: func(Record) bool { epochs++; return true }, EarlyStop: EarlyStop{Patience: 2, Metric: MetricRecon, RestoreBest: true}}}
	hist, err := tr.fit(context.Background(), m, set)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(hist.Records); n >= 30 || n < 4 || epochs != n {
		t.Errorf("%d epochs recorded (%d callbacks): early stopping did not act", n, epochs)
	}
	x, y, err := hist.Column("pl")
	if err != nil || len(x) != len(hist.Records) || len(y) != len(x) || x[0] != 1 {
		t.Errorf("pl column %v %v %v", x, y, err)
	}
	if _, _, err := hist.Column("nope"); err == nil {
		t.Error("unknown column accepted")
	}
	if !strings.Contains(hist.String(), "epoch") {
		t.Error("history table has no header")
	}
	// OnEpoch returning false stops after that epoch.
	m2 := rbm.New(rbm.Binary(9), rbm.Binary(8), rbm.Seed(1))
	tr2 := setup{method: CD{}, Options: Options{Batch: 16, Epochs: 30, OnEpoch: func(r Record) bool { return r.Epoch < 2 }}}
	h2, _ := tr2.fit(context.Background(), m2, set)
	if len(h2.Records) != 2 {
		t.Errorf("OnEpoch stop: %d records, want 2", len(h2.Records))
	}
}

func TestConfigErrors(t *testing.T) {
	set := basSet(t)
	m := rbm.New(rbm.Binary(9), rbm.Binary(3))
	for _, tr := range []setup{
		{method: CD{K: -1}},
		{Options: Options{LR: -1}},
		{method: PCD{K: -2}},
		{opt: Momentum{Mu: -0.5}},
		{Options: Options{Init: InitCentred{Pseudocount: -1}}},
		{method: PT{Betas: []float64{0.5, 0.9}}},
		{Options: Options{EarlyStop: EarlyStop{Metric: -1}}},
		{Options: Options{Regularisers: []Regulariser{nil}}},
	} {
		if _, err := tr.fit(context.Background(), m, set); err == nil {
			t.Errorf("%+v accepted", tr)
		}
	}
	wrong := rbm.New(rbm.Binary(8), rbm.Binary(3))
	if _, err := Fit(context.Background(), wrong, set, nil, nil, Options{}); err == nil || !strings.Contains(err.Error(), "columns") {
		t.Errorf("width mismatch: %v", err)
	}
}

// TestInitCentred checks the formulas of InitCentred.
func TestInitCentred(t *testing.T) {
	set := basSet(t)
	m := rbm.New(rbm.Binary(9), rbm.ReLU(4))
	if err := (InitCentred{Pseudocount: 1e-3}).initialise(m, set, 0, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	mean := set.Mean()
	amp := math.Sqrt(0.1 / 9)
	for k, w := range m.W.RawMatrix().Data {
		if math.Abs(math.Abs(w)-amp) > 1e-15 {
			t.Fatalf("w[%d] = %v, want ±%v", k, w, amp)
		}
	}
	th := m.Visible.Params()[0]
	for i, x := range mean {
		p := (x + 1e-3) / (1 + 2e-3)
		if math.Abs(th[i]-math.Log(p/(1-p))) > 1e-12 {
			t.Errorf("visible θ_%d = %v, want logit %v", i, th[i], math.Log(p/(1-p)))
		}
	}
	// Hidden inputs centred: θ_µ + Σ_i w_iµ ⟨v_i⟩ = 0.
	relu := m.Hidden.(*rbm.ReLULayer)
	for j := 0; j < 4; j++ {
		s := relu.Theta[j]
		for i := 0; i < 9; i++ {
			s += m.W.At(i, j) * mean[i]
		}
		if math.Abs(s) > 1e-12 || relu.Gamma[j] != 1 {
			t.Errorf("unit %d: centred input %v, γ %v", j, s, relu.Gamma[j])
		}
	}
}

func TestHistoryPlot(t *testing.T) {
	h := &History{Records: []Record{
		{Epoch: 1, PseudoLikelihood: -5, ReconError: 0.2},
		{Epoch: 2, PseudoLikelihood: math.NaN(), ReconError: 0.1},
		{Epoch: 3, PseudoLikelihood: -4, ReconError: 0.05},
	}, UpdatePL: []float64{-6, -5.5}}
	p, err := h.Plot("pl", "recon")
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Label.Text != "epoch" || !strings.Contains(p.Y.Label.Text, "recon") || p.X.Min != 1 || p.X.Max != 3 {
		t.Errorf("plot axes: x %q [%v, %v], y %q", p.X.Label.Text, p.X.Min, p.X.Max, p.Y.Label.Text)
	}
	if p, err := h.Plot("update_pl"); err != nil || p.X.Label.Text != "update" {
		t.Errorf("update_pl plot: %v", err)
	}
	if _, err := h.Plot("accuracy"); err == nil {
		t.Error("unknown column accepted")
	}
	x, y, _ := h.Column("pl")
	if len(x) != 2 || x[1] != 3 || y[1] != -4 {
		t.Errorf("pl column skips NaN: %v %v", x, y)
	}
}

// TestPottsGaugeInitGaussian trains a Potts × dReLU RBM initialised as in
// [TCM19] with the λ₁² penalty and checks that the zero-sum gauge holds
// after training and that the likelihood improved on the initialisation.
func TestPottsGaugeInitGaussian(t *testing.T) {
	const n, q = 5, 3
	set, err := data.ClockRing{N: n, P: q, Beta: 1.2}.Sample(context.Background(), 400, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := rbm.New(rbm.Potts(n, q), rbm.DReLU(3), rbm.Seed(2))
	tr := setup{method: PT{Chains: 100}, opt: Adam{}, Options: Options{Batch: 40, Epochs: 30, LR: 0.005, Seed: 4, Monitor: Monitor{LogLikEvery: 1, PLEvery: -1}, Regularisers: []Regulariser{L1Squared{Lambda: 0.025}, FieldsL2{Lambda: 0.01}}, Init: InitGaussian{}}}
	hist, err := tr.fit(context.Background(), m, set)
	if err != nil {
		t.Fatal(err)
	}
	first, last := hist.Records[0].LogLik, hist.Last().LogLik
	if !(last > first) {
		t.Errorf("exact log-likelihood went from %v to %v", first, last)
	}
	nh := 3
	for i := 0; i < n; i++ {
		s := 0.0
		for a := 0; a < q; a++ {
			s += m.Visible.Params()[0][i*q+a]
		}
		if math.Abs(s) > 1e-12 {
			t.Errorf("Σ_a θ_%d(a) = %v, want 0", i, s)
		}
		for mu := 0; mu < nh; mu++ {
			s := 0.0
			for a := 0; a < q; a++ {
				s += m.W.At(i*q+a, mu)
			}
			if math.Abs(s) > 1e-12 {
				t.Errorf("Σ_a w_%d%d(a) = %v, want 0", i, mu, s)
			}
		}
	}
	dr := m.Hidden.(*rbm.DReLULayer)
	if dr.GammaPlus[0] == 1 && dr.GammaMinus[0] == 1 {
		t.Error("dReLU γ± were not trained")
	}
}

// TestCDAndMomentum checks that CD-1 with momentum improves the exact
// likelihood of bars-and-stripes by more than a nat, on average over 8
// seeds (single runs spread by about ±0.4 nats).
func TestCDAndMomentum(t *testing.T) {
	set := basSet(t)
	newModel := func() *rbm.RBM { return rbm.New(rbm.Binary(9), rbm.Binary(8), rbm.Seed(3), rbm.WeightScale(0.1)) }
	m := newModel()
	logZ0, _ := m.ExactLogZ(context.Background())
	ll0, _ := m.LogLikelihood(set.X, logZ0)
	mean := 0.0
	for seed := uint64(1); seed <= 8; seed++ {
		tr := setup{method: CD{}, opt: Momentum{}, Options: Options{Batch: 4, Epochs: 100, LR: 0.05, Seed: seed, Monitor: Monitor{LogLikEvery: 100, PLEvery: -1}, Init: InitCentred{Pseudocount: 0.01}}}
		hist, err := tr.fit(context.Background(), newModel(), set)
		if err != nil {
			t.Fatal(err)
		}
		mean += hist.Last().LogLik / 8
	}
	t.Logf("CD-1: exact LL %.3f → %.3f (mean of 8 seeds)", ll0, mean)
	if !(mean > ll0+1) {
		t.Errorf("CD-1 log-likelihood %v (mean of 8 seeds), initial %v: no progress", mean, ll0)
	}
}

// setup holds the arguments of Fit and Resume in one value, so that a
// test can vary one setting of a base run.
type setup struct {
	method Method
	opt    Optimiser
	Options
}

func (s setup) fit(ctx context.Context, m *rbm.RBM, set *data.Set) (*History, error) {
	return Fit(ctx, m, set, s.method, s.opt, s.Options)
}

// resume continues from the checkpoint path.
func (s setup) resume(ctx context.Context, path string, m *rbm.RBM, set *data.Set) (*History, error) {
	s.Checkpoint = path
	return Resume(ctx, m, set, s.method, s.opt, s.Options)
}
