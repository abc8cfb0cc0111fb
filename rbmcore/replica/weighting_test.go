package replica

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// threePoints returns the class table of K = 3 data points on n sites:
// ξ⁰ random, ξ¹ = ξ⁰ with a fraction flip of the sites flipped, ξ² random.
func threePoints(t *testing.T, n int, flip float64) *Classes {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 22))
	xi := mat.NewDense(3, n, nil)
	for i := 0; i < n; i++ {
		a := float64(2*rng.IntN(2) - 1)
		b := a
		if rng.Float64() < flip {
			b = -a
		}
		xi.Set(0, i, a)
		xi.Set(1, i, b)
		xi.Set(2, i, float64(2*rng.IntN(2)-1))
	}
	cl, err := ClassesFromData(xi)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// Ω < K: data points 0 and 1 are close and share a state. Under
// LabelledEqual that state has weight 2/3 and the other 1/3; the solution
// has residuals ≤ 1e-10 (checked from scratch with those weights) and is
// not a solution under the paper's 1/Ω, from which the same start reaches a
// different solution.
func TestWeightingSharedState(t *testing.T) {
	ctx := context.Background()
	cl := threePoints(t, 400, 0.15)
	start := KoskoBlocks(cl, &BAMMixture{Patterns: [][]float64{{1, 1, 0}, {0, 0, 1}}, Psi: []float64{0.5, 0.5}}, 1)
	p := Problem{Classes: cl, Alpha: 0.8, Gamma: 0.1, LabelledEqual: true}
	lab, err := Solve(ctx, p, start)
	if err != nil {
		t.Fatal(err)
	}
	checkResiduals(t, lab)
	if len(lab.States) != 2 {
		t.Fatalf("LabelledEqual: Ω = %d, want 2", len(lab.States))
	}
	for _, st := range lab.States {
		if n := len(st.From); !(n == 2 && st.From[0] == 0 && st.From[1] == 1) && !(n == 1 && st.From[0] == 2) {
			t.Fatalf("LabelledEqual: states reached from %v, want {0,1} and {2}", st.From)
		}
	}
	pi := lab.StateWeights()
	for w, st := range lab.States {
		if want := float64(len(st.From)) / 3; math.Abs(pi[w]-want) > 1e-15 {
			t.Fatalf("StateWeights %v, want |From|/K", pi)
		}
	}
	// continuation keeps the rule (the states carry their data points)
	path, err := Sweep(ctx, lab, []float64{0.09, 0.08}, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range path.Solutions {
		if !s.Problem.LabelledEqual {
			t.Fatal("Sweep dropped Problem.LabelledEqual")
		}
		checkResiduals(t, s)
	}
	// the same point under the paper's rule violates Eq. 21
	eq := *lab
	eq.Problem.LabelledEqual = false
	if _, r21 := eq.residuals(); !(r21 > 1e-3) {
		t.Fatalf("the LabelledEqual solution also solves the 1/Ω equations (Eq. 21 residual %g)", r21)
	}
	p.LabelledEqual = false
	paper, err := Solve(ctx, p, start)
	if err != nil {
		t.Fatal(err)
	}
	checkResiduals(t, paper)
	if d := blockDistance(paper, lab.Blocks); !(d > 0.1) {
		t.Fatalf("the two rules reach solutions %g apart, want different ones", d)
	}
}

// Ω = K: in the BAM phase every data point has its own state, the two rules
// give every state the weight 1/K and the same solution.
func TestWeightingOwnStates(t *testing.T) {
	ctx := context.Background()
	cl := mustClasses(t, fig4)
	bam, _, err := BAMStart(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03}, BAMOptions{MaxMargin: true})
	if err != nil {
		t.Fatal(err)
	}
	lab, err := Solve(ctx, Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03, LabelledEqual: true}, bam.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	checkResiduals(t, lab)
	if len(lab.States) != cl.K {
		t.Fatalf("Ω = %d, want K = %d", len(lab.States), cl.K)
	}
	for _, x := range lab.StateWeights() {
		if math.Abs(x-1/float64(cl.K)) > 1e-15 {
			t.Fatalf("state weights %v, want 1/K each", lab.StateWeights())
		}
	}
	if d := blockDistance(lab, bam.Blocks); d > 1e-9 {
		t.Fatalf("LabelledEqual solution %g away from the 1/Ω one", d)
	}
}

// A state that no data point reaches (continued by Sweep) gets weight 0
// under LabelledEqual and 1/Ω under the paper's rule.
func TestWeightingEmptyFrom(t *testing.T) {
	cl := mustClasses(t, fig2)
	s := &Solution{Problem: Problem{Classes: cl, LabelledEqual: true}, States: []State{{From: []int{0, 1, 2, 3, 4}}, {}}}
	if pi := s.StateWeights(); pi[0] != 5.0/6 || pi[1] != 0 {
		t.Fatalf("LabelledEqual weights %v, want [5/6 0]", pi)
	}
	s.Problem.LabelledEqual = false
	if pi := s.StateWeights(); pi[0] != 0.5 || pi[1] != 0.5 {
		t.Fatalf("1/Ω weights %v, want [1/2 1/2]", pi)
	}
}
