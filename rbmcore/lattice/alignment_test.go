package lattice

import (
	"math/rand/v2"
	"testing"
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
