package lattice

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkPropose measures one full proposal (no early exit) at a random
// site: the cost of a Monte Carlo step that is not rejected early.
func BenchmarkPropose(b *testing.B) {
	m := model(b)
	rng := rand.New(rand.NewPCG(1, 1))
	tr, err := NewTracker(m, randomSequence(rng), DefaultTarget)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tr.Propose(rng.IntN(Length), uint8(rng.IntN(Q))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnumerate measures the enumeration of the 103 346 structures.
func BenchmarkEnumerate(b *testing.B) {
	for b.Loop() {
		if _, err := Enumerate(context.Background(), EnumerateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
