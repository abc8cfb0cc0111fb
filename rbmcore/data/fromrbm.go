package data

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// FromRBM draws `samples` visible configurations of m by block Gibbs
// sampling with rbm.Chains: `chains` independent chains (started from the
// visible layer's own fields) each run burnIn sweeps, then record their
// state every thin sweeps until enough samples are collected. The set's kind
// is the visible layer's (binary, spin, potts) or "real". ctx is checked
// between sweeps; progress, if not nil, receives (samples so far, samples).
func FromRBM(ctx context.Context, m *rbm.RBM, samples, chains, burnIn, thin int, seed uint64, progress func(done, total int)) (*Set, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if samples < 1 || chains < 1 || burnIn < 0 || thin < 1 {
		return nil, fmt.Errorf("data: FromRBM: samples = %d, chains = %d, burnIn = %d, thin = %d (want ≥1, ≥1, ≥0, ≥1)", samples, chains, burnIn, thin)
	}
	c, err := rbm.NewChains(m, min(chains, samples), seed)
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
