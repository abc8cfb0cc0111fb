package rbm

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteContinuousPL returns Σ_i log P(v_i | v_−i) for row v by the
// trapezoid rule on a fine grid over [lo, hi], with the conditional taken
// from the free energy of the whole row (an independent route: no CGF of
// the site, only FreeEnergy of modified rows).
func bruteContinuousPL(m *RBM, v []float64, lo, hi float64) float64 {
	const n = 40001
	n0 := len(v)
	total := 0.0
	for i := 0; i < n0; i++ {
		rows := mat.NewDense(n+1, n0, nil)
		for k := 0; k <= n; k++ {
			copy(rows.RawRowView(k), v)
			if k < n {
				rows.Set(k, i, lo+(hi-lo)*float64(k)/float64(n-1))
			}
		}
		f := m.FreeEnergy(rows)
		mx := math.Inf(-1)
		for _, x := range f[:n] {
			mx = math.Max(mx, -x)
		}
		s := 0.0
		for k, x := range f[:n] {
			w := 1.0
			if k == 0 || k == n-1 {
				w = 0.5
			}
			s += w * math.Exp(-x-mx)
		}
		total += -f[n] - (mx + math.Log(s*(hi-lo)/float64(n-1)))
	}
	return total
}

// TestContinuousPseudoLikelihood checks the pseudo-likelihood of Gaussian
// and ReLU visible layers against the trapezoid integral of the exact
// conditionals, and for Gaussian × Gaussian against the closed-form
// Gaussian conditional.
func TestContinuousPseudoLikelihood(t *testing.T) {
	rows := mat.NewDense(2, 3, []float64{0.3, 1.2, 0, 2.5, 0.1, 0.7})
	for _, c := range []struct {
		vis, hid Layer
		lo       float64
	}{
		{Gaussian(3), Binary(2), -30},
		{Gaussian(3), ReLU(2), -30},
		{ReLU(3), Binary(2), 0},
		{ReLU(3), ReLU(2), 0},
		{ReLU(3), DReLU(2), 0},
	} {
		m := New(c.vis, c.hid, Seed(3), WeightScale(0.5))
		randomiseFields(m, 7)
		pl, err := m.PseudoLikelihood(context.Background(), rows)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		for r := 0; r < 2; r++ {
			want := bruteContinuousPL(m, rows.RawRowView(r), c.lo, 30)
			if math.Abs(pl[r]-want) > 1e-6 {
				t.Errorf("%v row %d: PL %.9f, trapezoid %.9f", m, r, pl[r], want)
			}
		}
	}
	// Gaussian × Gaussian: the conditional of v_i is Gaussian with
	// precision a = γ_i − Σ_µ w²/γ_µ and mean b/a,
	// b = θ_i + Σ_µ w (J_µ + θ_µ)/γ_µ, J the input without site i.
	m := New(Gaussian(3), Gaussian(2), Seed(5), WeightScale(0.4))
	randomiseFields(m, 8)
	vis, hid := m.Visible.(*GaussianLayer), m.Hidden.(*GaussianLayer)
	pl, err := m.PseudoLikelihood(context.Background(), rows)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 2; r++ {
		v := rows.RawRowView(r)
		want := 0.0
		for i := range v {
			a, b := vis.Gamma[i], vis.Theta[i]
			for mu := 0; mu < 2; mu++ {
				w := m.W.At(i, mu)
				j := 0.0
				for k := range v {
					if k != i {
						j += v[k] * m.W.At(k, mu)
					}
				}
				a -= w * w / hid.Gamma[mu]
				b += w * (j + hid.Theta[mu]) / hid.Gamma[mu]
			}
			want += -0.5*a*(v[i]-b/a)*(v[i]-b/a) + 0.5*math.Log(a/(2*math.Pi))
		}
		if math.Abs(pl[r]-want) > 1e-9 {
			t.Errorf("Gaussian × Gaussian row %d: PL %.12f, closed form %.12f", r, pl[r], want)
		}
	}
	// The stochastic estimate is N times one site's value.
	one, err := m.StochasticPseudoLikelihood(context.Background(), NewRNG(1, 1), rows)
	if err != nil || math.IsNaN(one[0]) {
		t.Errorf("stochastic PL: %v %v", one, err)
	}
	if _, err := m.PseudoLikelihood(context.Background(), mat.NewDense(1, 3, []float64{0, 0, math.Inf(1)})); err == nil {
		t.Error("an infinite visible value gave no error")
	}
	relu := New(ReLU(3), Binary(2))
	if _, err := relu.PseudoLikelihood(context.Background(), mat.NewDense(1, 3, []float64{-1, 0, 0})); err == nil {
		t.Error("a negative ReLU value gave no error")
	}
}
