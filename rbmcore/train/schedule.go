package train

import "math"

// Schedule gives the number of Gibbs sweeps k and the learning rate of an
// epoch (counted from 1) from the base values: the method's K and
// Options.LR. A nil Schedule is Constant. Any func of this type is a
// user-defined schedule.
type Schedule func(epoch, baseK int, baseLR float64) (k int, lr float64)

// Constant keeps k = baseK and η = baseLR throughout.
func Constant(epoch, baseK int, baseLR float64) (int, float64) { return baseK, baseLR }

// GrowingK is the schedule of [BR21]'s MNIST training: k = ⌈epoch/10⌉
// Gibbs sweeps and η = η₀/k, so k = 1 for epochs 1–10, …, 50 for epochs
// 491–500. baseK is ignored.
func GrowingK(epoch, baseK int, baseLR float64) (int, float64) {
	k := int(math.Ceil(float64(epoch) / 10))
	k = max(k, 1)
	return k, baseLR / float64(k)
}

// GeometricDecay returns a schedule that keeps η₀ for the first fraction
// `start` of `epochs` epochs and then decays it geometrically to
// η₀·final at the last epoch (the practice of [TCM19]'s reference
// implementation: decay over the second half, start = 0.5).
func GeometricDecay(epochs int, start, final float64) Schedule {
	return func(epoch, baseK int, baseLR float64) (int, float64) {
		e0 := start * float64(epochs)
		if float64(epoch) <= e0 || float64(epochs) <= e0 {
			return baseK, baseLR
		}
		f := (float64(epoch) - e0) / (float64(epochs) - e0)
		return baseK, baseLR * math.Pow(final, f)
	}
}
