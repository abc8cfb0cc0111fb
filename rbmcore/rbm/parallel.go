package rbm

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/guard"
)

// blockRows is the number of chains that share one random stream. Streams
// belong to fixed row blocks, not to goroutines, so results depend only on
// the seed, never on the number of cores.
const blockRows = 16

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

// forBlocks runs f on every row block [r0, r1) with that block's generator,
// spread over GOMAXPROCS goroutines, and returns the first error. A panic in
// f (e.g. in a Layer implemented by the user) is returned as an error, on
// one core as on several, instead of ending the process.
func forBlocks(rows int, rngs []*rand.Rand, fn func(r0, r1 int, rng *rand.Rand) error) error {
	f := func(r0, r1 int, rng *rand.Rand) error {
		return guard.Call(func() error { return fn(r0, r1, rng) })
	}
	n := len(rngs)
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for k := 0; k < n; k++ {
			if err := f(k*blockRows, min((k+1)*blockRows, rows), rngs[k]); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if err := f(k*blockRows, min((k+1)*blockRows, rows), rngs[k]); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return first
}
