package rbm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBernoulliSigmoidExact: the table shortcut on 32 random bits k and 53
// further bits x decides exactly like the direct comparison u < σ(t) of
// the uniform u they make, including at grid points, outside the grid, at
// infinities, and at the k next to σ(t)·2³² (where the further bits decide).
func TestBernoulliSigmoidExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	ts := []float64{math.Inf(-1), -1e4, -40, -32, -31.9999, -3, -0.0625, 0, 1e-17, 0.0625, 5.03125, 31.99, 32, 40, 1e4, math.Inf(1), math.NaN()}
	for i := 0; i < 200000; i++ {
		ts = append(ts, (rng.Float64()-0.5)*80)
	}
	undecided := 0
	for _, x := range ts {
		s := sigmoid(x)
		c := math.Floor(s * 0x1p32)
		for _, kf := range []float64{0, c - 1, c, c + 1, math.Floor(rng.Float64() * 0x1p32), 0x1p32 - 1} {
			if kf < 0 || kf >= 0x1p32 {
				continue
			}
			k := uint64(kf)
			for _, bits := range []uint64{0, rng.Uint64(), ^uint64(0)} {
				got := bernoulliSigmoid(k, bits, x)
				u := uniform(k, bits)
				want := 0.0
				if u < s {
					want = 1
				}
				if got != want && math.Abs(u-s) > 2e-16 && !math.IsNaN(x) {
					t.Fatalf("t=%v k=%v bits=%x: got %v, u=%v, σ=%v", x, k, bits, got, u, s)
				}
			}
			if bernoulliSigmoid(k, 0, x) != bernoulliSigmoid(k, ^uint64(0), x) {
				undecided++
			}
		}
	}
	if undecided == 0 {
		t.Fatal("no case where the further bits decide: the straddling cells were never exercised")
	}
}

// TestSampleSigmoidCertificate: from inputs perturbed by up to the
// certificate's bound, sampleSigmoid gives exactly the samples of the
// exact inputs with the same seed (recomputing the straddling ones), and
// the comparison is sensitive: with a bound of zero the samples differ.
func TestSampleSigmoidCertificate(t *testing.T) {
	const rows, n = 40, 300
	rng := rand.New(rand.NewPCG(5, 6))
	theta := make([]float64, n)
	for u := range theta {
		theta[u] = rng.NormFloat64()
	}
	exact := make([]float64, rows*n)
	for k := range exact {
		exact[k] = 3 * rng.NormFloat64()
	}
	cert := &certificate{norm: make([]float64, rows), slope: make([]float64, n), offset: make([]float64, n),
		exact: func(r, u int) float64 { return exact[r*n+u] }}
	for u := range cert.slope {
		cert.slope[u] = 0.05 * rng.Float64()
		cert.offset[u] = 0.01 * rng.Float64()
	}
	for r := range cert.norm {
		cert.norm[r] = 2 * rng.Float64()
	}
	for _, form := range []struct{ scale, lo, hi float64 }{{1, 0, 1}, {0.7, 0, 1}, {2, -1, 1}} {
		// perturbed inputs: t = scale·(in + θ) moves by up to the half-width
		perturbed := make([]float64, len(exact))
		for k := range exact {
			r, u := k/n, k%n
			bound := (cert.norm[r]*cert.slope[u] + cert.offset[u]) / form.scale
			perturbed[k] = exact[k] + bound*(2*rng.Float64()-1)
			if k%7 == 0 {
				perturbed[k] = exact[k] + bound // at the edge
			}
		}
		want, got, loose := make([]float64, len(exact)), make([]float64, len(exact)), make([]float64, len(exact))
		sampleSigmoid(rand.New(rand.NewPCG(9, 9)), theta, exact, want, form.scale, form.lo, form.hi, nil)
		cert.recomputed = 0
		sampleSigmoid(rand.New(rand.NewPCG(9, 9)), theta, perturbed, got, form.scale, form.lo, form.hi, cert)
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%+v: unit %d: certified sample %v, exact-input sample %v", form, k, got[k], want[k])
			}
		}
		if cert.recomputed == 0 {
			t.Errorf("%+v: no input was recomputed: the straddling case was not exercised", form)
		}
		sampleSigmoid(rand.New(rand.NewPCG(9, 9)), theta, perturbed, loose, form.scale, form.lo, form.hi, nil)
		diff := 0
		for k := range want {
			if loose[k] != want[k] {
				diff++
			}
		}
		if diff == 0 {
			t.Errorf("%+v: uncertified perturbed inputs gave the same samples: the test is not sensitive", form)
		}
		t.Logf("%+v: %d recomputed, %d differences without the certificate", form, cert.recomputed, diff)
	}
}
