package rbm

import (
	"math"
	"testing"
)

// TestBernoulliSigmoidExact: the table shortcut decides exactly like the
// direct comparison u < σ(t), including at grid points, outside the grid
// and at infinities.
func TestBernoulliSigmoidExact(t *testing.T) {
	rng := NewRNG(1, 3)
	ts := []float64{math.Inf(-1), -1e4, -40, -32, -31.9999, -3, -0.0625, 0, 1e-17, 0.0625, 5.03125, 31.99, 32, 40, 1e4, math.Inf(1)}
	for i := 0; i < 200000; i++ {
		ts = append(ts, (rng.Float64()-0.5)*80)
	}
	for _, x := range ts {
		s := sigmoid(x)
		us := []float64{0, s, math.Nextafter(s, 0), math.Nextafter(s, 1), rng.Float64()}
		for _, u := range us {
			if u >= 1 {
				continue
			}
			want := 0.0
			if u < s {
				want = 1
			}
			if got := bernoulliSigmoid(u, x); got != want {
				// σ itself is rounded; accept disagreement only within one ulp of σ
				if math.Abs(u-s) > 2e-16 {
					t.Fatalf("t=%v u=%v: got %v, want %v (σ=%v)", x, u, got, want, s)
				}
			}
		}
	}
}
