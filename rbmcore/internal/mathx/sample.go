package mathx

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// TruncNormalExcess returns Z - a for a draw of Z ~ N(0, 1) conditioned on
// Z > a, exact for every finite a. Returning the excess rather than Z keeps
// full relative precision deep in the tail, where Z - a ≈ 1/a ≪ a. It uses
// plain rejection from N(0, 1) for a < 0.45 (acceptance ≥ 0.33) and
// Robert's (1995) exponential rejection sampler with the optimal rate
// (a + √(a²+4))/2 above, whose acceptance rate tends to 1 in the tail.
func TruncNormalExcess(rng *rand.Rand, a float64) float64 {
	if a < 0.45 {
		for {
			z := rng.NormFloat64()
			if z > a {
				return z - a
			}
		}
	}
	alpha := 0.5 * (a + math.Sqrt(a*a+4))
	for {
		e := rng.ExpFloat64() / alpha
		d := a + e - alpha
		if rng.Float64() <= math.Exp(-0.5*d*d) && e > 0 {
			return e
		}
	}
}

// MaxPoissonMean is the largest mean accepted by Poisson: beyond it the
// counts are no longer exactly representable integers in float64.
const MaxPoissonMean = 1e15

// Poisson returns a Poisson(lambda) draw as a float64. It uses inversion by
// sequential search for lambda < 10 and Hörmann's (1993) transformed
// rejection with squeeze (PTRS) above, both exact. A lambda that is NaN,
// negative or larger than MaxPoissonMean (e.g. e^{input} overflowed) is an
// error.
func Poisson(rng *rand.Rand, lambda float64) (float64, error) {
	switch {
	case !(lambda >= 0):
		return 0, fmt.Errorf("poisson mean %v is not a non-negative number", lambda)
	case lambda > MaxPoissonMean:
		return 0, fmt.Errorf("poisson mean %v overflows (max %g): input too large", lambda, MaxPoissonMean)
	case lambda == 0:
		return 0, nil
	case lambda < 10:
		u := rng.Float64()
		p := math.Exp(-lambda)
		f := p
		k := 0.0
		for u > f && k < 200 {
			k++
			p *= lambda / k
			f += p
		}
		return k, nil
	}
	slam := math.Sqrt(lambda)
	loglam := math.Log(lambda)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := rng.Float64() - 0.5
		v := rng.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lambda + 0.43)
		if us >= 0.07 && v <= vr {
			return k, nil
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -lambda+k*loglam-lg {
			return k, nil
		}
	}
}
