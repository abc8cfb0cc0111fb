package rbm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBernoulliSigmoidExact: the table shortcut on 32 random bits k decides
// exactly like the direct comparison u < σ(t) for every u in k's cell
// [k·2⁻³², (k+1)·2⁻³²), including at grid points, outside the grid and at
// infinities: when it decides without drawing, both cell ends must give the
// same answer as the direct comparison; when it draws, the answer must be
// the direct comparison of the u it built (checked by replaying the draw).
func TestBernoulliSigmoidExact(t *testing.T) {
	src := rand.NewPCG(1, 3)
	rng := rand.New(src)
	ts := []float64{math.Inf(-1), -1e4, -40, -32, -31.9999, -3, -0.0625, 0, 1e-17, 0.0625, 5.03125, 31.99, 32, 40, 1e4, math.Inf(1), math.NaN()}
	for i := 0; i < 200000; i++ {
		ts = append(ts, (rng.Float64()-0.5)*80)
	}
	direct := func(u, x float64) float64 {
		if u < sigmoid(x) {
			return 1
		}
		return 0
	}
	slow := 0
	for _, x := range ts {
		s := sigmoid(x)
		c := math.Floor(s * 0x1p32)
		for _, kf := range []float64{0, c - 1, c, c + 1, math.Floor(rng.Float64() * 0x1p32), 0x1p32 - 1} {
			if kf < 0 || kf >= 0x1p32 {
				continue
			}
			k := uint64(kf)
			seed := rng.Uint64()
			src.Seed(seed, 7)
			got := bernoulliSigmoid(rng, k, x)
			after := rng.Uint64()
			src.Seed(seed, 7)
			if after == rng.Uint64() { // no draw: decided for the whole cell
				lo, hi := direct(kf*0x1p-32, x), direct(math.Nextafter((kf+1)*0x1p-32, 0), x)
				if lo != hi || got != lo {
					if math.Abs(kf*0x1p-32-s) > 2e-16 && math.Abs((kf+1)*0x1p-32-s) > 2e-16 {
						t.Fatalf("t=%v k=%v: got %v without a draw, direct %v..%v (σ=%v)", x, k, got, lo, hi, s)
					}
				}
				continue
			}
			slow++
			src.Seed(seed, 7)
			u := (kf + rng.Float64()) * 0x1p-32
			if want := direct(u, x); got != want && math.Abs(u-s) > 2e-16 && !math.IsNaN(x) {
				t.Fatalf("t=%v u=%v: got %v, want %v (σ=%v)", x, u, got, want, s)
			}
		}
	}
	if slow == 0 {
		t.Fatal("the undecided case was never exercised")
	}
}
