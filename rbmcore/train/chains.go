package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Methods understood by Trainer.Method.
const (
	// CD is contrastive divergence CD-k: chains restart from the minibatch.
	CD = "cd"
	// PCD is persistent contrastive divergence (Tieleman 2008): Chains
	// persistent chains advance k Gibbs sweeps per update.
	PCD = "pcd"
	// PT is PCD with parallel tempering: Chains chains at each inverse
	// temperature of Betas, k sweeps then replica swaps between neighbouring
	// temperatures per update; the statistics come from the β = 1 replica.
	PT = "pt"
	// Exact replaces the chains by the exact model average over every
	// visible configuration (binary, spin or Potts visible layers with at
	// most 2^20 configurations): deterministic gradient ascent on the exact
	// likelihood, for tests and small models.
	Exact = "exact"
)

// maxExactStates bounds the enumeration of Exact.
const maxExactStates = 1 << 20

// sampler provides the model phase of an update, on the engine's Gibbs
// chains (rbm.Chains).
type sampler struct {
	method string
	m      *rbm.RBM
	rng    *rand.Rand
	chains int
	p      *products
	// CD and PCD: the chains' visible states and buffers. The trainer runs
	// these sweeps itself so that the products can run in float32 (the
	// layers' own samplers draw the states); PT uses rbm.Tempering.
	v, h, in, vin []float64
	pt            *rbm.Tempering
	cd            map[int]*rbm.Chains
	// Exact: every visible state and its probability
	states  *mat.Dense
	weights []float64
}

func newSampler(t *Trainer, m *rbm.RBM, p *products, rng *rand.Rand) (*sampler, error) {
	s := &sampler{method: t.Method, m: m, p: p, rng: rng, chains: t.Chains}
	var err error
	// Persistent chains start from independent samples of the visible layer
	// alone (its fields only: the independent-site model after a data-based
	// initialisation).
	switch t.Method {
	case CD:
	case PCD:
		s.resize(s.chains)
		// Independent samples of the visible layer alone (zero input).
		if e := m.Visible.Sample(rng, make([]float64, len(s.v)), s.v, 1); e != nil {
			err = fmt.Errorf("initial chain states: %w", e)
		}
	case PT:
		betas := t.Betas
		if len(betas) == 0 {
			betas = []float64{0.25, 0.5, 0.75, 1}
		}
		if betas[len(betas)-1] != 1 {
			return nil, fmt.Errorf("train: Betas = %v: the last inverse temperature must be 1", betas)
		}
		s.pt, err = rbm.NewTempering(m, betas, s.chains, t.Seed^0x7e39)
	case Exact:
		s.states, err = allStates(m.Visible)
	default:
		return nil, fmt.Errorf("train: unknown Method %q (want cd, pcd, pt or exact)", t.Method)
	}
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return s, nil
}

// allStates enumerates the configurations of a binary, spin or Potts layer.
func allStates(l rbm.Layer) (*mat.Dense, error) {
	n, q := l.Len(), l.States()
	vals := map[string][]float64{"binary": {0, 1}, "spin": {-1, 1}}[l.Kind()]
	base := len(vals)
	if l.Kind() == "potts" {
		base = q
	}
	if base == 0 {
		return nil, fmt.Errorf("train: Exact needs a binary, spin or Potts visible layer, not %s", l.Kind())
	}
	count := 1
	for i := 0; i < n; i++ {
		count *= base
		if count > maxExactStates {
			return nil, fmt.Errorf("train: Exact: %s(%d) has more than %d configurations", l.Kind(), n, maxExactStates)
		}
	}
	w := rbm.Width(l)
	x := mat.NewDense(count, w, nil)
	for s := 0; s < count; s++ {
		row, c := x.RawRowView(s), s
		for i := 0; i < n; i++ {
			d := c % base
			c /= base
			if l.Kind() == "potts" {
				row[i*q+d] = 1
			} else {
				row[i] = vals[d]
			}
		}
	}
	return x, nil
}

// modelPhase subtracts the model statistics from acc, using k Gibbs sweeps
// (CD: from the minibatch batch of b rows).
func (s *sampler) modelPhase(ctx context.Context, acc *accumulator, k int, batch []float64, b int) error {
	m := s.m
	switch s.method {
	case CD:
		nv := rbm.Width(m.Visible)
		if len(s.v) != b*nv {
			s.resize(b)
		}
		copy(s.v, batch)
		if err := s.sweeps(ctx, k); err != nil {
			return err
		}
		acc.phase(s.v, b, nil, -1, nil)
	case PCD:
		// k sweeps of the persistent chains, then the statistics on their
		// new state (Tieleman 2008).
		if err := s.sweeps(ctx, k); err != nil {
			return err
		}
		acc.phase(s.v, s.chains, nil, -1, nil)
	case PT:
		if err := s.pt.Run(ctx, k, nil); err != nil {
			return err
		}
		top := s.pt.Replicas[len(s.pt.Replicas)-1]
		acc.phase(top.V.RawMatrix().Data, s.chains, nil, -1, nil)
	case Exact:
		f := m.FreeEnergy(s.states)
		if s.weights == nil {
			s.weights = make([]float64, len(f))
		}
		mn := math.Inf(1)
		for _, x := range f {
			mn = math.Min(mn, x)
		}
		tot := 0.0
		for i, x := range f {
			s.weights[i] = math.Exp(mn - x)
			tot += s.weights[i]
		}
		for i := range s.weights {
			s.weights[i] /= tot
		}
		rows, _ := s.states.Dims()
		acc.phase(s.states.RawMatrix().Data, rows, s.weights, -1, nil)
	}
	return nil
}

// swapRate returns the overall acceptance rate of replica swaps (NaN
// without PT).
func (s *sampler) swapRate() float64 {
	if s.pt == nil {
		return math.NaN()
	}
	acc, tried := 0, 0
	for k := range s.pt.Accepted {
		acc += s.pt.Accepted[k]
		tried += s.pt.Attempted[k]
	}
	if tried == 0 {
		return math.NaN()
	}
	return float64(acc) / float64(tried)
}

// chainMean returns the mean visible value of the β = 1 chains (NaN for CD
// and Exact).
func (s *sampler) chainMean() float64 {
	states := s.chainStates()
	if len(states) == 0 {
		return math.NaN()
	}
	v := states[len(states)-1]
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// resize allocates the chain buffers for b chains.
func (s *sampler) resize(b int) {
	nv, nh := rbm.Width(s.m.Visible), rbm.Width(s.m.Hidden)
	s.v, s.h = make([]float64, b*nv), make([]float64, b*nh)
	s.in, s.vin = make([]float64, b*nh), make([]float64, b*nv)
}

// sweeps advances the chains in s.v by k block-Gibbs sweeps h | v, v | h,
// drawing the states with the layers' own samplers (the products go
// through s.p, hence float32 when asked for).
func (s *sampler) sweeps(ctx context.Context, k int) error {
	m := s.m
	rows := len(s.v) / rbm.Width(m.Visible)
	for step := 0; step < k; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.p.hiddenInput(s.v, rows, s.in)
		if err := m.Hidden.Sample(s.rng, s.in, s.h, 1); err != nil {
			return fmt.Errorf("sampling the hidden layer: %w", err)
		}
		s.p.visibleInput(s.h, rows, s.vin)
		if err := m.Visible.Sample(s.rng, s.vin, s.v, 1); err != nil {
			return fmt.Errorf("sampling the visible layer: %w", err)
		}
	}
	return nil
}

// chainStates returns views of the visible states of the persistent chains
// (PCD: one slice, PT: one per β, ascending).
func (s *sampler) chainStates() [][]float64 {
	switch {
	case s.v != nil && s.method == PCD:
		return [][]float64{s.v}
	case s.pt != nil:
		var out [][]float64
		for _, c := range s.pt.Replicas {
			out = append(out, c.V.RawMatrix().Data)
		}
		return out
	}
	return nil
}
