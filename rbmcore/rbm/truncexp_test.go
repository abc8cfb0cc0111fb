package rbm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigTruncExp computes Γ, Γ' and Γ″ of the truncated exponential at x in
// 300-bit arithmetic from e^x (its power series), so that the closed forms'
// cancellations do not matter: Γ = log((e^x − 1)/x) through the series of
// log(1+y) (|y| < 0.7 for |x| ≤ 0.9), Γ' = e^x/(e^x − 1) − 1/x,
// Γ″ = 1/x² − e^x/(e^x − 1)².
func bigTruncExp(x float64) (g, m, v float64) {
	const prec = 300
	nf := func(f float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(f) }
	bx := nf(x)
	ex, term := nf(1), nf(1)
	for k := 1; k < 80; k++ {
		term.Mul(term, bx)
		term.Quo(term, nf(float64(k)))
		ex.Add(ex, term)
	}
	em1 := new(big.Float).SetPrec(prec).Sub(ex, nf(1))
	y := new(big.Float).SetPrec(prec).Quo(em1, bx)
	y.Sub(y, nf(1))
	lg, pow := nf(0), nf(1)
	for k := 1; k < 120; k++ {
		pow.Mul(pow, y)
		t := new(big.Float).SetPrec(prec).Quo(pow, nf(float64(k)))
		if k%2 == 0 {
			t.Neg(t)
		}
		lg.Add(lg, t)
	}
	inv := new(big.Float).SetPrec(prec).Quo(nf(1), bx)
	r := new(big.Float).SetPrec(prec).Quo(ex, em1) // e^x/(e^x − 1)
	mean := new(big.Float).SetPrec(prec).Sub(r, inv)
	r2 := new(big.Float).SetPrec(prec).Quo(r, em1) // e^x/(e^x − 1)²
	variance := new(big.Float).SetPrec(prec).Mul(inv, inv)
	variance.Sub(variance, r2)
	g, _ = lg.Float64()
	m, _ = mean.Float64()
	v, _ = variance.Float64()
	return
}

// TestTruncExpCloseToZero checks Γ, Γ', Γ″ near x = 0, where the closed
// forms cancel and the series take over, against 300-bit arithmetic, on
// both sides of the switch at |x| = 0.1.
func TestTruncExpCloseToZero(t *testing.T) {
	for _, x := range []float64{-0.7, -0.1000001, -0.0999999, -0.05, -1e-3, -1e-9, 1e-12, 1e-6, 0.03, 0.0999999, 0.1, 0.1000001, 0.4, 0.9} {
		g, m, v := bigTruncExp(x)
		if got := truncExpCGF(x); !closeTo(got, g, 1e-14, 1e-17) {
			t.Errorf("Γ(%v) = %.17g, want %.17g", x, got, g)
		}
		if got := truncExpMean(x); !closeTo(got, m, 1e-13, 0) {
			t.Errorf("Γ'(%v) = %.17g, want %.17g", x, got, m)
		}
		if got := truncExpVar(x); !closeTo(got, v, 1e-11, 0) {
			t.Errorf("Γ″(%v) = %.17g, want %.17g", x, got, v)
		}
	}
	if truncExpCGF(0) != 0 || truncExpMean(0) != 0.5 || truncExpVar(0) != 1.0/12 {
		t.Errorf("at 0: Γ %v, Γ' %v, Γ″ %v; want 0, 1/2, 1/12", truncExpCGF(0), truncExpMean(0), truncExpVar(0))
	}
}

// TestTruncExpTails checks the large-|x| asymptotics: Γ = x − log x,
// Γ' = 1 − 1/x, Γ″ = 1/x² for x → +∞, and Γ = −log(−x), Γ' = −1/x,
// Γ″ = 1/x² for x → −∞ (corrections e^{−|x|}, negligible at |x| ≥ 50).
func TestTruncExpTails(t *testing.T) {
	for _, x := range []float64{50, 700, 1e4, 1e300} {
		l := TruncExp(1)
		out := []float64{0}
		l.CGF([]float64{x}, out)
		if !closeTo(out[0], x-math.Log(x), 1e-15, 0) {
			t.Errorf("Γ(%v) = %v, want %v", x, out[0], x-math.Log(x))
		}
		l.CGF([]float64{-x}, out)
		if !closeTo(out[0], -math.Log(x), 1e-15, 0) {
			t.Errorf("Γ(%v) = %v, want %v", -x, out[0], -math.Log(x))
		}
		mean := make([]float64, 2)
		l.Mean([]float64{x, -x}, mean)
		if !closeTo(mean[0], 1-1/x, 1e-15, 0) || !closeTo(mean[1], 1/x, 1e-15, 0) {
			t.Errorf("Γ'(±%v) = %v, want %v, %v", x, mean, 1-1/x, 1/x)
		}
		vr := make([]float64, 2)
		l.Var([]float64{x, -x}, vr)
		if !closeTo(vr[0], 1/(x*x), 1e-13, 0) || !closeTo(vr[1], 1/(x*x), 1e-13, 0) {
			t.Errorf("Γ″(±%v) = %v, want %v", x, vr, 1/(x*x))
		}
	}
}

// TestTruncExpSamplesInSupport draws at extreme inputs and temperatures,
// and at the ends of the uniform variate, and checks that every value lies
// in [0, 1] with the mode at the right end.
func TestTruncExpSamplesInSupport(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l := TruncExp(2)
	l.Theta[0], l.Theta[1] = -2, 3
	in := []float64{-1e300, 1e300, -1e4, 1e4, 0, -3, 5e-324, -5e-324}
	out := make([]float64, len(in))
	for _, beta := range []float64{1, 0.01, 100} {
		for rep := 0; rep < 1000; rep++ {
			if err := l.Sample(rng, in, out, beta); err != nil {
				t.Fatal(err)
			}
			for k, h := range out {
				if !(h >= 0 && h <= 1) {
					t.Fatalf("β=%v I=%v: sample %v outside [0, 1]", beta, in[k], h)
				}
			}
		}
	}
	for _, x := range []float64{-1e4, -30, -1e-9, 1e-9, 30, 1e4} {
		for _, u := range []float64{0, 1e-300, 0.5, 1 - 1e-16} {
			if h := truncExpDraw(u, x); !(h >= 0 && h <= 1) {
				t.Errorf("draw(u=%v, x=%v) = %v outside [0, 1]", u, x, h)
			}
		}
	}
	mode := make([]float64, 4)
	TruncExp(2).Mode([]float64{-0.1, 0, 2, -5}, mode)
	if mode[0] != 0 || mode[1] != 1 || mode[2] != 1 || mode[3] != 0 {
		t.Errorf("modes %v, want [0 1 1 0]", mode)
	}
}

// TestTruncExpRegistered: the kind is registered, so NewLayer and model
// files know it, and its Energy is infinite outside [0, 1].
func TestTruncExpRegistered(t *testing.T) {
	l, err := NewLayer("truncexp", 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.(*TruncExpLayer); !ok || l.Len() != 3 {
		t.Fatalf("NewLayer(truncexp) = %T of %d units", l, l.Len())
	}
	e := []float64{0, 0}
	l.Energy([]float64{0, 0.5, 1, 1.5, 0, 0}, e)
	if e[0] != 0 || !math.IsInf(e[1], 1) {
		t.Errorf("energies %v, want [0 +Inf]", e)
	}
}
