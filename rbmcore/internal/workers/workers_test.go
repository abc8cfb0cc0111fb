package workers

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestForRanges: every item is covered exactly once, ranges start on
// multiples of blk, there are min(GOMAXPROCS, blocks) of them with block
// counts differing by at most one, for one and several cores.
func TestForRanges(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct{ n, blk int }{{1, 4}, {7, 1}, {100, 4}, {100, 16}, {5, 16}, {33, 0}} {
			var mu sync.Mutex
			seen := make([]int, c.n)
			var sizes []int
			err := ForRanges(c.n, c.blk, func(i0, i1 int) error {
				mu.Lock()
				defer mu.Unlock()
				if i0%max(c.blk, 1) != 0 {
					t.Errorf("n=%d blk=%d: range starts at %d", c.n, c.blk, i0)
				}
				for i := i0; i < i1; i++ {
					seen[i]++
				}
				sizes = append(sizes, i1-i0)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("procs=%d n=%d blk=%d: item %d covered %d times", procs, c.n, c.blk, i, s)
				}
			}
			blk := max(c.blk, 1)
			blocks := (c.n + blk - 1) / blk
			if want := min(procs, blocks); len(sizes) != want {
				t.Errorf("procs=%d n=%d blk=%d: %d ranges, want %d", procs, c.n, c.blk, len(sizes), want)
			}
			lo, hi := c.n, 0
			for _, s := range sizes {
				lo, hi = min(lo, s), max(hi, s)
			}
			if hi-lo > 2*blk {
				t.Errorf("procs=%d n=%d blk=%d: unbalanced ranges %v", procs, c.n, c.blk, sizes)
			}
		}
	}
}

// TestForRangesErrors: the first failing range's error is returned, and a
// panic becomes an error.
func TestForRangesErrors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	boom := errors.New("boom")
	err := ForRanges(10, 1, func(i0, i1 int) error {
		if i0 == 0 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want boom", err)
	}
	err = ForRanges(10, 1, func(i0, i1 int) error {
		if i0 > 0 {
			panic("bad layer")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "bad layer") {
		t.Errorf("got %v, want the panic as an error", err)
	}
}

// TestSerialBLAS: with several ranges OpenBLAS is single-threaded inside
// and gets its thread count back afterwards (the pure-Go build has none).
func TestSerialBLAS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	before := blasThreads()
	var inside []int
	var mu sync.Mutex
	if err := ForRanges(4, 1, func(int, int) error {
		mu.Lock()
		inside = append(inside, blasThreads())
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range inside {
		if before > 1 && n != 1 {
			t.Errorf("BLAS threads inside ForRanges = %d, want 1 (before: %d)", n, before)
		}
	}
	if after := blasThreads(); after != before {
		t.Errorf("BLAS threads after ForRanges = %d, want %d", after, before)
	}
}
