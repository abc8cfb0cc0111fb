package train

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// fashionMNIST is the Debian dataset-fashion-mnist training file.
const fashionMNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"

// BenchmarkPCDEpochFashionMNIST times one PCD epoch over Fashion-MNIST
// (60000 × 784 pixels scaled to [0, 1]), M = 500 binary hidden units,
// minibatches of 100, 100 persistent chains, one Gibbs sweep per update,
// plain SGD: the settings of scikit-learn's BernoulliRBM in
// tests/bench_train.py. Sub-benchmarks: float64 (the default: float64
// results, with the visible inputs in certified float32), allfloat64 (every
// product in float64, the same results), float32 (Options.Float32).
// HARMONIUM_FASHION overrides the data path.
func BenchmarkPCDEpochFashionMNIST(b *testing.B) {
	path := os.Getenv("HARMONIUM_FASHION")
	if path == "" {
		path = fashionMNIST
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("Fashion-MNIST not found at %s", path)
	}
	set, err := data.LoadIDX(path, data.IDXOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name            string
		f32, f64Visible bool
	}{{"float64", false, false}, {"allfloat64", false, true}, {"float32", true, false}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				m := rbm.New(rbm.Binary(784), rbm.Binary(500), rbm.Seed(uint64(i)))
				tr := setup{method: PCD{K: 1, Chains: 100}, Options: Options{Batch: 100, Epochs: 1, LR: 0.1, Seed: uint64(i), Float32: c.f32, float64Visible: c.f64Visible, Monitor: Monitor{PLEvery: -1, ReconEvery: -1}}}
				if _, err := tr.fit(context.Background(), m, set); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/epoch")
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/epoch")
		})
	}
}

// cpuSeconds returns the user+system CPU time of the process (all threads,
// OpenBLAS's included): a measure of work less sensitive than wall time to
// other jobs on a shared machine.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
