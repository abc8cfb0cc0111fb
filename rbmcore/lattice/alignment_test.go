package lattice

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestOneHot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seqs := []Sequence{randomSequence(rng), randomSequence(rng)}
	x := OneHot(seqs)
	if r, c := x.Dims(); r != 2 || c != Length*Q {
		t.Fatalf("dims %d×%d, want 2×%d", r, c, Length*Q)
	}
	for r, v := range seqs {
		for i := 0; i < Length; i++ {
			for a := 0; a < Q; a++ {
				want := 0.0
				if int(v[i]) == a {
					want = 1
				}
				if x.At(r, i*Q+a) != want {
					t.Fatalf("row %d site %d state %d: %v, want %v", r, i, a, x.At(r, i*Q+a), want)
				}
			}
		}
	}
}

// OneHotTo overwrites every entry of a reused matrix, and of a view of its
// first rows, with what OneHot gives, and refuses a destination of the
// wrong shape.
func TestOneHotTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	seqs := make([]Sequence, 5)
	for r := range seqs {
		seqs[r] = randomSequence(rng)
	}
	buf := mat.NewDense(3, Length*Q, nil)
	for r := 0; r < 3; r++ { // stale contents of an earlier block
		for c := 0; c < Length*Q; c++ {
			buf.Set(r, c, 7)
		}
	}
	for k, part := range [][]Sequence{seqs[3:], seqs[:3]} {
		dst := buf.Slice(0, len(part), 0, Length*Q).(*mat.Dense)
		if err := OneHotTo(dst, part); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(dst, OneHot(part)) {
			t.Errorf("block of %d sequences: OneHotTo differs from OneHot", len(part))
		}
		if k == 0 && buf.At(2, 0) != 7 {
			t.Error("OneHotTo wrote outside the view of two rows it was given")
		}
	}
	for _, dst := range []*mat.Dense{mat.NewDense(4, Length*Q, nil), mat.NewDense(5, Length*Q-1, nil)} {
		if err := OneHotTo(dst, seqs); err == nil || !strings.Contains(err.Error(), "want 5×540") {
			r, c := dst.Dims()
			t.Errorf("%d×%d destination: error %v", r, c, err)
		}
	}
}

func TestShuffleSites(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	seqs := make([]Sequence, 200)
	for r := range seqs {
		seqs[r] = randomSequence(rng)
		seqs[r][4] = seqs[r][3] // a perfectly correlated pair of sites
	}
	orig := append([]Sequence(nil), seqs...)
	a, b := ShuffleSites(seqs, 1), ShuffleSites(seqs, 1)
	for r := range seqs {
		if seqs[r] != orig[r] {
			t.Fatal("ShuffleSites changed its input")
		}
		if a[r] != b[r] {
			t.Fatal("ShuffleSites is not deterministic for one seed")
		}
	}
	// Each site keeps its amino-acid counts.
	for i := 0; i < Length; i++ {
		var ca, co [Q]int
		for r := range seqs {
			ca[a[r][i]]++
			co[orig[r][i]]++
		}
		if ca != co {
			t.Fatalf("site %d: counts %v after shuffling, %v before", i, ca, co)
		}
	}
	// The correlation between sites 3 and 4 is gone: they agree by chance
	// (1/20 of the rows, ≈ 10 ± 3 of 200), not in every row.
	same := 0
	for r := range a {
		if a[r][3] == a[r][4] {
			same++
		}
	}
	if same > 40 {
		t.Errorf("sites 3 and 4 agree in %d of 200 shuffled rows, want about 10", same)
	}
}

func TestReadSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	want := []Sequence{randomSequence(rng), randomSequence(rng), randomSequence(rng)}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	// Blank lines, surrounding spaces and lower case are accepted.
	text := want[0].String() + "\n\n  " + strings.ToLower(want[1].String()) + "  \n" + want[2].String()
	if err := os.WriteFile(good, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	readsBack(t, good, want)
	for _, c := range []struct{ name, text, msg string }{
		{"short.txt", want[0].String() + "\n" + "ACDE\n", "short.txt, line 2"},
		{"letter.txt", "\n\n" + strings.Repeat("B", Length), "letter.txt, line 3"},
		{"long.txt", want[0].String() + "\n" + strings.Repeat("A", 1<<17), "long.txt, line 2"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSequences(path); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.msg)
		}
	}
	if _, err := ReadSequences(filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: error %v, want one naming it", err)
	}
}

func TestWriteSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	want := make([]Sequence, 50)
	for k := range want {
		want[k] = randomSequence(rng)
	}
	path := filepath.Join(t.TempDir(), "alignment.txt")
	if err := WriteSequences(path, want); err != nil {
		t.Fatal(err)
	}
	readsBack(t, path, want)
	// A sequence with a state outside the alphabet is an error and leaves the file as it was.
	bad := append([]Sequence(nil), want[:3]...)
	bad[2][5] = uint8(Q)
	if err := WriteSequences(path, bad); err == nil || !strings.Contains(err.Error(), "sequence 2") {
		t.Fatalf("error %v, want one naming sequence 2", err)
	}
	if again, err := ReadSequences(path); err != nil || len(again) != len(want) {
		t.Fatalf("after a failed write: %d sequences, error %v; want the %d written before", len(again), err, len(want))
	}
}

// readsBack checks that ReadSequences reads want from path.
func readsBack(t *testing.T, path string, want []Sequence) {
	t.Helper()
	got, err := ReadSequences(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d sequences, want %d", path, len(got), len(want))
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("%s: sequence %d is %s, want %s", path, k, got[k], want[k])
		}
	}
}

// TestSingleMutants checks SingleMutants against the count of a sequence's
// neighbours (Length·(Q−1)) and the neighbours two sequences share at
// Hamming distance d: Q−2 at d = 1 (the other residues at the differing
// site), 2 at d = 2 (one differing site set to the other sequence's
// residue), none at d ≥ 3; a sequence of seqs is never its own mutant, and
// the mutants come sorted, each once.
func TestSingleMutants(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	v := randomSequence(rng)
	one := Length * (Q - 1)
	for d, want := range map[int]int{0: one, 1: 2*one - (Q - 2) - 2, 2: 2*one - 2, 3: 2 * one, 5: 2 * one} {
		w := v
		for i := 0; i < d; i++ {
			w[3*i] = uint8((int(w[3*i]) + 1 + rng.IntN(Q-1)) % Q)
		}
		seqs := []Sequence{v, w} // at d = 0, one sequence given twice
		got := SingleMutants(seqs)
		if len(got) != want {
			t.Errorf("Hamming distance %d: %d mutants, want %d", d, len(got), want)
		}
		for k, u := range got {
			if k > 0 && compareSequences(got[k-1], u) >= 0 {
				t.Fatalf("distance %d: %v then %v: not in increasing order, or repeated", d, got[k-1], u)
			}
			near := len(seqs) * Length
			for _, s := range seqs {
				diff := 0
				for i := range s {
					if s[i] != u[i] {
						diff++
					}
				}
				near = min(near, diff)
			}
			if near != 1 {
				t.Fatalf("distance %d: %v is %d sites from the nearest sequence, want 1", d, u, near)
			}
		}
	}
	if got := SingleMutants(nil); len(got) != 0 {
		t.Errorf("no sequences: %d mutants", len(got))
	}
}
