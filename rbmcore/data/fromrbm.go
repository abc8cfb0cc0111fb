package data

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// FromRBMOptions configures FromRBM. The zero value runs 100 chains, 1000
// burn-in sweeps and 10 sweeps between recorded samples, from random stream
// 0, without progress reports.
type FromRBMOptions struct {
	// Chains is the number of independent chains (at most `samples` are
	// used); 0 means 100.
	Chains int
	// BurnIn is the number of sweeps every chain runs before its first
	// recorded sample; 0 means 1000 and a negative value none.
	BurnIn int
	// Thin is the number of sweeps between two recorded states of a chain;
	// 0 means 10.
	Thin int
	// Seed selects the random stream of the chains.
	Seed uint64
	// Progress, if not nil, receives (samples so far, samples) on the
	// caller's goroutine after every recording round.
	Progress func(done, total int)
}

// FromRBM draws `samples` visible configurations of m by block Gibbs
// sampling with rbm.Chains: opts.Chains independent chains (started from
// the visible layer's own fields) each run opts.BurnIn sweeps, then record
// their state every opts.Thin sweeps until enough samples are collected.
// The set's kind is the visible layer's (binary, spin, potts) or "real".
// ctx is checked between sweeps.
func FromRBM(ctx context.Context, m *rbm.RBM, samples int, opts FromRBMOptions) (*Set, error) {
	ctx = rbm.ContextOrDefault(ctx)
	chains, burnIn, thin, progress := opts.Chains, opts.BurnIn, opts.Thin, opts.Progress
	if chains == 0 {
		chains = 100
	}
	switch {
	case burnIn == 0:
		burnIn = 1000
	case burnIn < 0:
		burnIn = 0
	}
	if thin == 0 {
		thin = 10
	}
	if samples < 1 || chains < 1 || thin < 1 {
		return nil, fmt.Errorf("data: FromRBM: samples = %d, Chains = %d, Thin = %d: want samples ≥ 1 and Chains, Thin ≥ 0", samples, opts.Chains, opts.Thin)
	}
	if w := rbm.Width(m.Visible); samples > maxGenEntries/max(w, 1) {
		return nil, fmt.Errorf("data: FromRBM: %d samples of width %d exceed %d entries", samples, w, maxGenEntries)
	}
	c, err := rbm.NewChains(m, min(chains, samples), opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("data: FromRBM: %w", err)
	}
	if err := c.Run(ctx, burnIn, nil); err != nil {
		return nil, fmt.Errorf("data: FromRBM: burn-in: %w", err)
	}
	w := rbm.Width(m.Visible)
	x := mat.NewDense(samples, w, nil)
	for done := 0; done < samples; {
		if err := c.Run(ctx, thin, nil); err != nil {
			return nil, fmt.Errorf("data: FromRBM: after %d samples: %w", done, err)
		}
		for r := 0; r < c.Len() && done < samples; r++ {
			copy(x.RawRowView(done), c.V.RawRowView(r))
			done++
		}
		if progress != nil {
			progress(done, samples)
		}
	}
	kind, q := layerKind(m.Visible)
	return &Set{X: x, Kind: kind, Q: q, Source: fmt.Sprintf("FromRBM(%s)", m)}, nil
}

// layerKind is the kind of a set of a layer's states: potts for units with
// colours, binary or spin for discrete units with those values, real
// otherwise.
func layerKind(l rbm.Layer) (kind string, q int) {
	if q := l.States(); q > 1 {
		return KindPotts, q
	}
	d, ok := l.(rbm.Discrete)
	if !ok {
		return KindReal, 1
	}
	vals := d.UnitValues()
	col := mat.NewDense(len(vals), 1, nil)
	for r, v := range vals {
		col.Set(r, 0, v[0])
	}
	return inferKind(col), 1
}
