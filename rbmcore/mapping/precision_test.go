package mapping

import (
	"math"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Möbius sums Σ_{T⊆S} (−1)^{|S|−|T|} Γ(θ + Σ_{k∈T} w_k) of a single unit
// (binary: Γ = softplus; relu with γ = 1: Γ = log(Φ/φ)), computed with mpmath
// at 80 digits: weights up to |w| = 5 and fields up to ±10, where the naive
// double-precision sum loses up to all its digits, and tiny weights at high
// order.
var highPrecisionRef = []struct {
	kind  string
	theta float64
	w     []float64
	want  float64
}{
	{"binary", -10.0, []float64{5.0, 5.0, 5.0}, 2.9473744533774194816},
	{"binary", 10.0, []float64{5.0, 5.0, 5.0}, -0.000044487361968640563586},
	{"binary", 10.0, []float64{-5.0, 4.5, -3.0}, -0.11792875956292622555},
	{"binary", -10.0, []float64{2.0, 2.0, 2.0, 2.0}, 0.067886183605750021529},
	{"binary", 10.0, []float64{2.0, 2.0, 2.0, 2.0}, 0.000025376384852315979385},
	{"binary", 0.0, []float64{5.0, -5.0, 5.0, -5.0}, -5.8947489067548389631},
	{"binary", 10.0, []float64{1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, 2.8959435505463503167e-6},
	{"binary", -10.0, []float64{1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, 0.0010998663278870220076},
	{"binary", 3.0, []float64{0.01, 0.02, -0.015, 0.01, 0.02}, 1.1294245551541048174e-11},
	{"binary", -3.0, []float64{0.03, 0.02, -0.015, 0.01, 0.02, 0.01, -0.02}, -1.5152354619975547418e-14},
	{"binary", 0.0, []float64{0.001, 0.002, 0.003}, -2.2499906250322469563e-12},
	{"binary", 10.0, []float64{0.2, -0.3, 0.1, 0.4}, -9.0301886809749156771e-8},
	{"binary", -10.0, []float64{4.0, 3.0, -2.0, 5.0, 1.0}, 0.20798360026649421322},
	{"binary", 0.0, []float64{3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0}, 0.36727041262920487056},
	{"relu", -10.0, []float64{5.0, 5.0, 5.0}, 10.115731223574516335},
	{"relu", 10.0, []float64{5.0, 5.0, 5.0}, 7.619853024160526066e-24},
	{"relu", 10.0, []float64{-5.0, 4.5, -3.0}, 0.02301262263591070632},
	{"relu", -10.0, []float64{2.0, 2.0, 2.0, 2.0}, 0.059071401724626436464},
	{"relu", 10.0, []float64{2.0, 2.0, 2.0, 2.0}, -7.6198530170545976177e-24},
	{"relu", 0.0, []float64{5.0, -5.0, 5.0, -5.0}, 2.8698264886892123645},
	{"relu", 10.0, []float64{1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, -7.6187066550629361985e-24},
	{"relu", -10.0, []float64{1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, 0.00055673476795758653654},
	{"relu", 3.0, []float64{0.01, 0.02, -0.015, 0.01, 0.02}, -8.2236842137245846303e-11},
	{"relu", -3.0, []float64{0.03, 0.02, -0.015, 0.01, 0.02, 0.01, -0.02}, 3.0565491668804112229e-15},
	{"relu", 0.0, []float64{0.001, 0.002, 0.003}, 1.3101474160630432992e-9},
	{"relu", 10.0, []float64{0.2, -0.3, 0.1, 0.4}, 7.5572466433237545669e-23},
	{"relu", -10.0, []float64{4.0, 3.0, -2.0, 5.0, 1.0}, -0.98393243607510935642},
	{"relu", 0.0, []float64{3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0}, -0.68234072846641382739},
}

func TestHighPrecision(t *testing.T) {
	for _, c := range highPrecisionRef {
		n := len(c.w)
		var hid rbm.Layer
		switch c.kind {
		case "binary":
			l := rbm.Binary(1)
			l.Theta[0] = c.theta
			hid = l
		case "relu":
			l := rbm.ReLU(1)
			l.Theta[0] = c.theta
			hid = l
		}
		mp := mustMapper(t, testModel{vis: rbm.Binary(n), hid: hid, w: c.w, n: n, m: 1})
		sites := make([]int, n)
		for k := range sites {
			sites[k] = k
		}
		got, err := mp.Term(sites...)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(got - c.want); !(d <= 1e-12*math.Abs(c.want)) {
			t.Errorf("%s θ=%v w=%v: I = %.17g, mpmath %.17g (relative error %.2g)", c.kind, c.theta, c.w, got, c.want, d/math.Abs(c.want))
		}
	}
}
