package rbm

import (
	"context"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// The shapes of the benchmark: N=784 visible, M=500 hidden, B=100
// chains, binary–binary. A sweep is two B×N×M matrix products
// (4·B·N·M flops) plus sampling; BenchmarkGemmSweepShapes times just the two
// products through the same BLAS, so their ratio is the fraction of the
// machine's dgemm speed the sweep achieves.
const benchN, benchM, benchB = 784, 500, 100

// BenchmarkGibbsSweep is the default sweep: certified float32 products
// (exact samples, see Chains.Products).
func BenchmarkGibbsSweep(b *testing.B) { benchSweep(b, "") }

// BenchmarkGibbsSweepFloat64 is the same sweep with float64 products.
func BenchmarkGibbsSweepFloat64(b *testing.B) { benchSweep(b, "float64") }

func benchSweep(b *testing.B, products string) {
	m := New(Binary(benchN), Binary(benchM), Seed(1))
	c, err := NewChains(m, benchB, 1)
	if err != nil {
		b.Fatal(err)
	}
	c.Products = products
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	if err := c.Run(context.Background(), b.N, nil); err != nil {
		b.Fatal(err)
	}
	reportSweep(b, cpu0)
}

func BenchmarkGemmSweepShapes(b *testing.B) {
	m := New(Binary(benchN), Binary(benchM), Seed(1))
	v := make([]float64, benchB*benchN)
	h := make([]float64, benchB*benchM)
	out := make([]float64, benchB*benchN) // not fed back: values stay normal
	for i := range v {
		v[i] = float64(i % 2)
	}
	w := m.W.RawMatrix()
	timeProducts(b, func() {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: benchB, Cols: benchN, Stride: benchN, Data: v}, w, 0,
			blas64.General{Rows: benchB, Cols: benchM, Stride: benchM, Data: h})
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: benchB, Cols: benchM, Stride: benchM, Data: h}, w, 0,
			blas64.General{Rows: benchB, Cols: benchN, Stride: benchN, Data: out})
	})
}

// timeProducts times b.N calls of pair (the two products of a sweep).
func timeProducts(b *testing.B, pair func()) {
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		pair()
	}
	reportSweep(b, cpu0)
}

// reportSweep reports the GFLOP/s of b.N sweeps' products by wall time and
// the CPU time per sweep (user+system of all threads since cpu0): on a
// shared, loaded machine the CPU time is the fairer measure of work.
func reportSweep(b *testing.B, cpu0 float64) {
	b.ReportMetric(4*benchB*benchN*benchM*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N)*1e9, "cpu-ns/op")
}

// cpuSeconds returns the user+system CPU time of the process (all threads,
// OpenBLAS's included).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkSgemmSweepShapes is BenchmarkGemmSweepShapes in single precision
// (the products of the default Chains).
func BenchmarkSgemmSweepShapes(b *testing.B) {
	m := New(Binary(benchN), Binary(benchM), Seed(1))
	w := make([]float32, benchN*benchM)
	for i, x := range m.W.RawMatrix().Data {
		w[i] = float32(x)
	}
	v := make([]float32, benchB*benchN)
	h := make([]float32, benchB*benchM)
	out := make([]float32, benchB*benchN)
	for i := range v {
		v[i] = float32(i % 2)
	}
	wg := blas32.General{Rows: benchN, Cols: benchM, Stride: benchM, Data: w}
	timeProducts(b, func() {
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, blas32.General{Rows: benchB, Cols: benchN, Stride: benchN, Data: v}, wg, 0,
			blas32.General{Rows: benchB, Cols: benchM, Stride: benchM, Data: h})
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, blas32.General{Rows: benchB, Cols: benchM, Stride: benchM, Data: h}, wg, 0,
			blas32.General{Rows: benchB, Cols: benchN, Stride: benchN, Data: out})
	})
}
