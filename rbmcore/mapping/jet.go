package mapping

import (
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// Taylor coefficients ("jets") of the scaled CGFs around a base input x0:
// g(x0 + z) = Σ_n g_n zⁿ. They give the cumulants κ_n = n!·g_n (n ≥ 1) of
// Eqs. 19/21 when x0 is the unit's own field, and the exact series
//
//	D(S) = Σ_{n≥s} n!·g_n · [zⁿ] Π_{k∈S} (e^{a_k z} − 1)
//
// of the Möbius sum ([BR21] Eq. 14 expanded in cumulants), which has no
// cancellation and keeps full relative precision for small weights at any
// order. Each recursion below was chosen to be numerically stable on its
// side of x0 (see the tests against mpmath values).

// jetInto fills g[0..len(g)-1] for the family (binary/spin share the softplus
// jet; spin's linear part is handled by the caller).
func jetInto(f family, x0 float64, g []float64) {
	if f == famReLU {
		reluJet(x0, g)
		return
	}
	softplusJet(x0, g)
}

// softplusJet: g = softplus(x0+z). With p = σ, p' = p(1−p):
// (n+1)p_{n+1} = p_n − Σ_j p_j p_{n−j}. For x0 > 0 the complement q = 1−p
// (q' = −q + q²) is recursed instead, so that σ's tiny distance from 1 is not
// lost.
func softplusJet(x0 float64, g []float64) {
	d := len(g) - 1
	p := make([]float64, d)
	flip := x0 > 0
	if flip {
		p[0] = mathx.Sigmoid(-x0)
	} else {
		p[0] = mathx.Sigmoid(x0)
	}
	for n := 0; n+1 < d; n++ {
		conv := 0.0
		for j := 0; j <= n; j++ {
			conv += p[j] * p[n-j]
		}
		if flip {
			p[n+1] = (conv - p[n]) / float64(n+1)
		} else {
			p[n+1] = (p[n] - conv) / float64(n+1)
		}
	}
	g[0] = mathx.Softplus(x0)
	if d >= 1 {
		g[1] = mathx.Sigmoid(x0)
	}
	for n := 1; n < d; n++ {
		c := p[n]
		if flip {
			c = -c
		}
		g[n+1] = c / float64(n+1)
	}
}

// reluJet: g(x) = log(Φ(x)/φ(x)) = x²/2 + log Φ(x) + ½log 2π, the CGF of the
// unit-variance ReLU unit.
//
// x0 ≥ −½: g = x²/2 + log Φ, log Φ' = r = φ/Φ, r' = −r(x + r); the r series
// carries the (tiny) non-quadratic part with full relative precision.
//
// x0 < −½: F = Φ/φ = e^g satisfies F' = 1 + xF, i.e. the truncated-normal
// moment recursion (n+1)F_{n+1} = x0 F_n + F_{n−1}, whose wanted solution is
// the minimal one for x0 < 0; it is computed by backward (Miller) recursion,
// normalised by F_0, and g = log F by the power-series logarithm.
func reluJet(x0 float64, g []float64) {
	d := len(g) - 1
	if x0 >= -0.5 {
		r := make([]float64, d)
		r[0] = mathx.MillsInv(x0)
		for n := 0; n+1 < d; n++ {
			// (r·m)_n with m = x + r, x = x0 + z.
			rm := x0 * r[n]
			if n >= 1 {
				rm += r[n-1]
			}
			for j := 0; j <= n; j++ {
				rm += r[j] * r[n-j]
			}
			r[n+1] = -rm / float64(n+1)
		}
		g[0] = mathx.LogPhiOverPhi(x0)
		if d >= 1 {
			g[1] = x0 + r[0]
		}
		if d >= 2 {
			g[2] = 0.5 + 0.5*r[1]
		}
		for n := 3; n <= d; n++ {
			g[n] = r[n-1] / float64(n)
		}
		return
	}
	// Backward recursion: the wanted solution is smaller than the other one
	// by a factor ≈ exp(−2|x0|√n) at order n, so starting at n₀ with
	// 2|x0|√n₀ ≈ 120 makes the start values irrelevant.
	start := d + 60 + int(x0*x0) + int(3600/(x0*x0))
	f := make([]float64, d+1)
	hi, mid := 0.0, 1e-300 // F_{n+1}, F_n at n = start
	for n := start; n >= 1; n-- {
		lo := float64(n+1)*hi - x0*mid // F_{n−1}
		hi, mid = mid, lo
		if n-1 <= d {
			f[n-1] = lo
			if n <= d {
				f[n] = hi
			}
		}
		if math.Abs(mid) > 1e250 {
			hi *= 1e-250
			mid *= 1e-250
			for j := n - 1; j <= d && j >= 0; j++ {
				f[j] *= 1e-250
			}
		}
	}
	// Normalise F_0 = 1 (g_0 is set separately) and take the logarithm.
	inv := 1 / f[0]
	for j := range f {
		f[j] *= inv
	}
	g[0] = mathx.LogPhiOverPhi(x0)
	for n := 1; n <= d; n++ {
		s := 0.0
		for k := 1; k < n; k++ {
			s += float64(k) * g[k] * f[n-k]
		}
		g[n] = f[n] - s/float64(n)
	}
}

// seriesUnit returns D(S) for scaled weights a by the cumulant series up to
// order maxN ≤ maxJet, using the jet g of the unit. ok is false when the
// series has not converged to full precision by order maxN.
func (c *unitCalc) seriesUnit(kappa []float64, a []float64, maxN int) (float64, bool) {
	s := len(a)
	abs := 0.0
	for _, x := range a {
		abs += math.Abs(x)
	}
	cut := seriesCut(kappa, abs, s, maxN)
	if cut == 0 {
		return 0, false
	}
	maxN = cut
	// P(z) = Π_j (e^{a_j z} − 1), ordinary coefficients up to maxN.
	p := c.ser[:maxN+1]
	p[0] = 0
	t := 1.0
	for n := 1; n <= maxN; n++ {
		t *= a[0] * invN[n]
		p[n] = t
	}
	e := c.fac[:maxN+1] // coefficients of the next factor
	for j := 1; j < s; j++ {
		t = 1
		for n := 1; n <= maxN; n++ {
			t *= a[j] * invN[n]
			e[n] = t
		}
		// Multiply in place from the top: new p_n = Σ_{i≥1} e_i p_{n−i}
		// (p has lowest degree j before this factor).
		for n := maxN; n > j; n-- {
			var sum float64
			for i := 1; i <= n-j; i++ {
				sum += e[i] * p[n-i]
			}
			p[n] = sum
		}
		p[j] = 0
	}
	var sum float64
	for n := s; n <= maxN; n++ {
		sum += kappa[n] * p[n]
	}
	return sum, true
}

// seriesCut returns the order at which the cumulant series of an order-s
// term whose scaled weights have absolute sum at most abs is cut: where the
// bound |κ_n P_n| ≤ |κ_n/n!| absⁿ of its terms has stayed below 1e-18 of
// their running sum for three orders; 0 when that does not happen by order
// maxN (0 too when maxN is 0).
func seriesCut(kappa []float64, abs float64, s, maxN int) int {
	var bound float64
	pw := math.Pow(abs, float64(s-1))
	small := 0
	for n := s; n <= maxN; n++ {
		pw *= abs
		b := math.Abs(kappa[n]*invFact[n]) * pw
		bound += b
		if b <= 1e-18*bound {
			small++
			if small >= 3 {
				return n
			}
		} else {
			small = 0
		}
	}
	return 0
}

// invN[n] = 1/n and invFact[n] = 1/n! for n ≤ maxJet.
var invN, invFact = func() ([]float64, []float64) {
	a, b := make([]float64, maxJet+1), make([]float64, maxJet+1)
	b[0] = 1
	for n := 1; n <= maxJet; n++ {
		a[n] = 1 / float64(n)
		b[n] = b[n-1] / float64(n)
	}
	return a, b
}()

// seriesOrder is the order at which the cumulant series is cut for weights
// whose absolute sum is rho times the radius of convergence (terms decay at
// least like rhoⁿ), or 0 when the series should not be used.
func seriesOrder(rho float64, s int) int {
	if rho > 0.5 {
		return 0
	}
	n := s + 3
	if rho > 0 {
		n += int(math.Ceil(-41.5 / math.Log(rho)))
	}
	if n > maxJet {
		return 0
	}
	return n
}
