package lattice_test

import (
	"context"
	"fmt"

	"github.com/harmonium-rbm/harmonium/rbmcore/lattice"
)

// Enumerate the compact structures, then check where a designed sequence
// folds and how specifically (Tubiana, Cocco & Monasson 2019, Eq. 20 and
// §III.C).
func Example() {
	ctx := context.Background()
	st, err := lattice.Enumerate(ctx, lattice.EnumerateOptions{})
	if err != nil {
		panic(err)
	}
	m, err := lattice.NewModel(st, lattice.ModelOptions{}) // Miyazawa–Jernigan, T = 1
	if err != nil {
		panic(err)
	}
	v, err := lattice.ParseSequence("KDEYAALKSKLCDCYRGDCDGIKLRRD") // from testdata/example.fasta
	if err != nil {
		panic(err)
	}
	s, p, err := m.Fold(v)
	if err != nil {
		panic(err)
	}
	e, _ := m.Energy(v, s)
	fmt.Printf("%d structures; %v folds in %d (S_A: %v), E = %.2f, P_nat = %.4f\n",
		st.Len(), v, s, s == lattice.DefaultTarget, e, p)
	// Output:
	// 103346 structures; KDEYAALKSKLCDCYRGDCDGIKLRRD folds in 20706 (S_A: true), E = -100.93, P_nat = 0.9954
}
