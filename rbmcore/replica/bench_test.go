package replica

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// The 200-point γ sweeps of issue 7 for K = 6 hierarchical data (Fig. 4
// parameters: K1 = 2, K2 = 3, p = 0.25, 0.2, α = 0.8, exact N → ∞ site
// classes, all 32 of them). Each reports the continuation solves per sweep
// and the process CPU time per sweep (user + system, from getrusage; on a
// loaded machine this is steadier than the wall-clock ns/op).

func sweep200(b *testing.B, start *Solution, from, to float64, sym [][]int) {
	ctx := context.Background()
	gs := make([]float64, 200)
	for i := range gs {
		gs[i] = from + float64(i+1)*(to-from)/200
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		path, err := Sweep(ctx, start, gs, SweepOptions{Symmetry: sym})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(path.Steps+path.Rejected), "solves/op")
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time used by the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
	sweep200(b, start, 0.34, 0.005, nil)
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
	sweep200(b, down.Solutions[0], 0.005, 0.335, nil)
}

// BenchmarkSweepBAM200: up from the tree-symmetric LP-bootstrapped BAM
// phase (11 blocks, Ω = 6) from γ = 0.005 to 0.065, short of the fold.
// (Chord steps reuse the Jacobian factorisation across steps here.)
func BenchmarkSweepBAM200(b *testing.B) {
	start, _ := bamStart005(b)
	sweep200(b, start, 0.005, 0.065, nil)
}

// BenchmarkSweepBAMFull200: the whole of Fig. 4A in one sweep, up from the
// symmetric BAM phase from γ = 0.005 to 0.335 with the tree's symmetries:
// the branch switch at the first transition (Ω 6 → 2), the second
// transition, the loss of spontaneous states and W → 0.
func BenchmarkSweepBAMFull200(b *testing.B) {
	start, perms := bamStart005(b)
	sweep200(b, start, 0.005, 0.335, perms)
}

// bamStart005 is the symmetric LP-bootstrapped BAM solution continued down
// to γ = 0.005, and the tree's automorphisms.
func bamStart005(b *testing.B) (*Solution, [][]int) {
	cl, err := fig4.Classes()
	if err != nil {
		b.Fatal(err)
	}
	perms, err := fig4.Automorphisms()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start, _, err := BAMStart(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03}, BAMOptions{MaxMargin: true, Symmetry: perms})
	if err != nil {
		b.Fatal(err)
	}
	down, err := Sweep(ctx, start, []float64{0.005}, SweepOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return down.Solutions[0], perms
}
