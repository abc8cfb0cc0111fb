package train

import "math"

// Schedule gives the number of Gibbs steps k and the learning rate of an
// epoch (counted from 1) from the trainer's base values K and LR. A nil
// Schedule is Constant. Any func of this type is a user-defined schedule.
type Schedule func(epoch, baseK int, baseLR float64) (k int, lr float64)

// Constant keeps k = baseK and η = baseLR throughout.
func Constant(epoch, baseK int, baseLR float64) (int, float64) { return baseK, baseLR }

// Seed001 is the schedule of seed 001 (MNIST training): k = ⌈epoch/10⌉ Gibbs
// steps and η = η₀/k, so k = 1 for epochs 1–10, …, 50 for epochs 491–500.
// baseK is ignored.
func Seed001(epoch, baseK int, baseLR float64) (int, float64) {
	k := int(math.Ceil(float64(epoch) / 10))
	k = max(k, 1)
	return k, baseLR / float64(k)
}

// GeometricDecay returns a schedule that keeps η₀ for the first fraction
// `start` of `epochs` epochs and then decays it geometrically to
// η₀·final at the last epoch (the seed 000 reference practice: decay over
// the second half, start = 0.5).
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
