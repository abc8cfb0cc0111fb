// Package mathx holds the numerically stable scalar special functions and
// exact samplers shared by the rbmcore packages: softplus, log-sum-exp, the
// scaled complementary error function erfcx, log erfc, log Φ, moments of
// the normal distribution truncated to (0, ∞), a tail-safe truncated-normal
// sampler and a Poisson sampler valid for large means.
//
// Every function is finite wherever the mathematical value is finite and
// representable; the tests compare each one against an independent
// high-precision computation (mpmath values) or quadrature.
package mathx

import (
	"math"
)

// Log2Pi is log(2π).
const Log2Pi = 1.8378770664093454835606594728112352797227949472755668

const (
	sqrtPi     = 1.7724538509055160272981674833411451827975494561223871
	invSqrtPi  = 0.5641895835477562869480794515607725858440506293289988
	sqrt2      = 1.4142135623730950488016887242096980785696718753769481
	sqrtHalfPi = 1.2533141373155002512078826424055226265034933703049692 // √(π/2)
	ln2        = 0.6931471805599453094172321214581765680755001343602553
)

// Softplus returns log(1 + e^x) without overflow or loss of precision.
func Softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(Exp(-x))
	}
	return math.Log1p(Exp(x))
}

// Sigmoid returns 1/(1 + e^{-x}), accurate to a few ulp in both tails: for
// x < 0 the large e^{-x} carries its own relative accuracy into the
// quotient. There is no branch on the sign, which in training loops over
// inputs of random sign cost more than the exponential (mispredictions);
// below x = −709.78 (where e^{-x} overflows) the result is 0 instead of a
// subnormal number. SigmoidAdd gives the same bits over a slice.
func Sigmoid(x float64) float64 {
	return 1 / (1 + Exp(-x))
}

// LogCosh2 returns log(2 cosh x) = |x| + log1p(e^{-2|x|}).
func LogCosh2(x float64) float64 {
	a := math.Abs(x)
	return a + math.Log1p(math.Exp(-2*a))
}

// LogAddExp returns log(e^a + e^b). Either argument may be -Inf.
func LogAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	if math.IsInf(a, 1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogSumExp returns log Σ_k e^{x[k]}; -Inf for an empty slice.
func LogSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// expSquare returns e^{x²} with the rounding error of x² compensated
// (x² = hi + lo exactly, e^{x²} ≈ e^{hi}(1 + lo)).
func expSquare(x float64) float64 {
	hi := x * x
	lo := math.FMA(x, x, -hi)
	return math.Exp(hi) * (1 + lo)
}

// Erfcx returns the scaled complementary error function e^{x²} erfc(x).
// It is accurate to a few ulps for x ≥ 0 (where it decays like 1/(x√π)) and
// overflows to +Inf only below x ≈ -26.6, where the true value is not
// representable.
func Erfcx(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x < 0:
		if x < -26.7 {
			return math.Inf(1)
		}
		e := expSquare(x)
		if x > -26 {
			// Erfcx(-x) = e·erfc(-x) (e^{x²} is even): one exponential.
			return 2*e - e*math.Erfc(-x)
		}
		return 2*e - Erfcx(-x)
	case x < 26:
		// erfc does not underflow below 26 and is accurate to ~1 ulp.
		return expSquare(x) * math.Erfc(x)
	default:
		// Asymptotic series 1/(x√π) Σ_k (-1)^k (2k-1)!!/(2x²)^k; at
		// x ≥ 26 the 8th term is below 1e-25.
		t := 1 / (2 * x * x)
		s, term := 1.0, 1.0
		for k := 1; k <= 8; k++ {
			term *= -float64(2*k-1) * t
			s += term
		}
		return invSqrtPi / x * s
	}
}

// LogErfc returns log erfc(x) for any x, finite down to the far right tail
// (log erfc(x) ≈ -x² - log(x√π)).
func LogErfc(x float64) float64 {
	if x < 0.5 {
		return math.Log1p(-math.Erf(x))
	}
	hi := x * x
	lo := math.FMA(x, x, -hi)
	return math.Log(Erfcx(x)) - hi - lo
}

// LogPhi returns log Φ(x), Φ the standard normal distribution function.
func LogPhi(x float64) float64 {
	if x > 0 {
		return math.Log1p(-0.5 * math.Erfc(x/sqrt2))
	}
	return LogErfc(-x/sqrt2) - ln2
}

// LogPhiOverPhi returns log(Φ(x)/φ(x)) = log ∫_0^∞ e^{-(y-x)²/2 + x²/2} dy,
// φ the standard normal density. It is the log partition function of a unit
// variance Gaussian truncated to (0, ∞) and grows like x²/2 for x → +∞ and
// like -log(-x) for x → -∞.
func LogPhiOverPhi(x float64) float64 {
	if x < 0 {
		return math.Log(sqrtHalfPi * Erfcx(-x/sqrt2))
	}
	return 0.5*x*x + 0.5*Log2Pi + LogPhi(x)
}

// MillsInv returns r(x) = φ(x)/Φ(x), the inverse Mills ratio, so that
// x + r(x) is the mean of N(x, 1) truncated to (0, ∞).
func MillsInv(x float64) float64 {
	return math.Sqrt(2/math.Pi) / Erfcx(-x/sqrt2)
}

// cfBelow is the input below which TruncMoments uses the Laplace continued
// fraction of the Mills ratio. Its depth is cfDepth(-x): the fraction
// converges faster the further into the tail, so a fixed depth sized for
// x = cfBelow would waste most of its divisions at the large |x| where
// ReLU-type units spend most of their time.
const cfBelow = -5.0

// cfDepth returns the number of levels of the continued fraction evaluated
// at a = -x ≥ 5. Measured: the value stops changing in float64 (the same
// bits for every deeper evaluation up to 2000 levels) at 33 levels for
// a = 5, 26 at a = 6, 16 at a = 10, 10 at a = 20, 8 at a = 40 and 6 at
// a = 100 (in a few places between those grid points a level or two more:
// 140/a + 8 fails on a grid 0.3 % apart); 200/a + 8 keeps a margin of about
// 50 % (TestTruncMomentsDepth checks it against a 2000-level evaluation on
// that grid). Each level is a dependent division, the bulk of the cost of
// a ReLU unit far below threshold.
func cfDepth(a float64) int {
	return int(200/a) + 8
}

// TruncMoments returns the mean and variance of Y ~ N(x, 1) conditioned on
// Y > 0. For x → -∞ the mean ≈ 1/|x| and the variance ≈ 1/x²; both are
// computed there from the Laplace continued fraction of the Mills ratio, so
// no cancellation occurs (the naive 1 - r(x)(x + r(x)) loses all digits).
func TruncMoments(x float64) (mean, variance float64) {
	if x > cfBelow {
		return millsMoments(x, MillsInv(x))
	}
	a := -x
	c1, c2 := tailFraction(a)
	return c1, (c2 - c1) / (a + c2)
}

// tailFraction returns the first two levels c1, c2 of the Laplace continued
// fraction at a = -x ≥ 5: with R(a) = Φ(-a)/φ(a) = 1/(a + c1) and
// c_k = k/(a + c_{k+1}), E[Y] = c1 and Var[Y] = 1 - (a + c1) c1 =
// (c2 - c1)/(a + c2).
func tailFraction(a float64) (c1, c2 float64) {
	c := 0.0
	for k := cfDepth(a); k >= 1; k-- {
		c = float64(k) / (a + c)
		if k == 2 {
			c2 = c
		}
	}
	return c, c2
}

// PhiRatio returns Φ(x)/φ(x) = e^{LogPhiOverPhi(x)}, the partition
// function of a unit-variance Gaussian truncated to (0, ∞), from one
// scaled complementary error function (the fast erfcxFast) and no
// logarithm. It overflows to +Inf above x ≈ 37.6, where LogPhiOverPhi
// stays finite.
func PhiRatio(x float64) float64 {
	return sqrtHalfPi * erfcxFast(-x/sqrt2)
}

// TruncRatio returns PhiRatio(x) and the moments of TruncMoments(x) (to a
// few ulp) from one evaluation of erfcx (erfcxFast), or below cfBelow of
// the continued fraction that gives the moments (there Φ(x)/φ(x) =
// 1/(-x + E[Y]), and the moments are those of TruncMoments bit for bit).
// It is the kernel of the ReLU-type units that need the branch weight and
// the moments of the same half line (dReLU), with no logarithm.
func TruncRatio(x float64) (ratio, mean, variance float64) {
	if x > cfBelow {
		e := erfcxFast(-x / sqrt2)
		mean, variance = millsMoments(x, math.Sqrt(2/math.Pi)/e)
		return sqrtHalfPi * e, mean, variance
	}
	a := -x
	c1, c2 := tailFraction(a)
	return 1 / (a + c1), c1, (c2 - c1) / (a + c2)
}

// millsMoments returns the mean x + r and variance 1 - r(x + r) of
// N(x, 1) | Y > 0 from the inverse Mills ratio r = MillsInv(x) (accurate
// for x > cfBelow).
func millsMoments(x, r float64) (mean, variance float64) {
	mean = x + r
	variance = 1 - r*mean
	if variance < 0 {
		variance = 0
	}
	return mean, variance
}

// TruncStats returns LogPhiOverPhi(x) and TruncMoments(x), bit for bit,
// for the units that need the log normaliser and the moments of the same
// branch (dReLU): both come from e^{y²} and erfc(±y), y = x/√2, which it
// evaluates once instead of in each function.
func TruncStats(x float64) (logZ, mean, variance float64) {
	y := x / sqrt2
	switch {
	case x > cfBelow && x < 0:
		// Both use Erfcx(-y), -y > 0.
		e := Erfcx(-y)
		logZ = math.Log(sqrtHalfPi * e)
		mean, variance = millsMoments(x, math.Sqrt(2/math.Pi)/e)
		return logZ, mean, variance
	case x > 0 && y < 26:
		// LogPhi(x) = log1p(-erfc(y)/2) and Erfcx(-y) = 2e - e·erfc(y)
		// with e = e^{y²}: Erfcx's own formula for -26 < -y < 0.
		c := math.Erfc(y)
		e := expSquare(y)
		logZ = 0.5*x*x + 0.5*Log2Pi + math.Log1p(-0.5*c)
		mean, variance = millsMoments(x, math.Sqrt(2/math.Pi)/(2*e-e*c))
		return logZ, mean, variance
	}
	// The far tails, 0 and NaN: nothing to share.
	mean, variance = TruncMoments(x)
	return LogPhiOverPhi(x), mean, variance
}
