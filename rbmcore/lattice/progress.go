package lattice

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Progress describes how far a long computation (Enumerate, Sample) is.
type Progress struct {
	// Done and Total count the units of work (search subtrees, sequences).
	Done, Total int
	// Elapsed is the time since the computation started.
	Elapsed time.Duration
}

// Fraction returns Done/Total in [0, 1] (1 when Total is 0).
func (p Progress) Fraction() float64 {
	if p.Total <= 0 {
		return 1
	}
	return float64(p.Done) / float64(p.Total)
}

// Rate returns the units of work done per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done) / p.Elapsed.Seconds()
}

// ETA returns the expected remaining time at the current rate (0 before any
// work is done or after all of it).
func (p Progress) ETA() time.Duration {
	if p.Done <= 0 || p.Done >= p.Total {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.Total-p.Done) / float64(p.Done))
}

// String formats the progress as "42.0% (4200/10000, 350.0/s, ETA 17s)".
func (p Progress) String() string {
	return fmt.Sprintf("%.1f%% (%d/%d, %.1f/s, ETA %v)", 100*p.Fraction(), p.Done, p.Total,
		p.Rate(), p.ETA().Round(time.Second))
}

// waitWithProgress waits for wg, calling report (when non-nil) with the
// counts from count about ten times a second and once at the end. It
// returns early neither on cancellation nor otherwise: the workers check
// ctx themselves, so wg finishes soon after a cancellation.
func waitWithProgress(ctx context.Context, wg *sync.WaitGroup, report func(Progress), count func() (done, total int)) {
	start := time.Now()
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			if report != nil && ctx.Err() == nil {
				d, t := count()
				report(Progress{Done: d, Total: t, Elapsed: time.Since(start)})
			}
			return
		case <-tick.C:
			if report != nil {
				d, t := count()
				report(Progress{Done: d, Total: t, Elapsed: time.Since(start)})
			}
		}
	}
}
