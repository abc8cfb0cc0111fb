package replica

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// dataOf rebuilds the K×N data matrix of a class table built from data.
func dataOf(cl *Classes) *mat.Dense {
	xi := mat.NewDense(cl.K, cl.N, nil)
	for i := 0; i < cl.N; i++ {
		for k := 0; k < cl.K; k++ {
			xi.Set(k, i, float64(cl.SiteSign[i])*cl.Sigma[cl.Site[i]*cl.K+k])
		}
	}
	return xi
}

// FitStates, working on the N×M weights by mean-field iteration and least
// squares, recovers the states and state weights with which the
// class-reduced solver made those weights stationary: 2/3 and 1/3 for a
// state shared by two of three data points under LabelledEqual, and 1/Ω for
// the solution the paper's rule reaches from the same start (Ω = 1 there),
// each with a residual at the solver's tolerance.
func TestFitStatesRecoversWeights(t *testing.T) {
	ctx := context.Background()
	cl := threePoints(t, 400, 0.15)
	xi := dataOf(cl)
	start := KoskoBlocks(cl, &BAMMixture{Patterns: [][]float64{{1, 1, 0}, {0, 0, 1}}, Psi: []float64{0.5, 0.5}}, 1)
	for _, labelled := range []bool{true, false} {
		p := Problem{Classes: cl, Alpha: 0.8, Gamma: 0.1, LabelledEqual: labelled}
		sol, err := Solve(ctx, p, start)
		if err != nil {
			t.Fatal(err)
		}
		if labelled && len(sol.States) != 2 {
			t.Fatalf("LabelledEqual: Ω = %d, want 2", len(sol.States))
		}
		w, err := sol.Weights(320) // M = 320, α = 0.8; blocks of 160 units each
		if err != nil {
			t.Fatal(err)
		}
		fit, err := FitStates(ctx, xi, w, p.Gamma, FitStatesOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(fit.Pi) != len(sol.States) {
			t.Fatalf("LabelledEqual %v: FitStates found %d states (from %v), the solver %d", labelled, len(fit.Pi), fit.From, len(sol.States))
		}
		want := sol.StateWeights()
		for s := range fit.Pi {
			// match the state by its data points
			match := -1
			for w, st := range sol.States {
				if len(st.From) == len(fit.From[s]) && st.From[0] == fit.From[s][0] {
					match = w
				}
			}
			if match < 0 {
				t.Fatalf("LabelledEqual %v: FitStates state from %v is not a solver state", labelled, fit.From[s])
			}
			if math.Abs(fit.Pi[s]-want[match]) > 1e-6 {
				t.Fatalf("LabelledEqual %v: fitted π %v (from %v), solver's %v", labelled, fit.Pi, fit.From, want)
			}
			// the magnetisations are the solver's, site by site
			for i := 0; i < cl.N; i++ {
				v := float64(cl.SiteSign[i]) * sol.States[match].V[cl.Site[i]]
				if d := math.Abs(math.Abs(fit.V.At(s, i)) - math.Abs(v)); d > 1e-6 {
					t.Fatalf("site %d: |⟨v⟩| = %g, solver %g", i, fit.V.At(s, i), v)
				}
			}
		}
		if fit.Residual > 1e-6 {
			t.Fatalf("LabelledEqual %v: residual %g, want ≈ 0 at a solution", labelled, fit.Residual)
		}
		// the same weights at a γ twice as large are not stationary
		off, err := FitStates(ctx, xi, w, 2*p.Gamma, FitStatesOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !(off.Residual > 1e-3) {
			t.Fatalf("LabelledEqual %v: residual %g at 2γ, want a misfit far above the solver's tolerance", labelled, off.Residual)
		}
	}
}

func TestFitStatesBadInput(t *testing.T) {
	ctx := context.Background()
	xi := mat.NewDense(2, 4, []float64{1, 1, -1, 1, 1, -1, 1, 1})
	w := mat.NewDense(4, 3, nil)
	w.Apply(func(i, j int, _ float64) float64 { return 0.1 * float64(i-j) }, w)
	if _, err := FitStates(ctx, xi, mat.NewDense(5, 3, nil), 0.1, FitStatesOptions{}); err == nil {
		t.Fatal("no error for weights with 5 rows against N = 4")
	}
	if _, err := FitStates(ctx, xi, w, -1, FitStatesOptions{}); err == nil {
		t.Fatal("no error for gamma = -1")
	}
	if _, err := FitStates(ctx, xi, w, 0.1, FitStatesOptions{Merge: 1}); err == nil {
		t.Fatal("no error for Merge = 1")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := FitStates(cancelled, xi, w, 0.1, FitStatesOptions{}); err == nil {
		t.Fatal("no error with a cancelled context")
	}
}
