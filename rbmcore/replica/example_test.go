package replica_test

import (
	"context"
	"fmt"

	"github.com/harmonium-rbm/harmonium/rbmcore/replica"
)

// The exact overlap of hierarchical data (Eq. 27) and its over-regularised
// threshold λ_max/K.
func ExampleTree_Overlap() {
	tr := replica.Tree{Children: []int{2, 3}, Flip: []float64{0.25, 0.2}}
	x, _ := tr.Overlap()
	cl, _ := tr.Classes()
	gc, _ := cl.Threshold()
	fmt.Printf("sibling %.2f, cousin %.2f, classes %d, γ_c = %.6f\n", x.At(0, 1), x.At(0, 3), cl.NumClasses(), gc)
	// Output: sibling 0.36, cousin 0.09, classes 32, γ_c = 0.331667
}

// The rank-1 solution below the onset of spontaneous activity: one block
// of identical hidden units, one thermodynamic state whose overlap with
// every data point is m (Fig. 4 parameters).
func ExampleSolveParamagnetic() {
	tr := replica.Tree{Children: []int{2, 3}, Flip: []float64{0.25, 0.2}}
	cl, _ := tr.Classes()
	sol, err := replica.SolveParamagnetic(context.Background(), replica.Problem{Classes: cl, Alpha: 0.8, Gamma: 0.25})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _, _ := sol.TreeOverlaps(tr)
	fmt.Printf("blocks %d, states %d, m = %.4f %.4f %.4f, residuals < 1e-10: %v\n",
		len(sol.Blocks), len(sol.States), m[0], m[1], m[2], sol.Res20 < 1e-10 && sol.Res21 < 1e-10)
	// Output: blocks 1, states 1, m = 0.1172 0.1172 0.1172, residuals < 1e-10: true
}

// Continuation in γ from above the threshold: the events of the phase
// diagram are bracketed to within 1e-3.
func ExampleSweep() {
	tr := replica.Tree{Children: []int{2, 3}, Flip: []float64{0.25, 0.2}}
	cl, _ := tr.Classes()
	ctx := context.Background()
	start, _ := replica.SolveParamagnetic(ctx, replica.Problem{Classes: cl, Alpha: 0.8, Gamma: 0.34})
	path, err := replica.Sweep(ctx, start, []float64{0.32, 0.30, 0.28}, replica.SweepOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range path.Events {
		if e.Kind == "zero" || e.Kind == "spontaneous" {
			fmt.Println(e.Kind, e.Detail)
		}
	}
	// Output:
	// zero W = 0: true → false
	// spontaneous top eigenvalue of Σ_µ w_iµ w_jµ > 1: false → true
}

// Fig. 4A in one sweep: up from the tree-symmetric BAM phase, the six leaf
// states lose stability (first transition); with the tree's symmetries
// Sweep switches to the branch with one state per group of siblings and
// continues through the second transition.
func ExampleSweep_symmetry() {
	tr := replica.Tree{Children: []int{2, 3}, Flip: []float64{0.25, 0.2}}
	cl, _ := tr.Classes()
	perms, _ := tr.Automorphisms()
	ctx := context.Background()
	bam, _, err := replica.BAMStart(ctx, replica.Problem{Classes: cl, Alpha: 0.8, Gamma: 0.03}, replica.BAMOptions{MaxMargin: true, Symmetry: perms})
	if err != nil {
		fmt.Println(err)
		return
	}
	path, err := replica.Sweep(ctx, bam, []float64{0.1, 0.2}, replica.SweepOptions{Symmetry: perms})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range path.Events {
		if e.Kind == "overlaps" {
			fmt.Printf("γ ≈ %.2f: %s\n", e.Lo, e.Detail)
		}
	}
	m, _, _ := path.Solutions[0].TreeOverlaps(tr)
	fmt.Printf("γ = 0.1: m0 = %.4f, m1 = %.4f, m2 = %.4f\n", m[0], m[1], m[2])
	// Output:
	// γ ≈ 0.07: distinct overlaps Q^ω_k 3 → 2
	// γ ≈ 0.15: distinct overlaps Q^ω_k 2 → 1
	// γ = 0.1: m0 = 0.3641, m1 = 0.3641, m2 = 0.1446
}

// The linear programme of Appendix J for the Fig. 4 data: admissible hidden
// sign patterns and the mixture maximising the paper's objective (Eq. J3).
func ExampleBAMLP() {
	tr := replica.Tree{Children: []int{2, 3}, Flip: []float64{0.25, 0.2}}
	cl, _ := tr.Classes()
	pats, _ := replica.AdmissiblePatterns(cl)
	mix, err := replica.BAMLP(cl, replica.BAMOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d admissible patterns, optimum Σ x∘y = %.2f\n", len(pats), mix.Objective)
	// Output: 32 admissible patterns, optimum Σ x∘y = 8.16
}

// Data points 0 and 1 agree on 85 % of the sites and share a thermodynamic
// state; data point 2 is orthogonal to both and its mean-field iteration
// ends paramagnetic. The paper's rule gives the one state the weight 1/Ω = 1;
// Problem.LabelledEqual gives it its share of the data points, 2/3, which
// changes the solution.
func ExampleProblem_labelledEqual() {
	cl, _ := replica.NewClasses([][]float64{{1, 1, 1}, {1, 1, -1}, {1, -1, 1}, {1, -1, -1}}, []float64{0.425, 0.425, 0.075, 0.075})
	start := replica.KoskoBlocks(cl, &replica.BAMMixture{Patterns: [][]float64{{1, 1, 0}, {0, 0, 1}}, Psi: []float64{0.5, 0.5}}, 1)
	for _, labelled := range []bool{false, true} {
		p := replica.Problem{Classes: cl, Alpha: 0.8, Gamma: 0.1, LabelledEqual: labelled}
		sol, err := replica.Solve(context.Background(), p, start)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("LabelledEqual %v: states reached from %v, weights %.3f, u(+++) = %.4f, residuals < 1e-10: %v\n",
			labelled, sol.States[0].From, sol.StateWeights(), sol.Blocks[0].U[0], sol.Res20 < 1e-10 && sol.Res21 < 1e-10)
	}
	// Output:
	// LabelledEqual false: states reached from [0 1], weights [1.000], u(+++) = 2.0807, residuals < 1e-10: true
	// LabelledEqual true: states reached from [0 1], weights [0.667], u(+++) = 2.3855, residuals < 1e-10: true
}
