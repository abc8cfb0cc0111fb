package train

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// A Method estimates the model average of the log-likelihood gradient
// (the negative phase). The methods are CD, PCD, PT, PTT, Exact and
// ExactHidden; a nil Method given to Fit is PCD{}. The zero value of each
// is a usable default. The interface's other methods are unexported: these types are
// its only implementations.
type Method interface {
	// String names the method ("CD", "PCD", …) in messages and legends.
	String() string
	// sweeps returns the Gibbs sweeps per update before the Schedule.
	sweeps() int
	// validate checks the settings without a model.
	validate() error
	// gibbs reports whether the method runs block-Gibbs sweeps on chains
	// stacked with the minibatch (CD, PCD): those may certify float32
	// visible inputs (products.vis32).
	gibbs() bool
	// start builds the method's run state for r (the products and the
	// resolved options are set): the data phase r.pos, for CD and PCD the
	// product of the stacked phases r.terms, and the chains.
	start(r *run) (chains, error)
}

// chains is the run state of a Method: it provides the model phase of
// every update.
type chains interface {
	// negative returns the model phase: visible states, hidden inputs and
	// means (with weights for Exact).
	negative() *phase
	// advance sets the model phase for the minibatch pos, whose visible
	// rows are loaded, with k Gibbs sweeps, and the statistics of pos.
	advance(ctx context.Context, k int, pos *phase) error
	// swapRate is the acceptance rate of replica swaps (NaN without).
	swapRate() float64
	// chainStates returns views of the visible states of the persistent
	// chains (PCD: one slice, PT: one per β, ascending; PTT: the current
	// model's), nil without persistent chains.
	chainStates() [][]float64
	// hiddenStates returns views of the persistent hidden states a
	// checkpoint keeps (PCD), nil otherwise.
	hiddenStates() [][]float64
	// streamStates and setStreamStates save and restore the random
	// streams a checkpoint keeps (CD, PCD; none for the others).
	streamStates() ([][]byte, error)
	setStreamStates(states [][]byte) error
}

// sweepsOrDefault resolves a method's K (0: one sweep).
func sweepsOrDefault(k int) int {
	if k == 0 {
		return 1
	}
	return k
}

// checkCounts validates a method's K and Chains.
func checkCounts(method string, k, chains int) error {
	if k < 0 {
		return fmt.Errorf("train: %s.K = %d, want ≥ 1 (0: 1)", method, k)
	}
	if chains < 0 {
		return fmt.Errorf("train: %s.Chains = %d, want ≥ 1 (0: Options.Batch)", method, chains)
	}
	return nil
}

// chainsOrBatch resolves a method's Chains (0: the minibatch size).
func chainsOrBatch(chains int, r *run) int {
	if chains == 0 {
		return r.o.Batch
	}
	return chains
}

// CD is contrastive divergence CD-k (Hinton 2002): the chains restart from
// the minibatch and run K block-Gibbs sweeps.
type CD struct {
	// K is the number of Gibbs sweeps per update (0: 1); the Schedule may
	// change it per epoch.
	K int
}

// String returns "CD".
func (CD) String() string    { return "CD" }
func (c CD) sweeps() int     { return sweepsOrDefault(c.K) }
func (c CD) validate() error { return checkCounts("CD", c.K, 0) }
func (CD) gibbs() bool       { return true }
func (CD) start(r *run) (chains, error) {
	return startGibbs(r, r.o.Batch, false)
}

// PCD is persistent contrastive divergence (Tieleman 2008): Chains
// persistent chains advance K block-Gibbs sweeps per update.
type PCD struct {
	// K is the number of Gibbs sweeps per update (0: 1); the Schedule may
	// change it per epoch.
	K int
	// Chains is the number of persistent chains (0: Options.Batch).
	Chains int
}

// String returns "PCD".
func (PCD) String() string    { return "PCD" }
func (c PCD) sweeps() int     { return sweepsOrDefault(c.K) }
func (c PCD) validate() error { return checkCounts("PCD", c.K, c.Chains) }
func (PCD) gibbs() bool       { return true }
func (c PCD) start(r *run) (chains, error) {
	return startGibbs(r, chainsOrBatch(c.Chains, r), true)
}

// PT is PCD with parallel tempering: Chains chains at each inverse
// temperature of Betas run K sweeps, then replicas at neighbouring
// temperatures swap states (rbm.Tempering); the statistics come from the
// β = 1 replica. A run resumed from a checkpoint restarts the replicas'
// random streams from the seed.
type PT struct {
	// K is the number of Gibbs sweeps per update (0: 1); the Schedule may
	// change it per epoch.
	K int
	// Chains is the number of chains per temperature (0: Options.Batch).
	Chains int
	// Betas is the increasing ladder of inverse temperatures, ending at 1
	// (nil: 0.25, 0.5, 0.75, 1).
	Betas []float64
}

// String returns "PT".
func (PT) String() string { return "PT" }
func (c PT) sweeps() int  { return sweepsOrDefault(c.K) }
func (c PT) validate() error {
	if err := checkCounts("PT", c.K, c.Chains); err != nil {
		return err
	}
	if n := len(c.Betas); n > 0 && c.Betas[n-1] != 1 {
		return fmt.Errorf("train: PT.Betas = %v: the last inverse temperature must be 1", c.Betas)
	}
	return nil
}
func (PT) gibbs() bool { return false }
func (c PT) start(r *run) (chains, error) {
	betas := c.Betas
	if len(betas) == 0 {
		betas = []float64{0.25, 0.5, 0.75, 1}
	}
	n := chainsOrBatch(c.Chains, r)
	pt, err := rbm.NewTempering(r.m, betas, n, r.o.Seed^0x7e39)
	if err != nil {
		return nil, fmt.Errorf("train: PT: %w", err)
	}
	r.pos = newPhase(nil, r.o.Batch, r.prod.nv, r.prod.nh, r.o.Float32, 1)
	return &tempering{pt: pt, p: r.prod, neg: newPhase(nil, n, r.prod.nv, r.prod.nh, r.o.Float32, -1)}, nil
}

// tempering is the run state of PT.
type tempering struct {
	pt  *rbm.Tempering
	p   *products
	neg *phase
}

func (t *tempering) negative() *phase { return t.neg }

func (t *tempering) advance(ctx context.Context, k int, pos *phase) error {
	if err := pos.fill(t.p); err != nil {
		return err
	}
	if err := t.pt.Run(ctx, k, nil); err != nil {
		return err
	}
	top := t.pt.Replicas[len(t.pt.Replicas)-1]
	copy(t.neg.v.f, top.V.RawMatrix().Data)
	return t.neg.fill(t.p)
}

func (t *tempering) swapRate() float64 {
	acc, tried := 0, 0
	for k := range t.pt.Accepted {
		acc += t.pt.Accepted[k]
		tried += t.pt.Attempted[k]
	}
	if tried == 0 {
		return math.NaN()
	}
	return float64(acc) / float64(tried)
}

func (t *tempering) chainStates() [][]float64 {
	var out [][]float64
	for _, c := range t.pt.Replicas {
		out = append(out, c.V.RawMatrix().Data)
	}
	return out
}

func (t *tempering) hiddenStates() [][]float64             { return nil }
func (t *tempering) streamStates() ([][]byte, error)       { return nil, nil }
func (t *tempering) setStreamStates(states [][]byte) error { return noStreams(states) }

// noStreams accepts the saved streams of a method that keeps none.
func noStreams(states [][]byte) error {
	if len(states) != 0 {
		return fmt.Errorf("%d random streams, the method keeps none", len(states))
	}
	return nil
}

// PTT is parallel trajectory tempering: PCD whose chains of the current
// model exchange states with chains of earlier models of the same run
// (copies stored along the training trajectory), the models taking the
// place of the temperatures of PT. The early models are close to
// independent sites and mix easily; swaps carry their states up to the
// current model. A swap of the states x, y of neighbouring models a, b is
// accepted with probability min(1, exp(F_a(x) + F_b(y) − F_a(y) − F_b(x))),
// F the free energies. The statistics come from the current model's
// chains. A run resumed from a checkpoint restarts its trajectory from the
// current model.
type PTT struct {
	// K is the number of Gibbs sweeps per update (0: 1); the Schedule may
	// change it per epoch.
	K int
	// Chains is the number of chains per model (0: Options.Batch).
	Chains int
	// Models is the largest number of stored models (0: 10). When it is
	// exceeded, the stored model whose swaps with its upper neighbour are
	// accepted most often (the most redundant) is dropped; the oldest is
	// always kept.
	Models int
	// Acceptance is the swap acceptance between the current model and the
	// newest stored one below which a copy of the current model is stored
	// (0: 0.3).
	Acceptance float64
}

// String returns "PTT".
func (PTT) String() string { return "PTT" }
func (c PTT) sweeps() int  { return sweepsOrDefault(c.K) }
func (c PTT) validate() error {
	if err := checkCounts("PTT", c.K, c.Chains); err != nil {
		return err
	}
	if c.Models < 0 || !(c.Acceptance >= 0 && c.Acceptance < 1) {
		return fmt.Errorf("train: PTT.Models = %d (want ≥ 1, 0: 10), PTT.Acceptance = %v (want in (0, 1), 0: 0.3)", c.Models, c.Acceptance)
	}
	return nil
}
func (PTT) gibbs() bool { return false }
func (c PTT) start(r *run) (chains, error) {
	if c.Models == 0 {
		c.Models = 10
	}
	if c.Acceptance == 0 {
		c.Acceptance = 0.3
	}
	c.Chains = chainsOrBatch(c.Chains, r)
	tr, err := newTrajectory(c, r.m, r.o.Seed)
	if err != nil {
		return nil, fmt.Errorf("train: PTT: %w", err)
	}
	r.pos = newPhase(nil, r.o.Batch, r.prod.nv, r.prod.nh, r.o.Float32, 1)
	tr.p, tr.neg = r.prod, newPhase(nil, c.Chains, r.prod.nv, r.prod.nh, r.o.Float32, -1)
	return tr, nil
}

// Exact replaces the chains by the exact model average over every visible
// configuration (binary, spin or Potts visible layers with at most 2^20
// configurations): deterministic gradient ascent on the exact likelihood,
// for tests and small models.
type Exact struct{}

// String returns "Exact".
func (Exact) String() string  { return "Exact" }
func (Exact) sweeps() int     { return 1 }
func (Exact) validate() error { return nil }
func (Exact) gibbs() bool     { return false }
func (Exact) start(r *run) (chains, error) {
	states, err := allStates(r.m.Visible)
	if err != nil {
		return nil, err
	}
	rows, _ := states.Dims()
	r.pos = newPhase(nil, r.o.Batch, r.prod.nv, r.prod.nh, r.o.Float32, 1)
	return &exactAverage{m: r.m, p: r.prod, states: states,
		neg: newPhase(states.RawMatrix().Data, rows, r.prod.nv, r.prod.nh, r.o.Float32, -1)}, nil
}

// maxExactStates bounds the enumeration of Exact.
const maxExactStates = 1 << 20

// exactAverage is the run state of Exact: every visible state, weighted by
// its probability under the current model.
type exactAverage struct {
	m       *rbm.RBM
	p       *products
	states  *mat.Dense
	weights []float64
	neg     *phase
}

func (e *exactAverage) negative() *phase { return e.neg }

func (e *exactAverage) advance(ctx context.Context, k int, pos *phase) error {
	if err := pos.fill(e.p); err != nil {
		return err
	}
	f := e.m.FreeEnergy(e.states)
	if e.weights == nil {
		e.weights = make([]float64, len(f))
		e.neg.coef = e.weights
	}
	mn := math.Inf(1)
	for _, x := range f {
		mn = math.Min(mn, x)
	}
	tot := 0.0
	for i, x := range f {
		e.weights[i] = math.Exp(mn - x)
		tot += e.weights[i]
	}
	for i := range e.weights {
		e.weights[i] /= tot
	}
	return e.neg.fill(e.p)
}

func (e *exactAverage) swapRate() float64                     { return math.NaN() }
func (e *exactAverage) chainStates() [][]float64              { return nil }
func (e *exactAverage) hiddenStates() [][]float64             { return nil }
func (e *exactAverage) streamStates() ([][]byte, error)       { return nil, nil }
func (e *exactAverage) setStreamStates(states [][]byte) error { return noStreams(states) }
