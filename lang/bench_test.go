package lang

import (
	"context"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// The benchmarks below back `make bench` (tests/bench_lang.sh). Each ratio
// benchmark alternates the compiled call and the same call made from a cell
// in every iteration, so both see the same machine load, and reports
// cell/native: the cost of calling compiled rbmcore/gonum from the notebook.

func benchSession(b *testing.B, setup string) *Session {
	b.Helper()
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	if res := s.Execute(context.Background(), setup, discardOutput{}); res.Err != nil {
		b.Fatalf("setup: %s: %s", res.Err.Name, res.Err.Value)
	}
	return s
}

func ratioBench(b *testing.B, s *Session, cell string, native func()) {
	var tn, tc time.Duration
	ratios := make([]float64, 0, b.N)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		native()
		dn := time.Since(t0)
		t0 = time.Now()
		if res := s.Execute(context.Background(), cell, discardOutput{}); res.Err != nil {
			b.Fatalf("%s: %s", res.Err.Name, res.Err.Value)
		}
		dc := time.Since(t0)
		tn, tc = tn+dn, tc+dc
		ratios = append(ratios, float64(dc)/float64(dn))
	}
	// The median of the per-iteration ratios resists bursts of load from
	// other processes better than the ratio of the totals.
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "cell/native")
	b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "native-ns/op")
	b.ReportMetric(float64(tc.Nanoseconds())/float64(b.N), "cell-ns/op")
}

// BenchmarkGibbsCellVsNative: 5 Gibbs sweeps of 100 chains of a 784×500
// binary RBM (rbm.Chains.Run), from a cell and from compiled Go.
func BenchmarkGibbsCellVsNative(b *testing.B) {
	s := benchSession(b, "m := rbm.New(rbm.Binary(784), rbm.Binary(500), rbm.Seed(1))\nch, _ := rbm.NewChains(m, 100, 1)")
	m := rbm.New(rbm.Binary(784), rbm.Binary(500), rbm.Seed(1))
	ch, err := rbm.NewChains(m, 100, 1)
	if err != nil {
		b.Fatal(err)
	}
	ratioBench(b, s, "ch.Run(ctx, 5, nil)", func() {
		if err := ch.Run(context.Background(), 5, nil); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkMulCellVsNative: a 500×500 gonum matrix product.
func BenchmarkMulCellVsNative(b *testing.B) {
	s := benchSession(b, "import \"gonum.org/v1/gonum/mat\"\nma := mat.NewDense(500, 500, nil)\nfor i := range 500 { ma.Set(i, (7*i)%500, 1.5) }\nmc := mat.NewDense(500, 500, nil)")
	a := mat.NewDense(500, 500, nil)
	for i := range 500 {
		a.Set(i, (7*i)%500, 1.5)
	}
	c := mat.NewDense(500, 500, nil)
	ratioBench(b, s, "mc.Mul(ma, ma)", func() { c.Mul(a, a) })
}

// BenchmarkTrivialCell: the per-cell overhead (split, rewrite, compile, run,
// output synchronisation) of `x := 1`.
func BenchmarkTrivialCell(b *testing.B) {
	s := benchSession(b, "x := 0")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := s.Execute(context.Background(), "x := 1", discardOutput{}); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkFaultMarkedLoops: tight interpreted loops over a slice in a
// function of a cell, with one and two statements that can fail (marked
// once before the loop, see markFaults), one calling a function (marked in
// every iteration), and a loop without any. Compare with the same benchmark
// on a tree without markFaults for the cost of placing runtime errors.
func BenchmarkFaultMarkedLoops(b *testing.B) {
	s := benchSession(b, `func one(xs []int) int { s := 0; for i := 0; i < len(xs); i++ { s += xs[i] }; return s }
func two(xs []int) int { s, u := 0, 0; for i := 0; i < len(xs); i++ { s += xs[i]; u += xs[i] }; return s + u }
func inc(x int) int { return x + 1 }
func calls(xs []int) int { s := 0; for i := 0; i < len(xs); i++ { s += inc(xs[i]) }; return s }
func none(xs []int) int { s := 0; for i := 0; i < len(xs); i++ { s += i }; return s }
xs := make([]int, 10000)`)
	for _, f := range []string{"one", "two", "calls", "none"} {
		b.Run(f, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if res := s.Execute(context.Background(), f+"(xs)", discardOutput{}); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}
