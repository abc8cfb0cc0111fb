package mathx

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// ulps returns |a-b| in units of the last place of b.
func ulps(a, b float64) float64 {
	return math.Abs(a-b) / (math.Nextafter(b, math.Inf(1)) - b)
}

// bigExp computes e^x to 200 bits by e^x = (e^{x/2^s})^{2^s} with a Taylor
// series for the reduced argument: independent of both math.Exp and Exp.
func bigExp(x float64) float64 {
	const prec, s = 200, 12
	r := new(big.Float).SetPrec(prec).SetFloat64(x)
	r.Quo(r, new(big.Float).SetPrec(prec).SetFloat64(1<<s))
	sum := new(big.Float).SetPrec(prec).SetFloat64(1)
	term := new(big.Float).SetPrec(prec).SetFloat64(1)
	for k := 1; k < 40; k++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(k)))
		sum.Add(sum, term)
	}
	for i := 0; i < s; i++ {
		sum.Mul(sum, sum)
	}
	f, _ := sum.Float64()
	return f
}

// TestExpAccuracy compares Exp with a 200-bit evaluation at random and
// special arguments over the whole range, and with math.Exp at many more:
// at most 1 ulp from the true value, 2 from math.Exp (itself < 1 ulp).
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	xs := []float64{0, 1e-300, -1e-300, 1, -1, math.Ln2, -math.Ln2 / 128, math.Ln2 / 128, 707.9, -707.9, 708.5, -745.1, 709.7, 10000, -10000}
	for i := 0; i < 400; i++ {
		xs = append(xs, (rng.Float64()*2-1)*708)
	}
	for _, x := range xs {
		want := bigExp(x)
		if got := Exp(x); want != 0 && !math.IsInf(want, 0) && ulps(got, want) > 1 {
			t.Errorf("Exp(%v) = %v, want %v (%.2f ulp)", x, got, want, ulps(got, want))
		}
	}
	for i := 0; i < 1000000; i++ {
		x := (rng.Float64()*2 - 1) * 708
		if i%2 == 0 {
			x = (rng.Float64()*2 - 1) * 20
		}
		if got, want := Exp(x), math.Exp(x); ulps(got, want) > 2 {
			t.Fatalf("Exp(%v) = %v, math.Exp = %v (%.2f ulp)", x, got, want, ulps(got, want))
		}
	}
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 710, -746, -1e4, 1e4} {
		if got, want := Exp(x), math.Exp(x); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("Exp(%v) = %v, want %v", x, got, want)
		}
	}
}

func BenchmarkExp(b *testing.B) {
	s := 0.0
	for i := 0; i < b.N; i++ {
		s += Exp(float64(i&1023) * -0.01)
	}
	sink = s
}

func BenchmarkMathExp(b *testing.B) {
	s := 0.0
	for i := 0; i < b.N; i++ {
		s += math.Exp(float64(i&1023) * -0.01)
	}
	sink = s
}

var sink float64

func BenchmarkSigmoidSlice(b *testing.B) {
	x := make([]float64, 500)
	for i := range x {
		x[i] = float64((i*7919)%1000)/100 - 5
	}
	out := make([]float64, 500)
	for i := 0; i < b.N; i++ {
		for j, v := range x {
			out[j] = Sigmoid(v)
		}
	}
}
