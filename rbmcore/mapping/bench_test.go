package mapping

import (
	"context"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// benchModel is an MNIST-sized model (N = 784, M hidden units). scale 0 gives the
// paper's initial weights ±√(0.1/N) ([BR21] §4.2); otherwise weights are
// N(0, scale²). Fields are N(0, 0.1²), γ = 1.
func benchModel(kind string, scale float64, m int) testModel {
	const n = 784
	rng := rand.New(rand.NewPCG(11, 12))
	t := testModel{n: n, m: m, vis: rbm.Binary(n), hid: newHidden(kind, m, rng, 0), w: make([]float64, n*m)}
	theta := paramByName(t.hid, "theta")
	for u := range theta {
		theta[u] = 0.1 * rng.NormFloat64()
	}
	if g := paramByName(t.hid, "gamma"); g != nil {
		for u := range g {
			g[u] = 1
		}
	}
	for i := range t.w {
		if scale == 0 {
			t.w[i] = math.Sqrt(0.1/n) * float64(1-2*rng.IntN(2))
		} else {
			t.w[i] = scale * rng.NormFloat64()
		}
	}
	return t
}

// cpuSeconds is the CPU time (user + system) used by the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) * 1e-9
}

// benchPairwise also reports the CPU seconds per operation ("cpu-s/op"),
// which does not depend on how many other processes share the machine; on
// an idle 2-core machine the wall time is about half of it.
func benchPairwise(b *testing.B, kind string, scale float64, tail bool) {
	t := benchModel(kind, scale, 1200)
	if tail {
		// Heavy tails as in trained RBMs: 1% of the weights N(0, 0.5²).
		rng := rand.New(rand.NewPCG(13, 14))
		for i := range t.w {
			if rng.Float64() < 0.01 {
				t.w[i] = 0.5 * rng.NormFloat64()
			}
		}
	}
	mp := mustMapper(b, t)
	b.ResetTimer()
	c0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := mp.Pairwise(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
}

// BenchmarkPairwise: the full pairwise J for N = 784, M = 1200 per
// activation, with the paper's initial weights ±√(0.1/N) ([BR21] §4.2),
// with N(0, 0.035²) weights (the effective weight scale of the paper's
// trained models, Fig. 11) and with N(0, 0.1²) weights. The cost of the
// Step and ReLU kernels grows with each unit's largest weight, not with the
// RMS: a ReLU RBM trained on the MNIST test images here (M = 400, CD-1,
// 20 epochs) has RMS weight 0.036 like the paper's, but heavy tails (median
// |w| 0.014, 99.9% quantile 0.28) and per-unit largest weights from 0.08
// (median) to 0.49, which N(0, 0.1²) weights (per-unit largest ≈ 0.3–0.45)
// cover; the sd 0.1 case is the stress test. The "tail" case adds heavy
// tails to the sd 0.035 weights (1% drawn from N(0, 0.5²), largest ≈ 2):
// the few sites beyond the reach of the series are paired elementwise.
func BenchmarkPairwise(b *testing.B) {
	for _, c := range []struct{ name, kind string }{
		{"Linear", "gaussian"}, {"Exponential", "poisson"}, {"Step", "binary"}, {"ReLU", "relu"},
	} {
		b.Run(c.name+"/init", func(b *testing.B) { benchPairwise(b, c.kind, 0, false) })
		b.Run(c.name+"/sd0.035", func(b *testing.B) { benchPairwise(b, c.kind, 0.035, false) })
		b.Run(c.name+"/sd0.1", func(b *testing.B) { benchPairwise(b, c.kind, 0.1, false) })
		b.Run(c.name+"/tail", func(b *testing.B) { benchPairwise(b, c.kind, 0.035, true) })
	}
}

// BenchmarkTriplets: every triple of 30 sites (4060 triples) of the
// MNIST-sized models with N(0, 0.035²) weights.
func BenchmarkTriplets(b *testing.B) {
	sites := make([]int, 30)
	for i := range sites {
		sites[i] = 25 * i
	}
	for _, c := range []struct{ name, kind string }{
		{"Linear", "gaussian"}, {"Exponential", "poisson"}, {"Step", "binary"}, {"ReLU", "relu"},
	} {
		b.Run(c.name, func(b *testing.B) {
			mp := mustMapper(b, benchModel(c.kind, 0.035, 1200))
			b.ResetTimer()
			c0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, err := mp.Triplets(context.Background(), sites); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
		})
	}
}
