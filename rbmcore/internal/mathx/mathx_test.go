package mathx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Reference values computed with mpmath at 60 digits (independent of Go's
// math package).

func near(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= abs+rel*math.Abs(want)
}

func TestErfcx(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-26, 7.6577249314905683515e+293},
		{-10, 5.3762342836322708968e+43},
		{-3, 16205.988853999586625},
		{-0.5, 1.9523604891825570933},
		{0, 1.0},
		{1e-08, 0.99999998871620842904},
		{0.3, 0.73459933456765514992},
		{1, 0.42758357615580700441},
		{2, 0.25539567631050574387},
		{5, 0.11070463773306862637},
		{10, 0.056140992743822585858},
		{25.9, 0.021767181150738212562},
		{26, 0.021683584850562906616},
		{30, 0.018795888861416751497},
		{100, 0.0056416137829894329036},
		{1e4, 0.000056418958072680841152},
		{1e8, 5.6418958354775625874e-9},
	} {
		if got := Erfcx(c.x); !near(got, c.want, 1e-14, 0) {
			t.Errorf("Erfcx(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	if !math.IsInf(Erfcx(-30), 1) {
		t.Errorf("Erfcx(-30) should overflow to +Inf")
	}
}

func TestLogErfc(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-1e4, 0.69314718055994530942},
		{-5, 0.69314718055917657952},
		{-1, 0.61123231767807049464},
		{0, 0},
		{0.001, -0.0011290158896213548262},
		{1, -1.8496055099332482486},
		{5, -27.200889545537434422},
		{25.9, -674.63735189531917897},
		{26, -679.83119976319423026},
		{30, -903.97411711064387808},
		{40, -1604.2615566532735557},
		{1000, -1000007.4801207219062},
		{1e4, -100000009.7827053199},
	} {
		if got := LogErfc(c.x); !near(got, c.want, 1e-14, 1e-16) {
			t.Errorf("LogErfc(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

func TestLogPhi(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-1e4, -50000010.129278915181},
		{-40, -804.60844201375378817},
		{-10, -53.231285150512470578},
		{-1, -1.8410216450092635058},
		{0, -0.69314718055994530942},
		{2, -0.023012909328963488465},
		{8, -6.2209605742717860585e-16},
		{40, 0},
		{1e4, 0},
	} {
		if got := LogPhi(c.x); !near(got, c.want, 1e-14, 1e-300) {
			t.Errorf("LogPhi(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

func TestLogPhiOverPhi(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-1e4, -9.2103403819761824861},
		{-40, -3.6895034805491154248},
		{-10, -2.3123466173077978366},
		{-1, -0.42208311180459076399},
		{0, 0.22579135264472743236},
		{2, 2.8959256238757092533},
		{8, 32.91893853320467212},
		{40, 800.91893853320467274},
		{1e4, 50000000.918938533205},
	} {
		if got := LogPhiOverPhi(c.x); !near(got, c.want, 1e-14, 0) {
			t.Errorf("LogPhiOverPhi(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

func TestTruncMoments(t *testing.T) {
	for _, c := range []struct{ x, mean, variance float64 }{
		{-1e4, 0.0000999999980000001, 9.99999940000005e-9},
		{-200, 0.0049997500312442201285, 0.000024996250781047718279},
		{-40, 0.024968847207263723245, 0.0006226683785913887735},
		{-10, 0.098093233962511962844, 0.0094453778256562611641},
		{-5.0001, 0.18650069753650838659, 0.032695352066100274323},
		{-4.9999, 0.18650723682343348974, 0.032697517219002546124},
		{-3, 0.28309865493043650693, 0.070559186785268116862},
		{-1, 0.52513527616098120909, 0.19909766557034879155},
		{0, 0.79788456080286535588, 0.36338022763241865692},
		{1, 1.2875999709391783612, 0.62968628577660540086},
		{5, 5.0000014867199409049, 0.99999256639808513929},
		{40, 40, 1},
		{1e4, 1e4, 1},
	} {
		m, v := TruncMoments(c.x)
		if !near(m, c.mean, 1e-12, 0) || !near(v, c.variance, 1e-11, 0) {
			t.Errorf("TruncMoments(%v) = %.17g, %.17g; want %.17g, %.17g", c.x, m, v, c.mean, c.variance)
		}
	}
}

func TestSoftplusSigmoidLogSumExp(t *testing.T) {
	for _, c := range []struct{ x, sp, sg float64 }{
		{-800, 0, 0},
		{-1, 0.313261687518223, 0.2689414213699951},
		{0, 0.693147180559945, 0.5},
		{1, 1.31326168751822, 0.7310585786300049},
		{800, 800, 1},
	} {
		if got := Softplus(c.x); !near(got, c.sp, 1e-14, 1e-300) {
			t.Errorf("Softplus(%v) = %v, want %v", c.x, got, c.sp)
		}
		if got := Sigmoid(c.x); !near(got, c.sg, 1e-14, 1e-300) {
			t.Errorf("Sigmoid(%v) = %v, want %v", c.x, got, c.sg)
		}
	}
	// Both tails against e^x/(1+e^x) with the standard library's
	// exponential, to a few ulp.
	for x := -700.0; x < 40; x += 0.37 {
		e := math.Exp(x)
		if got, want := Sigmoid(x), e/(1+e); !near(got, want, 1e-15, 0) {
			t.Errorf("Sigmoid(%v) = %v, want %v", x, got, want)
		}
	}
	if got := LogSumExp([]float64{1e4, 1e4, math.Inf(-1)}); !near(got, 1e4+math.Ln2, 1e-15, 0) {
		t.Errorf("LogSumExp = %v", got)
	}
	if got := LogAddExp(-1e4, -1e4-1); !near(got, -1e4+math.Log1p(math.Exp(-1)), 1e-15, 0) {
		t.Errorf("LogAddExp = %v", got)
	}
	if got := LogCosh2(-1e4); got != 1e4 {
		t.Errorf("LogCosh2(-1e4) = %v", got)
	}
	if got := LogCosh2(0.5); !near(got, math.Log(2*math.Cosh(0.5)), 1e-15, 0) {
		t.Errorf("LogCosh2(0.5) = %v", got)
	}
}

// TestTruncStats checks that TruncStats is LogPhiOverPhi and TruncMoments
// (each tested against mpmath and quadrature above) bit for bit, across the
// branches of both and their boundaries.
func TestTruncStats(t *testing.T) {
	xs := []float64{math.Inf(-1), -1e300, -1e4, -40, cfBelow, math.Nextafter(cfBelow, 0), -1e-300, 0, 1e-300,
		26 * sqrt2, math.Nextafter(26*sqrt2, 0), 38, 40, 1e4, math.Inf(1), math.NaN()}
	for x := -60.0; x < 60; x += 0.0173 {
		xs = append(xs, x)
	}
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	for _, x := range xs {
		l, m, v := TruncStats(x)
		wm, wv := TruncMoments(x)
		if wl := LogPhiOverPhi(x); !same(l, wl) || !same(m, wm) || !same(v, wv) {
			t.Fatalf("TruncStats(%v) = %.17g, %.17g, %.17g; want %.17g, %.17g, %.17g", x, l, m, v, wl, wm, wv)
		}
	}
}

// TestTruncRatio checks that TruncRatio gives the moments of TruncMoments
// (checked against mpmath and quadrature) to a few ulp (bit for bit in the
// continued-fraction tail) and a ratio whose log is LogPhiOverPhi (checked
// against mpmath) and which equals PhiRatio, across the continued-fraction
// switch and up to where Φ/φ overflows; beyond, the ratio is +Inf.
func TestTruncRatio(t *testing.T) {
	xs := []float64{-1e300, -1e4, -200, -40, cfBelow, math.Nextafter(cfBelow, 0), math.Nextafter(cfBelow, -1), -1e-300, 0, 1e-300, 26 * sqrt2, 37}
	for x := -60.0; x < 37.5; x += 0.0173 {
		xs = append(xs, x)
	}
	for _, x := range xs {
		r, m, v := TruncRatio(x)
		wm, wv := TruncMoments(x)
		// Above cfBelow both compute the moments as x + r and 1 - r(x + r)
		// from the inverse Mills ratio r, which near x = -5 amplify its
		// rounding (|x|/mean ≈ 28, r·mean/variance ≈ 30): the tolerances
		// are those of that cancellation.
		if (x <= cfBelow && (m != wm || v != wv)) || !near(m, wm, 1e-14, 1e-15) || !near(v, wv, 1e-13, 1e-14) {
			t.Fatalf("TruncRatio(%v) moments %.17g, %.17g; TruncMoments %.17g, %.17g", x, m, v, wm, wv)
		}
		// In log space: e^L amplifies the rounding of a large L.
		if want := LogPhiOverPhi(x); !near(math.Log(r), want, 1e-15, 1e-14) {
			t.Fatalf("TruncRatio(%v) = e^%.17g, LogPhiOverPhi = %.17g", x, math.Log(r), want)
		}
		if p := PhiRatio(x); !near(r, p, 1e-13, 0) {
			t.Fatalf("TruncRatio(%v) = %.17g, PhiRatio = %.17g", x, r, p)
		}
	}
	for _, x := range []float64{38, 1e4, math.Inf(1)} {
		if r, _, _ := TruncRatio(x); !math.IsInf(r, 1) {
			t.Errorf("TruncRatio(%v) = %v, want +Inf", x, r)
		}
	}
}

// TestTruncMomentsDepth checks that the depth-adapted continued fraction
// of TruncMoments gives the same bits as a 2000-level one (converged
// everywhere in the tail) on a dense grid of x ≤ cfBelow.
func TestTruncMomentsDepth(t *testing.T) {
	deep := func(a float64) (mean, variance float64) {
		c, c2 := 0.0, 0.0
		for k := 2000; k >= 1; k-- {
			c = float64(k) / (a + c)
			if k == 2 {
				c2 = c
			}
		}
		return c, (c2 - c) / (a + c2)
	}
	for a := -cfBelow; a < 1e5; a *= 1.003 {
		m, v := TruncMoments(-a)
		wm, wv := deep(a)
		if m != wm || v != wv {
			t.Fatalf("TruncMoments(%v) = %.17g, %.17g; the 2000-level fraction gives %.17g, %.17g", -a, m, v, wm, wv)
		}
	}
}

// TestTruncMomentsQuadrature compares TruncMoments in the tail with the
// moments of Y ~ N(-a, 1) | Y > 0 by Simpson quadrature: with t = a·y the
// weight is e^{-t - t²/(2a²)}, smooth on [0, 80], and the variance is
// integrated as E[(Y - m)²], a sum of positive terms.
func TestTruncMomentsQuadrature(t *testing.T) {
	const h, tMax = 0.001, 80.0
	n := int(tMax / h)
	for _, a := range []float64{4.5, 5, 5.5, 7, 10, 14, 20, 33, 50, 100, 300, 1e3, 1e4} {
		simpson := func(f func(y float64) float64) float64 {
			s := 0.0
			for i := 0; i <= n; i++ {
				tt := float64(i) * h
				w := 2.0
				switch {
				case i == 0 || i == n:
					w = 1
				case i%2 == 1:
					w = 4
				}
				y := tt / a
				s += w * math.Exp(-tt-0.5*y*y) * f(y)
			}
			return s
		}
		z := simpson(func(float64) float64 { return 1 })
		mean := simpson(func(y float64) float64 { return y }) / z
		variance := simpson(func(y float64) float64 { return (y - mean) * (y - mean) }) / z
		m, v := TruncMoments(-a)
		if !near(m, mean, 1e-13, 0) || !near(v, variance, 1e-12, 0) {
			t.Errorf("TruncMoments(%v) = %.17g, %.17g; quadrature %.17g, %.17g", -a, m, v, mean, variance)
		}
	}
}

// TestTruncNormal compares TruncNormalExcess sample moments with TruncMoments (itself checked
// against mpmath) across the rejection-method switch and deep in the tail.
func TestTruncNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	for _, a := range []float64{-3, 0, 0.44, 0.46, 2, 8, 1e4} {
		var s, s2 float64
		for i := 0; i < n; i++ {
			y := TruncNormalExcess(rng, a)
			if y <= 0 {
				t.Fatalf("TruncNormalExcess(%v) returned %v", a, y)
			}
			s += y
			s2 += y * y
		}
		mean := s / n
		vr := s2/n - mean*mean
		// Y = Z - a is N(-a,1) truncated to (0,∞).
		wm, wv := TruncMoments(-a)
		sd := math.Sqrt(wv / n)
		if math.Abs(mean-wm) > 5*sd || math.Abs(vr-wv) > 0.03*wv {
			t.Errorf("a=%v: mean %v var %v, want %v %v", a, mean, vr, wm, wv)
		}
	}
}

// TestPoisson checks the frequencies of small counts against the pmf and the
// mean/variance for large means, on both sides of the algorithm switch.
func TestPoisson(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	for _, lam := range []float64{0.3, 9.9, 10.1, 40, 1e6, 1e12} {
		var s, s2 float64
		counts := map[float64]int{}
		for i := 0; i < n; i++ {
			k, err := Poisson(rng, lam)
			if err != nil {
				t.Fatal(err)
			}
			if k != math.Floor(k) || k < 0 {
				t.Fatalf("non-integer draw %v", k)
			}
			counts[k]++
			s += k
			s2 += k * k
		}
		mean := s / n
		vr := s2/n - mean*mean
		if math.Abs(mean-lam) > 5*math.Sqrt(lam/n) || math.Abs(vr-lam) > 0.03*lam {
			t.Errorf("lambda=%v: mean %v var %v", lam, mean, vr)
		}
		if lam < 50 {
			for k := math.Floor(lam) - 1; k <= math.Floor(lam)+1; k++ {
				lg, _ := math.Lgamma(k + 1)
				p := math.Exp(-lam + k*math.Log(lam) - lg)
				f := float64(counts[k]) / n
				if math.Abs(f-p) > 5*math.Sqrt(p*(1-p)/n)+1e-4 {
					t.Errorf("lambda=%v: P(%v)=%v, want %v", lam, k, f, p)
				}
			}
		}
	}
	for _, bad := range []float64{math.Inf(1), math.NaN(), -1, 2e15} {
		if _, err := Poisson(rng, bad); err == nil {
			t.Errorf("Poisson(%v) gave no error", bad)
		}
	}
}

// TestErfcxFast compares erfcxFast with the mpmath values of TestErfcx and
// with Erfcx (checked against those values) on a dense grid through every
// piece of its table, the reflection below 0 and the hand-over to the
// asymptotic series at 26.
func TestErfcxFast(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-26, 7.6577249314905683515e+293}, {-10, 5.3762342836322708968e+43}, {-3, 16205.988853999586625},
		{-0.5, 1.9523604891825570933}, {0, 1.0}, {1e-08, 0.99999998871620842904}, {0.3, 0.73459933456765514992},
		{1, 0.42758357615580700441}, {2, 0.25539567631050574387}, {5, 0.11070463773306862637},
		{10, 0.056140992743822585858}, {25.9, 0.021767181150738212562}, {26, 0.021683584850562906616},
		{30, 0.018795888861416751497},
	} {
		if got := erfcxFast(c.x); !near(got, c.want, 4e-16, 0) {
			t.Errorf("erfcxFast(%v) = %.17g, mpmath %.17g", c.x, got, c.want)
		}
	}
	worst, at := 0.0, 0.0
	for x := -26.6; x < 30; x += 0.000731 {
		got, want := erfcxFast(x), Erfcx(x)
		if e := math.Abs(got-want) / want; e > worst {
			worst, at = e, x
		}
	}
	// Both are within a few ulp of the true value.
	if worst > 1e-15 {
		t.Errorf("erfcxFast differs from Erfcx by %.3g (relative) at x = %v", worst, at)
	}
	t.Logf("largest relative difference from Erfcx: %.3g at x = %v", worst, at)
	if !math.IsInf(erfcxFast(-30), 1) || !math.IsNaN(erfcxFast(math.NaN())) {
		t.Errorf("erfcxFast(-30) = %v, erfcxFast(NaN) = %v; want +Inf, NaN", erfcxFast(-30), erfcxFast(math.NaN()))
	}
}

func BenchmarkErfcx(b *testing.B) {
	xs := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = 3 * rng.NormFloat64()
	}
	for _, f := range []struct {
		name string
		f    func(float64) float64
	}{{"Erfcx", Erfcx}, {"erfcxFast", erfcxFast}} {
		b.Run(f.name, func(b *testing.B) {
			s := 0.0
			for i := 0; i < b.N; i++ {
				s += f.f(xs[i&1023])
			}
			if s == 0 {
				b.Fatal(s)
			}
		})
	}
}
