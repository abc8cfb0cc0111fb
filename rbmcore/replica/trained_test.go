package replica

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"gonum.org/v1/gonum/mat"
)

// Assign recovers the block of every unit of weights built from a solution,
// with columns permuted and signs flipped, and Predict then rebuilds them.
func TestAssign(t *testing.T) {
	set, err := data.Hierarchical(300, fig4.Children, fig4.Flip, 5)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ClassesFromData(set.X)
	if err != nil {
		t.Fatal(err)
	}
	// two blocks with different weights (not a solution: Assign and Predict
	// only read the blocks)
	s := &Solution{Problem: Problem{Classes: cl, Alpha: 0.8, Gamma: 0.1}, Blocks: []Block{
		{Frac: 0.5, U: make([]float64, len(cl.F))}, {Frac: 0.5, U: make([]float64, len(cl.F))}}}
	for j := range cl.F {
		p := cl.Pattern(j)
		s.Blocks[0].U[j] = p[0] + p[1] + p[2] + p[3] + p[4] + p[5]
		s.Blocks[1].U[j] = 2*(p[0]+p[1]+p[2]) - (p[3] + p[4] + p[5])
	}
	m := 40
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([]int, m)
	w := mat.NewDense(cl.N, m, nil)
	for mu := 0; mu < m; mu++ {
		want[mu] = rng.IntN(2)
		sign := 1.0
		if rng.IntN(2) == 0 {
			sign = -1
		}
		for i := 0; i < cl.N; i++ {
			x := float64(cl.SiteSign[i]) * s.Blocks[want[mu]].U[cl.Site[i]] / float64(cl.N)
			w.Set(i, mu, sign*x*(1+0.1*rng.NormFloat64()))
		}
	}
	got, err := s.Assign(w)
	if err != nil {
		t.Fatal(err)
	}
	for mu := range want {
		if got[mu] != want[mu] {
			t.Fatalf("unit %d assigned to block %d, built from %d", mu, got[mu], want[mu])
		}
	}
	pred, err := s.Predict(w, got)
	if err != nil {
		t.Fatal(err)
	}
	var d mat.Dense
	d.Sub(pred, w)
	if r := mat.Norm(&d, 2) / mat.Norm(w, 2); r > 0.15 {
		t.Fatalf("prediction from the assignment is %.3g off (noise 0.1)", r)
	}
	if _, err := s.Assign(mat.NewDense(cl.N+1, 2, nil)); err == nil {
		t.Fatal("Assign accepted weights of the wrong height")
	}
}

// KoskoCosineOf against a hand computation and against the solution's
// KoskoCosine on the weights the solution predicts.
func TestKoskoCosineOf(t *testing.T) {
	// ξ = (1, 1), w = (1, 0): ξ̂ = +1, Kosko (1, 1), cosine 1/√2; w = (−1, 0):
	// ξ̂ = −1, Kosko (−1, −1), cosine 1/√2 again (the sign follows the unit).
	xi := mat.NewDense(1, 2, []float64{1, 1})
	for _, w := range []*mat.Dense{mat.NewDense(2, 1, []float64{1, 0}), mat.NewDense(2, 1, []float64{-1, 0})} {
		c, err := KoskoCosineOf(xi, w)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c-1/math.Sqrt2) > 1e-12 {
			t.Fatalf("cosine %g, want 1/√2", c)
		}
	}
	// A BAM solution's own weights: the same cosine as Solution.KoskoCosine
	// (the signs of the hidden inputs with the data clamped are those of
	// the states in the BAM phase).
	set, err := data.Hierarchical(400, fig4.Children, fig4.Flip, 7)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ClassesFromData(set.X)
	if err != nil {
		t.Fatal(err)
	}
	sol, _, err := BAMStart(context.Background(), Problem{Classes: cl, Alpha: 0.8, Gamma: 0.01}, BAMOptions{MaxMargin: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := sol.KoskoCosine()
	if err != nil {
		t.Fatal(err)
	}
	w, err := sol.Weights(2000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := KoskoCosineOf(set.X, w)
	if err != nil {
		t.Fatal(err)
	}
	// Weights rounds the block sizes to whole units: agreement to ~1/M.
	if math.Abs(got-want) > 2e-3 || want > 0.9999 {
		t.Fatalf("KoskoCosineOf %.5f, Solution.KoskoCosine %.5f", got, want)
	}
	// random weights are far from the Kosko form
	rng := rand.New(rand.NewPCG(3, 4))
	r := mat.NewDense(400, 200, nil)
	for i := 0; i < 400; i++ {
		for mu := 0; mu < 200; mu++ {
			r.Set(i, mu, rng.NormFloat64())
		}
	}
	if c, err := KoskoCosineOf(set.X, r); err != nil || c > 0.3 {
		t.Fatalf("random weights: cosine %.3f (%v), want < 0.3", c, err)
	}
	if _, err := KoskoCosineOf(set.X, mat.NewDense(3, 2, nil)); err == nil {
		t.Fatal("KoskoCosineOf accepted weights of the wrong height")
	}
}
