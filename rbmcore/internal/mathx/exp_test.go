package mathx

import (
	"fmt"
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

// sigmoidAddPath is one implementation of SigmoidAdd: use selects it and
// returns a function that restores the default.
type sigmoidAddPath struct {
	name string
	use  func() (restore func())
}

// sigmoidAddArgs returns n pairs (x, th) whose sums a = x + th cover
// [-800, 800], densely [-40, 40], and, about one in 40, special values:
// the ends of Exp's table range for its argument -a (708 and -709.78, each
// with its neighbours up to 3 ulp away), ±745, ±Inf, NaN, ±0, tiny and
// subnormal numbers, sums whose sigmoid is subnormal, 0 or 1, and sums
// that depend on the order of Exp's additions.
func sigmoidAddArgs(rng *rand.Rand, n int) (x, th []float64) {
	var special []float64
	for _, b := range []float64{708, -709.78, 709.78, -708, 745, -745, 746, -746, 37, -37, 40} {
		v := b
		for k := 0; k < 3; k++ {
			v = math.Nextafter(v, math.Inf(-1))
		}
		for k := 0; k < 7; k++ {
			special = append(special, v)
			v = math.Nextafter(v, math.Inf(1))
		}
	}
	special = append(special, math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
		5e-324, -5e-324, 1e-300, -1e-300, 1e-17, -1e-17, 709.5, -709.5, 1e300, -1e300,
		// Found by a search over 4·10^7 sums in [-40, 40]: the only ones
		// whose sigmoid changes when Exp adds its polynomial's terms as
		// (r + r⁴…) + r²… instead of (r + r²…) + r⁴…
		-14.335043432153762, -12.036358507391727, -12.4854330581329, -8.046028665700966, -17.690466666432343)
	x, th = make([]float64, n), make([]float64, n)
	for i := range x {
		switch u := rng.IntN(40); {
		case u == 0: // special sum: x special, th = 0 (of either sign)
			x[i], th[i] = special[rng.IntN(len(special))], 0
			if rng.IntN(2) == 0 {
				th[i] = math.Copysign(0, -1)
			}
			if rng.IntN(2) == 0 {
				x[i], th[i] = th[i], x[i]
			}
		case u == 1: // special field, ordinary input
			x[i], th[i] = (rng.Float64()*2-1)*5, special[rng.IntN(len(special))]
		case u < 21:
			x[i], th[i] = (rng.Float64()*2-1)*800, (rng.Float64()*2-1)*3
		default:
			x[i], th[i] = (rng.Float64()*2-1)*35, (rng.Float64()*2-1)*5
		}
	}
	return x, th
}

// checkSigmoidAdd compares SigmoidAdd bit for bit with the scalar
// Sigmoid(x + th) over 2^20 arguments in one call, in place, and over
// every length 0..17 at start offsets 0..7 (unaligned), checking that no
// element outside out is written.
func checkSigmoidAdd(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	x, th := sigmoidAddArgs(rng, 1<<20)
	want := make([]float64, len(x))
	for i := range x {
		want[i] = Sigmoid(x[i] + th[i])
	}
	same := func(got, want []float64, what string) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s: element %d: SigmoidAdd(%v + %v) = %v (%#x), Sigmoid = %v (%#x)",
					what, i, x[i], th[i], got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
	}
	out := make([]float64, len(x))
	SigmoidAdd(out, x, th)
	same(out, want, "whole slice")
	inPlace := append([]float64(nil), x...)
	SigmoidAdd(inPlace, inPlace, th)
	same(inPlace, want, "in place")

	const sentinel = -7.5
	for base := 0; base < 2000; base += 40 { // different arguments at each base
		for start := 0; start < 8; start++ {
			for n := 0; n <= 17; n++ {
				o := base + start
				buf := make([]float64, 8+17+8)
				for i := range buf {
					buf[i] = sentinel
				}
				SigmoidAdd(buf[8:8+n], x[o:], th[o:o+n+start%2]) // th longer by 1 at odd starts
				same(buf[8:8+n], want[o:o+n], fmt.Sprintf("offset %d, length %d", o, n))
				for i, v := range buf {
					if (i < 8 || i >= 8+n) && v != sentinel {
						t.Fatalf("offset %d, length %d: buf[%d] written outside out", o, n, i)
					}
				}
			}
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SigmoidAdd with len(x) < len(out) did not panic")
			}
		}()
		SigmoidAdd(make([]float64, 5), x[:4], th)
	}()
}

// TestSigmoidAdd checks every implementation of SigmoidAdd on this machine
// against the scalar Sigmoid, bit for bit.
func TestSigmoidAdd(t *testing.T) {
	for _, p := range sigmoidAddPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			t.Logf("SigmoidAdd path: %s", p.name)
			checkSigmoidAdd(t)
		})
	}
}

// BenchmarkSigmoidAdd times SigmoidAdd over rows of 500 inputs in
// [-10, 10] (the trainer's hidden means), per element, for each path.
func BenchmarkSigmoidAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, th := make([]float64, 500), make([]float64, 500)
	for i := range x {
		x[i], th[i] = (rng.Float64()*2-1)*8, (rng.Float64()*2-1)*2
	}
	out := make([]float64, 500)
	for _, p := range sigmoidAddPaths() {
		b.Run(p.name, func(b *testing.B) {
			defer p.use()()
			for i := 0; i < b.N; i++ {
				SigmoidAdd(out, x, th)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(out)), "ns/element")
		})
	}
}
