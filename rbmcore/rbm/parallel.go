package rbm

import (
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
)

// blockRows is the number of chains (rows) that share one random stream.
// Streams belong to fixed row blocks, not to goroutines, so results depend
// only on the seed, never on the number of cores. Blocks are small so that
// the rows split evenly over the cores (workers.ForRanges splits at block
// bounds).
const blockRows = 4

// paddedPCG keeps each generator's state on its own cache lines: the
// states of neighbouring blocks are updated by different cores, and sharing
// a line would make every draw a cache miss (false sharing).
type paddedPCG struct {
	_   [64]byte
	pcg rand.PCG
	_   [64]byte
}

// streams returns one independent generator per block of rows.
func streams(seed uint64, rows int, salt uint64) []*rand.Rand {
	n := (rows + blockRows - 1) / blockRows
	r := make([]*rand.Rand, n)
	for k := range r {
		p := new(paddedPCG)
		p.pcg.Seed(seed, salt<<32|uint64(k))
		r[k] = rand.New(&p.pcg)
	}
	return r
}

// forRanges splits rows into one contiguous range of whole blocks per core
// and runs fn on each range concurrently (workers.ForRanges: BLAS calls in
// fn are single-threaded, a panic is returned as an error). A range does
// its own matrix products and sampling, with no barrier in between.
func forRanges(rows int, fn func(r0, r1 int) error) error {
	return workers.ForRanges(rows, blockRows, fn)
}

// eachBlock runs fn on the row blocks of [r0, r1) (r0 a block bound) in
// order, each with its block's generator.
func eachBlock(r0, r1 int, rngs []*rand.Rand, fn func(b0, b1 int, rng *rand.Rand) error) error {
	for b0 := r0; b0 < r1; b0 += blockRows {
		if err := fn(b0, min(b0+blockRows, r1), rngs[b0/blockRows]); err != nil {
			return err
		}
	}
	return nil
}

// forBlocks runs fn on every row block [r0, r1) with that block's
// generator, the blocks spread over the cores (forRanges), and returns the
// first error.
func forBlocks(rows int, rngs []*rand.Rand, fn func(r0, r1 int, rng *rand.Rand) error) error {
	return forRanges(rows, func(r0, r1 int) error { return eachBlock(r0, r1, rngs, fn) })
}
