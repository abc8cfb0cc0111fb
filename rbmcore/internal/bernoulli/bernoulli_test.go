package bernoulli

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSampleExact: every sample equals the direct comparison
// u < σ(t) of the uniform u that the documented bit layout gives the unit
// (10-bit field of the chunk's SplitMix64 words, further bits from
// position extraBase + k), rebuilt here from the same seed, including at
// cell logits, far outside them, at infinities and NaN; and units whose
// σ(t) lies in their own cell (where the further bits decide) occur.
func TestSampleExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	const n = 300 // two chunks per row
	ts := []float64{math.Inf(-1), -1e4, -40, -6.93, 0, 1e-17, 5.03125, 40, 1e4, math.Inf(1), math.NaN()}
	for c := 1; c < sigCells; c += 37 {
		ts = append(ts, sigCell[c][0], math.Nextafter(sigCell[c][0], 0))
	}
	for len(ts) < 400*n {
		ts = append(ts, (rng.Float64()-0.5)*30)
	}
	in := ts[:400*n]
	for _, form := range []struct{ scale, lo, hi float64 }{{1, 0, 1}, {2, -1, 1}} {
		theta := make([]float64, n)
		out := make([]float64, len(in))
		Sample(rand.New(rand.NewPCG(7, 8)), theta, in, out, form.scale, form.lo, form.hi, nil)
		seeds := rand.New(rand.NewPCG(7, 8))
		inCell := 0
		for r0 := 0; r0 < len(in); r0 += n {
			for c0 := 0; c0 < n; c0 += sampleChunk {
				seed := seeds.Uint64()
				for k := 0; k < min(sampleChunk, n-c0); k++ {
					word := splitmix(seed + uint64(k/6+1)*golden)
					c := (word >> (10 * (k % 6))) & 1023
					u := (float64(c) + float64(splitmix(seed+uint64(1<<32+k)*golden)>>11)*0x1p-53) / 1024
					x := form.scale * in[r0+c0+k]
					s := 1 / (1 + math.Exp(-x))
					want := form.lo
					if u < s {
						want = form.hi
					}
					if got := out[r0+c0+k]; got != want && math.Abs(u-s) > 1e-15 {
						t.Fatalf("%+v: t=%v: got %v, want %v (u=%v, σ=%v)", form, x, got, want, u, s)
					}
					if math.Floor(s*1024) == float64(c) {
						inCell++
					}
				}
			}
		}
		if inCell == 0 {
			t.Fatalf("%+v: no unit had σ(t) in its own cell: the undecided case was not exercised", form)
		}
		t.Logf("%+v: %d of %d units decided by their further bits", form, inCell, len(in))
	}
}

// TestSampleCertificate: from inputs perturbed by up to the
// certificate's bound, Sample gives exactly the samples of the
// exact inputs with the same seed (recomputing the straddling ones), and
// the comparison is sensitive: with a bound of zero the samples differ.
func TestSampleCertificate(t *testing.T) {
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
	cert := &Certificate{Norm: make([]float64, rows), Slope: make([]float64, n), Offset: make([]float64, n),
		Exact: func(r, u int) float64 { return exact[r*n+u] }}
	for u := range cert.Slope {
		cert.Slope[u] = 0.05 * rng.Float64()
		cert.Offset[u] = 0.01 * rng.Float64()
	}
	for r := range cert.Norm {
		cert.Norm[r] = 2 * rng.Float64()
	}
	for _, form := range []struct{ scale, lo, hi float64 }{{1, 0, 1}, {0.7, 0, 1}, {2, -1, 1}} {
		// perturbed inputs: t = scale·(in + θ) moves by up to the half-width
		perturbed := make([]float64, len(exact))
		for k := range exact {
			r, u := k/n, k%n
			bound := (cert.Norm[r]*cert.Slope[u] + cert.Offset[u]) / form.scale
			perturbed[k] = exact[k] + bound*(2*rng.Float64()-1)
			if k%7 == 0 {
				perturbed[k] = exact[k] + bound // at the edge
			}
		}
		want, got, loose := make([]float64, len(exact)), make([]float64, len(exact)), make([]float64, len(exact))
		Sample(rand.New(rand.NewPCG(9, 9)), theta, exact, want, form.scale, form.lo, form.hi, nil)
		cert.Recomputed = 0
		Sample(rand.New(rand.NewPCG(9, 9)), theta, perturbed, got, form.scale, form.lo, form.hi, cert)
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%+v: unit %d: certified sample %v, exact-input sample %v", form, k, got[k], want[k])
			}
		}
		if cert.Recomputed == 0 {
			t.Errorf("%+v: no input was recomputed: the straddling case was not exercised", form)
		}
		Sample(rand.New(rand.NewPCG(9, 9)), theta, perturbed, loose, form.scale, form.lo, form.hi, nil)
		diff := 0
		for k := range want {
			if loose[k] != want[k] {
				diff++
			}
		}
		if diff == 0 {
			t.Errorf("%+v: uncertified perturbed inputs gave the same samples: the test is not sensitive", form)
		}
		t.Logf("%+v: %d recomputed, %d differences without the certificate", form, cert.Recomputed, diff)
	}
}
