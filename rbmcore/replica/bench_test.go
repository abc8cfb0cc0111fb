package replica

import (
	"context"
	"testing"
)

// The 200-point γ sweeps of issue 7 for K = 6 hierarchical data (Fig. 4
// parameters: K1 = 2, K2 = 3, p = 0.25, 0.2, α = 0.8, exact N → ∞ site
// classes, all 32 of them). Each reports the continuation solves per sweep.

func sweep200(b *testing.B, start *Solution, from, to float64) {
	ctx := context.Background()
	gs := make([]float64, 200)
	for i := range gs {
		gs[i] = from + float64(i+1)*(to-from)/200
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path, err := Sweep(ctx, start, gs, SweepOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(path.Steps+path.Rejected), "solves/op")
		}
	}
}

// BenchmarkSweepDown200: from W = 0 above λ_max/K down to γ = 0.005 through
// the over-regularised threshold and the onset of spontaneous activity, on
// the rank-1 branch (one block, Ω ≤ 1).
func BenchmarkSweepDown200(b *testing.B) {
	cl, err := fig4.Classes()
	if err != nil {
		b.Fatal(err)
	}
	start, err := SolveParamagnetic(context.Background(), Problem{Classes: cl, Alpha: 0.8, Gamma: 0.34})
	if err != nil {
		b.Fatal(err)
	}
	sweep200(b, start, 0.34, 0.005)
}

// BenchmarkSweepFig4A200: the two-block branch of Fig. 4A from γ = 0.005
// up to 0.335: m1 and m2 merge (Ω = 2 states with one overlap), the rank
// drops, spontaneous states vanish, W → 0.
func BenchmarkSweepFig4A200(b *testing.B) {
	start := twoBlockStart(b)
	down, err := Sweep(context.Background(), start, []float64{0.005}, SweepOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sweep200(b, down.Solutions[0], 0.005, 0.335)
}

// BenchmarkSweepBAM200: up from the tree-symmetric LP-bootstrapped BAM
// phase (11 blocks, Ω = 6) from γ = 0.005 to 0.065, short of the fold.
func BenchmarkSweepBAM200(b *testing.B) {
	cl, err := fig4.Classes()
	if err != nil {
		b.Fatal(err)
	}
	perms, err := fig4.Automorphisms()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start, _, err := BAMStart(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03}, true, perms)
	if err != nil {
		b.Fatal(err)
	}
	down, err := Sweep(ctx, start, []float64{0.005}, SweepOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sweep200(b, down.Solutions[0], 0.005, 0.065)
}
