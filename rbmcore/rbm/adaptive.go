package rbm

import (
	"context"
	"fmt"
	"math"
	"time"
)

// walkers follows the states of a Tempering as they move along the ladder
// (a swap exchanges the walkers of two replicas), to measure round trips:
// the number of rounds a walker takes from the lowest β to β = 1 and back.
type walkers struct {
	id    [][]int // id[k][b]: the walker at replica k, chain b
	end   []int8  // per walker: last end visited (0 none, 1 bottom, 2 top)
	start []int   // per walker: the round it last left the bottom
	trips []int   // completed round-trip durations, in rounds
}

// ensure (re)labels the walkers when the ladder has k replicas of b chains
// and the labels do not match (the first swap, or after Adapt rebuilt the
// ladder).
func (w *walkers) ensure(k, b int) {
	if len(w.id) == k && (k == 0 || len(w.id[0]) == b) {
		return
	}
	w.id = make([][]int, k)
	for r := range w.id {
		w.id[r] = make([]int, b)
		for c := range w.id[r] {
			w.id[r][c] = r*b + c
		}
	}
	w.end, w.start = make([]int8, k*b), make([]int, k*b)
}

// swap records the exchange of chain b between replicas k and k+1.
func (w *walkers) swap(k, b int) { w.id[k][b], w.id[k+1][b] = w.id[k+1][b], w.id[k][b] }

// visit updates the ends reached after round step.
func (w *walkers) visit(step int) {
	top := len(w.id) - 1
	for _, id := range w.id[0] {
		if w.end[id] == 2 {
			w.trips = append(w.trips, step-w.start[id])
		}
		if w.end[id] != 1 {
			w.start[id] = step
		}
		w.end[id] = 1
	}
	for _, id := range w.id[top] {
		if w.end[id] == 1 {
			w.end[id] = 2
		}
	}
}

// RoundTrips returns the durations (in rounds of Run) of the round trips
// completed since the ladder was last set: a walker (a state moving along
// the ladder by swaps) going from the lowest β to β = 1 and back. Few or
// no round trips in a long run means the ladder does not connect the
// temperatures.
func (t *Tempering) RoundTrips() []int { return append([]int(nil), t.trips.trips...) }

// MeanRoundTrip returns the mean of RoundTrips (NaN when there is none).
func (t *Tempering) MeanRoundTrip() float64 {
	if len(t.trips.trips) == 0 {
		return math.NaN()
	}
	s := 0
	for _, d := range t.trips.trips {
		s += d
	}
	return float64(s) / float64(len(t.trips.trips))
}

// ResetStats sets the swap counters and round-trip records to zero (the
// ladder and the states are kept).
func (t *Tempering) ResetStats() {
	clear(t.Accepted)
	clear(t.Attempted)
	t.trips = walkers{}
}

// AdaptiveLadder configures Tempering.Adapt. The zero value of every field
// is a usable default.
type AdaptiveLadder struct {
	// Target is the swap acceptance aimed at between every pair of
	// neighbouring temperatures (default 0.3).
	Target float64
	// Rounds is the length of the burn-in during which the ladder adapts
	// (default 2000 rounds); the ladder is frozen afterwards.
	Rounds int
	// Window is the number of rounds between ladder updates (default 100).
	Window int
	// MaxBetas bounds the number of temperatures (default 64).
	MaxBetas int
}

// Adapt runs the burn-in of adaptive parallel tempering: every Window
// rounds it measures the swap acceptance A_k of each neighbouring pair and
// places a new ladder, between the same lowest β and β = 1, with as many
// temperatures as needed for every pair to reach Target. The placement
// uses the thermodynamic length of the ladder: for Gaussian energy
// distributions, A = erfc(Δβ σ_E / 2) (Katzgraber et al. 2006 discuss this
// acceptance-based feedback), so ℓ_k = 2 erfc⁻¹(A_k) measures each interval
// in units where equal spacing gives equal acceptance; the new temperatures
// split the total length L into ⌈L/ℓ*⌉ equal parts, ℓ* = 2 erfc⁻¹(Target),
// interpolating linearly in β inside each old interval. Replicas at new
// temperatures start from the states of the nearest old one. At the end
// the ladder is frozen and the counters reset, so later runs report the
// acceptance and round trips of the final ladder. ctx is checked between
// rounds; progress (if not nil) reports rounds done.
func (t *Tempering) Adapt(ctx context.Context, opts AdaptiveLadder, progress func(done, total int)) error {
	ctx = ContextOrDefault(ctx)
	if opts.Target == 0 {
		opts.Target = 0.3
	}
	if opts.Rounds == 0 {
		opts.Rounds = 2000
	}
	if opts.Window == 0 {
		opts.Window = 100
	}
	if opts.MaxBetas == 0 {
		opts.MaxBetas = 64
	}
	switch {
	case !(opts.Target > 0 && opts.Target < 1):
		return fmt.Errorf("rbm: Tempering.Adapt: Target = %v, want an acceptance in (0, 1)", opts.Target)
	case opts.Rounds < 1 || opts.Window < 1:
		return fmt.Errorf("rbm: Tempering.Adapt: Rounds = %d, Window = %d, want both ≥ 1", opts.Rounds, opts.Window)
	case opts.MaxBetas < 2:
		return fmt.Errorf("rbm: Tempering.Adapt: MaxBetas = %d, want ≥ 2", opts.MaxBetas)
	}
	last := time.Now()
	for done := 0; done < opts.Rounds; {
		n := min(opts.Window, opts.Rounds-done)
		t.ResetStats()
		if err := t.Run(ctx, n, nil); err != nil {
			return err
		}
		done += n
		if err := t.setLadder(ladderFor(t.Betas, t.Accepted, t.Attempted, opts.Target, opts.MaxBetas)); err != nil {
			return fmt.Errorf("rbm: Tempering.Adapt: %w", err)
		}
		if progress != nil && (done == opts.Rounds || time.Since(last) > 100*time.Millisecond) {
			progress(done, opts.Rounds)
			last = time.Now()
		}
	}
	t.ResetStats()
	return nil
}

// ladderFor returns the ladder placing equal thermodynamic lengths between
// betas[0] and betas[last], given the swap counts measured on betas.
func ladderFor(betas []float64, acc, att []int, target float64, maxBetas int) []float64 {
	k := len(betas) - 1
	cum := make([]float64, k+1)
	for i := 0; i < k; i++ {
		a := 1.0
		if att[i] > 0 {
			// No acceptance in the window still means a finite length.
			a = math.Max(float64(acc[i]), 0.5) / float64(att[i])
		}
		cum[i+1] = cum[i] + math.Max(2*math.Erfcinv(math.Min(a, 1)), 1e-3)
	}
	total := cum[k]
	n := int(math.Ceil(total / (2 * math.Erfcinv(target))))
	n = max(1, min(n, maxBetas-1))
	out := make([]float64, n+1)
	out[0], out[n] = betas[0], betas[k]
	i := 0
	for j := 1; j < n; j++ {
		c := total * float64(j) / float64(n)
		for cum[i+1] < c {
			i++
		}
		out[j] = betas[i] + (c-cum[i])/(cum[i+1]-cum[i])*(betas[i+1]-betas[i])
	}
	return out
}

// setLadder replaces the ladder by betas (same ends), giving each new
// replica a copy of the states of the old replica nearest in β.
func (t *Tempering) setLadder(betas []float64) error {
	old := t.Replicas
	m := old[0].Model
	b := old[0].Len()
	reps := make([]*Chains, len(betas))
	for k, beta := range betas {
		near := 0
		for j, c := range old {
			if math.Abs(c.Beta-beta) < math.Abs(old[near].Beta-beta) {
				near = j
			}
		}
		c, err := NewChains(m, b, t.rng.Uint64())
		if err != nil {
			return err
		}
		c.Beta = beta
		c.Products = old[near].Products
		if err := c.SetStates(old[near].V, old[near].H); err != nil {
			return err
		}
		reps[k] = c
	}
	t.Betas, t.Replicas = betas, reps
	t.Accepted, t.Attempted = make([]int, len(betas)-1), make([]int, len(betas)-1)
	t.trips = walkers{}
	return nil
}
