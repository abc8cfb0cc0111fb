package train

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestExactHiddenMatchesExact trains the same models with the model
// average from enumerating the hidden layer (ExactHidden) and from
// enumerating the visible layer (Exact): the two are independent
// computations of the same gradient, so every parameter must agree after
// several minibatch updates, with trained fields and with frozen ones.
func TestExactHiddenMatchesExact(t *testing.T) {
	pots := rbm.Potts(3, 3)
	pots.Theta[1], pots.Theta[5] = 0.4, -0.3
	bin := rbm.Binary(3)
	bin.Theta[0] = -0.4
	spin := rbm.Spin(2)
	spin.Theta[1] = 0.25
	models := []*rbm.RBM{
		rbm.New(rbm.Spin(6), spin, rbm.Seed(7), rbm.WeightScale(0.7)),
		rbm.New(rbm.Binary(5), bin, rbm.Seed(8), rbm.WeightScale(0.9)),
		rbm.New(pots, rbm.Spin(2), rbm.Seed(9), rbm.WeightScale(0.8)),
		rbm.New(rbm.Spin(5), rbm.Potts(1, 3), rbm.Seed(10), rbm.WeightScale(0.8)),
	}
	for _, freeze := range [][]string{nil, {"visible.theta", "hidden.theta"}} {
		for _, m0 := range models {
			x, _, _ := tinyData(t, m0)
			set := &data.Set{X: x, Kind: data.KindReal, Q: 1, Source: "tiny"}
			o := Options{Epochs: 4, Batch: 2, LR: 0.3, Seed: 3, Freeze: freeze, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}
			a, b := m0.Clone(), m0.Clone()
			if _, err := Fit(context.Background(), a, set, Exact{}, SGD{}, o); err != nil {
				t.Fatal(err)
			}
			if _, err := Fit(context.Background(), b, set, ExactHidden{}, SGD{}, o); err != nil {
				t.Fatal(err)
			}
			pa, names := modelParams(a)
			pb, _ := modelParams(b)
			p0, _ := modelParams(m0)
			moved := 0.0
			for p := range pa {
				for k := range pa[p] {
					moved = math.Max(moved, math.Abs(pa[p][k]-p0[p][k]))
					if d := math.Abs(pa[p][k] - pb[p][k]); d > 1e-10 {
						t.Errorf("%s (frozen %v): %s[%d]: Exact %.12f, ExactHidden %.12f", m0, freeze, names[p], k, pa[p][k], pb[p][k])
					}
				}
			}
			if moved < 1e-3 {
				t.Errorf("%s: training moved no parameter by more than %g: the comparison proves nothing", m0, moved)
			}
		}
	}
}

// TestExactHiddenOneUnit checks one full-batch step of a ±1 hidden unit
// without fields against the closed form of the gradient (Harsh, Tubiana,
// Cocco & Monasson 2020, Eq. 32): Δw_i/η = ⟨v_i tanh(w·v)⟩_data − tanh(w_i).
func TestExactHiddenOneUnit(t *testing.T) {
	const n = 30 // far beyond visible enumeration
	m := rbm.New(rbm.Spin(n), rbm.Spin(1), rbm.Seed(11), rbm.WeightScale(0.5))
	set, err := data.IsingRing{N: n, Beta: 0.7}.Sample(context.Background(), 64, 5)
	if err != nil {
		t.Fatal(err)
	}
	w0 := mat.Col(nil, 0, m.W)
	want := make([]float64, n)
	for s := 0; s < set.Len(); s++ {
		v := set.X.RawRowView(s)
		in := 0.0
		for i := range v {
			in += v[i] * w0[i]
		}
		for i := range v {
			want[i] += v[i] * math.Tanh(in) / float64(set.Len())
		}
	}
	for i := range want {
		want[i] -= math.Tanh(w0[i])
	}
	const lr = 1e-2
	o := Options{Epochs: 1, Batch: set.Len(), LR: lr, Freeze: []string{"visible.theta", "hidden.theta"},
		Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}
	if _, err := Fit(context.Background(), m, set, ExactHidden{}, SGD{}, o); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got := (m.W.At(i, 0) - w0[i]) / lr; math.Abs(got-want[i]) > 1e-9 {
			t.Errorf("w_%d: step/η = %.10f, Eq. 32 gives %.10f", i, got, want[i])
		}
	}
}

// TestExactHiddenRejects checks the layers ExactHidden cannot average.
func TestExactHiddenRejects(t *testing.T) {
	set := &data.Set{X: mat.NewDense(2, 4, []float64{1, -1, 1, 1, -1, -1, 1, -1}), Kind: data.KindReal, Q: 1, Source: "tiny"}
	for _, c := range []struct {
		m    *rbm.RBM
		want string
	}{
		{rbm.New(rbm.Spin(4), rbm.Gaussian(2), rbm.Seed(1)), "the hidden layer is gaussian"},
		{rbm.New(rbm.Spin(4), rbm.Spin(21), rbm.Seed(1)), "more than"},
	} {
		_, err := Fit(context.Background(), c.m, set, ExactHidden{}, SGD{}, Options{Epochs: 1, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.m, err, c.want)
		}
	}
}
