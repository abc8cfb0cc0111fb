package replica

import (
	"context"
	"testing"
)

// BenchmarkSweepDown200 is the 200-point γ sweep of the issue for K = 6
// hierarchical data (Fig. 4 parameters: K1 = 2, K2 = 3, p = 0.25, 0.2,
// α = 0.8, exact N → ∞ classes): from W = 0 above λ_max/K down to γ =
// 0.005, through the over-regularised threshold and the onset of
// spontaneous activity, on the rank-1 branch.
func BenchmarkSweepDown200(b *testing.B) {
	cl, err := fig4.Classes()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	gs := make([]float64, 200)
	for i := range gs {
		gs[i] = 0.34 - float64(i+1)*(0.34-0.005)/200
	}
	for i := 0; i < b.N; i++ {
		start, err := SolveParamagnetic(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.34})
		if err != nil {
			b.Fatal(err)
		}
		path, err := Sweep(ctx, start, gs, SweepOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(path.Steps+path.Rejected), "solves/op")
		}
	}
}

// BenchmarkSweepBAM200 is a 200-point sweep up from the BAM phase (LP
// bootstrap at γ = 0.005, eight blocks, Ω = 6 states) to γ = 0.045, the
// paper's protocol; the bootstrap is outside the timer.
func BenchmarkSweepBAM200(b *testing.B) {
	cl, err := fig4.Classes()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start, _, err := BAMStart(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03}, true, nil)
	if err != nil {
		b.Fatal(err)
	}
	down, err := Sweep(ctx, start, []float64{0.005}, SweepOptions{})
	if err != nil {
		b.Fatal(err)
	}
	gs := make([]float64, 200)
	for i := range gs {
		gs[i] = 0.005 + float64(i+1)*(0.045-0.005)/200
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path, err := Sweep(ctx, down.Solutions[0], gs, SweepOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(path.Steps+path.Rejected), "solves/op")
		}
	}
}
