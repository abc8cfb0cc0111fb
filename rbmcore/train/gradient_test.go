package train

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// exactLL is the weighted mean log-likelihood of the rows of x computed
// directly: −F(v) averaged with weights, minus log Σ_v exp(−F(v)) over every
// visible configuration (states). It uses only the free energy, not any
// gradient code.
func exactLL(m *rbm.RBM, x *mat.Dense, w []float64, states *mat.Dense) float64 {
	f := m.FreeEnergy(states)
	mx := math.Inf(-1)
	for _, v := range f {
		mx = math.Max(mx, -v)
	}
	z := 0.0
	for _, v := range f {
		z += math.Exp(-v - mx)
	}
	logZ := mx + math.Log(z)
	fd := m.FreeEnergy(x)
	s, tw := 0.0, 0.0
	for i, v := range fd {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		s -= wi * v
		tw += wi
	}
	return s/tw - logZ
}

// fdGradient returns the central finite-difference gradient of exactLL for
// every parameter slice of m (modelParams order).
func fdGradient(m *rbm.RBM, x *mat.Dense, w []float64, states *mat.Dense) [][]float64 {
	params, _ := modelParams(m)
	out := zerosLike(params)
	const h = 1e-5
	for p := range params {
		for k := range params[p] {
			old := params[p][k]
			params[p][k] = old + h
			up := exactLL(m, x, w, states)
			params[p][k] = old - h
			down := exactLL(m, x, w, states)
			params[p][k] = old
			out[p][k] = (up - down) / (2 * h)
		}
	}
	return out
}

func tinyModels() []*rbm.RBM {
	relu := rbm.ReLU(2)
	relu.Gamma[0], relu.Gamma[1], relu.Theta[0], relu.Theta[1] = 1.3, 0.8, -0.2, 0.4
	dr := rbm.DReLU(2)
	dr.GammaPlus[0], dr.GammaMinus[1], dr.ThetaPlus[0], dr.ThetaMinus[1] = 1.5, 0.7, 0.3, -0.6
	gs := rbm.Gaussian(2)
	gs.Gamma[0], gs.Theta[1] = 2, 0.5
	bin := rbm.Binary(4)
	bin.Theta[0], bin.Theta[3] = 0.5, -0.7
	pots := rbm.Potts(3, 3)
	pots.Theta[1], pots.Theta[5] = 0.4, -0.3
	spin := rbm.Spin(4)
	spin.Theta[2] = 0.3
	dw := rbm.DoubleWell(2) // a double and a single well (thresholds −1.2, 0.6), one with a field
	dw.Threshold[0], dw.Threshold[1], dw.Theta[0] = -1.2, 0.6, 0.2
	return []*rbm.RBM{
		rbm.New(bin, relu, rbm.Seed(1), rbm.WeightScale(0.7)),
		rbm.New(rbm.Spin(4), dr, rbm.Seed(2), rbm.WeightScale(0.6)),
		rbm.New(pots, rbm.Binary(3), rbm.Seed(3), rbm.WeightScale(0.8)),
		rbm.New(spin, gs, rbm.Seed(4), rbm.WeightScale(0.3)),
		rbm.New(rbm.Binary(3), rbm.Poisson(2), rbm.Seed(5), rbm.WeightScale(0.3)),
		rbm.New(rbm.Spin(4), dw, rbm.Seed(6), rbm.WeightScale(0.6)),
	}
}

// tinyData returns a few visible rows of m's layer and weights.
func tinyData(t *testing.T, m *rbm.RBM) (*mat.Dense, []float64, *mat.Dense) {
	states, err := allStates(m.Visible)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := states.Dims()
	pick := []int{0, 3 % rows, 5 % rows, rows - 1, rows / 2}
	x := mat.NewDense(len(pick), rbm.Width(m.Visible), nil)
	for k, r := range pick {
		copy(x.RawRowView(k), states.RawRowView(r))
	}
	return x, []float64{1, 0.5, 2, 1, 0.25}, states
}

// TestLogLikelihoodGradientExact compares the gradient with the exact model
// average (every visible state weighted by its probability) against finite
// differences of the exactly enumerated log-likelihood, for every parameter
// of both layers, with weighted data.
func TestLogLikelihoodGradientExact(t *testing.T) {
	for _, m := range tinyModels() {
		x, w, states := tinyData(t, m)
		f := m.FreeEnergy(states)
		pw := make([]float64, len(f))
		for i, v := range f {
			pw[i] = math.Exp(-v)
		}
		g, err := LogLikelihoodGradient(m, x, w, states, pw)
		if err != nil {
			t.Fatal(err)
		}
		want := fdGradient(m, x, w, states)
		_, names := modelParams(m)
		for p, got := range g.slices() {
			for k := range got {
				if d := math.Abs(got[k] - want[p][k]); d > 1e-6*(1+math.Abs(want[p][k])) {
					t.Errorf("%s: %s[%d] = %.8f, finite differences %.8f", m, names[p], k, got[k], want[p][k])
				}
			}
		}
	}
}

// TestFitExactStep checks Fit end to end: one SGD update with
// the chains replaced by exact averages moves every parameter by η times
// the finite-difference gradient of the exact weighted log-likelihood.
func TestFitExactStep(t *testing.T) {
	for _, m := range tinyModels() {
		if m.Visible.States() > 1 {
			continue // the zero-sum gauge fix moves Potts parameters after the step
		}
		x, w, states := tinyData(t, m)
		want := fdGradient(m, x, w, states)
		before, _ := modelParams(m.Clone())
		set := &data.Set{X: x, Kind: data.KindReal, Q: 1, Weights: w, Source: "tiny"}
		const lr = 1e-3
		tr := setup{method: Exact{}, Options: Options{Epochs: 1, Batch: x.RawMatrix().Rows, LR: lr, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
		if _, err := tr.fit(context.Background(), m, set); err != nil {
			t.Fatal(err)
		}
		after, names := modelParams(m)
		for p := range after {
			for k := range after[p] {
				got := (after[p][k] - before[p][k]) / lr
				if d := math.Abs(got - want[p][k]); d > 1e-6*(1+math.Abs(want[p][k])) {
					t.Errorf("%s: step of %s[%d] / η = %.8f, exact gradient %.8f", m, names[p], k, got, want[p][k])
				}
			}
		}
	}
}

// TestFloat32Step checks that single-precision products change one exact
// update by no more than float32 rounding.
func TestFloat32Step(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		m := tinyModels()[0]
		x, w, states := tinyData(t, m)
		want := fdGradient(m, x, w, states)
		before := paramsOf(m)
		set := &data.Set{X: x, Kind: data.KindReal, Q: 1, Weights: w, Source: "tiny"}
		const lr = 1e-3
		tr := setup{method: Exact{}, Options: Options{Float32: f32, Epochs: 1, Batch: 5, LR: lr, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
		if _, err := tr.fit(context.Background(), m, set); err != nil {
			t.Fatal(err)
		}
		after := paramsOf(m)
		worst := 0.0
		for p := range after {
			for k := range after[p] {
				worst = math.Max(worst, math.Abs((after[p][k]-before[p][k])/lr-want[p][k]))
			}
		}
		if tol := map[bool]float64{false: 1e-6, true: 1e-5}[f32]; worst > tol || (f32 && worst < 1e-9) {
			t.Errorf("Float32 %v: worst deviation from the exact gradient %v", f32, worst)
		}
	}
}
