package lattice_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

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

// Count the features of Table II (Tubiana, Cocco & Monasson 2019, §IV): a
// weight matrix whose first column sits on sites 3 and 26, in contact in
// S_A, and whose second column sits on sites 1 and 27, which are not.
func ExampleCountFeatures() {
	st, err := lattice.Enumerate(context.Background(), lattice.EnumerateOptions{})
	if err != nil {
		panic(err)
	}
	cm := st.ContactMap(lattice.DefaultTarget)
	w := mat.NewDense(lattice.Length*lattice.Q, 2, nil)
	k, d := strings.IndexByte(lattice.Alphabet, 'K'), strings.IndexByte(lattice.Alphabet, 'D')
	w.Set(2*lattice.Q+k, 0, 1)     // site 3 (index 2) favours lysine,
	w.Set(25*lattice.Q+k, 0, -0.5) // site 26 disfavours it,
	w.Set(25*lattice.Q+d, 0, 0.5)  // and favours aspartate
	w.Set(0*lattice.Q+k, 1, 1)
	w.Set(26*lattice.Q+k, 1, 1)
	c, err := lattice.CountFeatures(w, &cm)
	if err != nil {
		panic(err)
	}
	c3, _ := lattice.Charge(w, 0, 2)
	c26, _ := lattice.Charge(w, 0, 25)
	pair, _ := lattice.ChanceLocalised(&cm)
	fmt.Printf("%d pair features, %d in contact (chance %.3f); charges %+.0f on site 3, %+.0f on site 26\n",
		c.Pairs, c.PairsInContact, pair, c3, c26)
	// Output:
	// 2 pair features, 1 in contact (chance 0.080); charges +1 on site 3, -1 on site 26
}

// Write an alignment one sequence per line and read it back; a bad line is
// an error that names the file and the line.
func ExampleReadSequences() {
	dir, err := os.MkdirTemp("", "alignment")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "alignment.txt")
	text := "ACDEFGHIKLMNPQRSTVWYACDEFGH\n\nCCCCCCCCCCCCCCCCCCCCCCCCCCC\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		panic(err)
	}
	seqs, err := lattice.ReadSequences(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(seqs), seqs[1])
	if err := os.WriteFile(path, []byte(text+"ACDE\n"), 0o644); err != nil {
		panic(err)
	}
	_, err = lattice.ReadSequences(path)
	fmt.Println(strings.TrimPrefix(err.Error(), path))
	// Output:
	// 2 CCCCCCCCCCCCCCCCCCCCCCCCCCC
	// , line 4: lattice: ParseSequence: "ACDE" has 4 letters, want 27
}

// The share of a feature's squared weights on the charged amino acids: a
// feature on K at site 3 and E at site 26 (an electrostatic pair, as in
// Fig. 5) plus a smaller weight on A at site 10.
func ExampleResidueShare() {
	w := mat.NewDense(lattice.Length*lattice.Q, 1, nil)
	at := func(site int, aa byte) int { return (site-1)*lattice.Q + strings.IndexByte(lattice.Alphabet, aa) }
	w.Set(at(3, 'K'), 0, 1)
	w.Set(at(26, 'E'), 0, -1)
	w.Set(at(10, 'A'), 0, 0.5)
	f, err := lattice.ResidueShare(w, 0, lattice.Charged)
	if err != nil {
		panic(err)
	}
	fmt.Printf("charged share %.2f (even weights: %.2f)\n", f, float64(len(lattice.Charged))/float64(lattice.Q))
	// Output: charged share 0.89 (even weights: 0.20)
}

// The single mutants of two sequences that differ at one site: 2·27·19
// mutants, less the two sequences themselves, less the 18 sequences that
// hold neither residue at that site and are mutants of both.
func ExampleSingleMutants() {
	a, err := lattice.ParseSequence("ACDEFGHIKLMNPQRSTVWYACDEFGH")
	if err != nil {
		panic(err)
	}
	b := a
	b[0] = a[1]
	mutants := lattice.SingleMutants([]lattice.Sequence{a, b})
	fmt.Println(len(mutants), mutants[0])
	// Output:
	// 1006 AADEFGHIKLMNPQRSTVWYACDEFGH
}
