package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Tempering runs parallel tempering: one Chains set per inverse temperature
// of an increasing ladder Betas (the last one is normally 1, the model),
// each with B chains. After every sweep of all replicas, neighbouring
// replicas propose to exchange the states of chain b (even pairs on even
// steps, odd pairs on odd steps), accepted with probability
// min(1, exp((β_k - β_{k+1})(E_k - E_{k+1}))), E the joint energy.
type Tempering struct {
	Betas    []float64
	Replicas []*Chains
	// Accepted and Attempted count swap proposals between replicas k and
	// k+1 (index k).
	Accepted, Attempted []int

	rng   *rand.Rand
	steps int
	trips walkers
}

// NewTempering returns a parallel-tempering sampler of m with b chains per
// inverse temperature. betas must be strictly increasing and positive.
func NewTempering(m *RBM, betas []float64, b int, seed uint64) (*Tempering, error) {
	if len(betas) < 2 {
		return nil, fmt.Errorf("rbm: NewTempering: need at least 2 inverse temperatures, got %d", len(betas))
	}
	for k, beta := range betas {
		if err := checkBeta(beta); err != nil {
			return nil, fmt.Errorf("rbm: NewTempering: betas[%d]: %w", k, err)
		}
		if k > 0 && beta <= betas[k-1] {
			return nil, fmt.Errorf("rbm: NewTempering: betas[%d] = %v is not larger than betas[%d] = %v", k, beta, k-1, betas[k-1])
		}
	}
	t := &Tempering{
		Betas:     append([]float64(nil), betas...),
		Accepted:  make([]int, len(betas)-1),
		Attempted: make([]int, len(betas)-1),
		rng:       NewRNG(seed, 1<<40),
	}
	for k, beta := range betas {
		c, err := NewChains(m, b, seed+uint64(k)*0x9e3779b97f4a7c15)
		if err != nil {
			return nil, err
		}
		c.Beta = beta
		t.Replicas = append(t.Replicas, c)
	}
	return t, nil
}

// Run performs n rounds (a sweep of every replica, then one swap pass),
// checking ctx between rounds and reporting progress at most every 100 ms.
// Like Chains.Run, it reads the model once, at the start.
func (t *Tempering) Run(ctx context.Context, n int, progress func(done, total int)) error {
	ctx = ContextOrDefault(ctx)
	halves := make([][2]half, len(t.Replicas))
	for k, c := range t.Replicas {
		hid, vis, err := c.prepare()
		if err != nil {
			return fmt.Errorf("rbm: tempering at beta %v: %w", c.Beta, err)
		}
		halves[k] = [2]half{hid, vis}
	}
	last := time.Now()
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		for k, c := range t.Replicas {
			if err := c.sweep(halves[k][0], halves[k][1]); err != nil {
				return fmt.Errorf("rbm: tempering at beta %v: %w", c.Beta, err)
			}
		}
		if err := t.swap(); err != nil {
			return err
		}
		if progress != nil && (i == n-1 || time.Since(last) > 100*time.Millisecond) {
			progress(i+1, n)
			last = time.Now()
		}
	}
	return nil
}

func (t *Tempering) swap() error {
	energies := make([][]float64, len(t.Replicas))
	for k, c := range t.Replicas {
		energies[k] = c.Energy()
		if err := checkFinite(energies[k], fmt.Sprintf("energy at beta %v", c.Beta)); err != nil {
			return err
		}
	}
	b := t.Replicas[0].Len()
	t.trips.ensure(len(t.Replicas), b)
	for k := t.steps % 2; k+1 < len(t.Replicas); k += 2 {
		lo, hi := t.Replicas[k], t.Replicas[k+1]
		d := t.Betas[k] - t.Betas[k+1]
		for r := 0; r < b; r++ {
			t.Attempted[k]++
			a := d * (energies[k][r] - energies[k+1][r])
			if a >= 0 || t.rng.Float64() < math.Exp(a) {
				t.Accepted[k]++
				swapRows(lo.V.RawRowView(r), hi.V.RawRowView(r))
				swapRows(lo.H.RawRowView(r), hi.H.RawRowView(r))
				t.trips.swap(k, r)
			}
		}
	}
	t.steps++
	t.trips.visit(t.steps)
	return nil
}

func swapRows(a, b []float64) {
	for i := range a {
		a[i], b[i] = b[i], a[i]
	}
}

// SwapRates returns Accepted/Attempted per neighbouring pair (NaN before any
// attempt).
func (t *Tempering) SwapRates() []float64 {
	r := make([]float64, len(t.Accepted))
	for k := range r {
		r[k] = float64(t.Accepted[k]) / float64(t.Attempted[k])
	}
	return r
}
