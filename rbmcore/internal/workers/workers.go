// Package workers runs rbmcore's row-parallel work: a batch of rows (chains,
// AIS runs, minibatch rows) is split into one contiguous range per core, and
// each range runs its own matrix products and sampling in its own goroutine.
//
// During that time OpenBLAS (the openblas build) is made single-threaded:
// the goroutines are already the parallelism, and OpenBLAS's own worker
// threads, which keep spinning (with sched_yield) for a while after every
// call, would otherwise compete for the cores with the goroutines' sampling.
// A panic in a range's function is returned as an error (guard.Call), so
// code from a notebook cell running in a worker cannot end the process.
package workers

import (
	"runtime"
	"sync"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/guard"
)

// ForRanges splits the items [0, n) into at most GOMAXPROCS contiguous
// ranges [i0, i1) whose bounds are multiples of blk (except the last, n),
// with nearly equal numbers of blk-blocks, and runs fn on the ranges
// concurrently. It returns the error of the first range (in order) that
// failed. With one range fn runs in the calling goroutine and BLAS keeps
// its threads.
func ForRanges(n, blk int, fn func(i0, i1 int) error) error {
	if n <= 0 {
		return nil
	}
	blk = max(blk, 1)
	blocks := (n + blk - 1) / blk
	w := min(runtime.GOMAXPROCS(0), blocks)
	bound := func(k int) int { return min(k*blocks/w*blk, n) }
	if w == 1 {
		return guard.Call(func() error { return fn(0, n) })
	}
	defer serialBLAS()()
	errs := make([]error, w)
	run := func(k int) { errs[k] = guard.Call(func() error { return fn(bound(k), bound(k+1)) }) }
	// The calling goroutine takes the last range itself: one goroutine
	// less to start and wake per call, and the ranges then take equally
	// long (when it only waited, the range that ran on its core took ~15 %
	// longer than the other in the training epoch, which waited for it).
	var wg sync.WaitGroup
	for k := 0; k < w-1; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(k)
		}()
	}
	run(w - 1)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var (
	blasMu     sync.Mutex
	blasSerial int // number of ForRanges calls running
	blasSaved  int // OpenBLAS's thread count before the first of them
)

// serialBLAS makes OpenBLAS single-threaded until the returned function is
// called; nested and concurrent sections share one saved thread count.
func serialBLAS() (restore func()) {
	blasMu.Lock()
	if blasSerial == 0 {
		blasSaved = blasThreads()
		if blasSaved > 1 {
			setBLASThreads(1)
		}
	}
	blasSerial++
	blasMu.Unlock()
	return func() {
		blasMu.Lock()
		blasSerial--
		if blasSerial == 0 && blasSaved > 1 {
			setBLASThreads(blasSaved)
		}
		blasMu.Unlock()
	}
}
