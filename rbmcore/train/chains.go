package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/bernoulli"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// blockRows is the number of chains (rows) that share one random stream.
// Streams belong to fixed row blocks, never to goroutines, so a run depends
// only on its seed, not on the number of cores (workers.ForRanges splits
// rows at block bounds). Blocks of 2 split the usual 100 chains 50/50
// over two cores (blocks of 4 would give 52/48).
const blockRows = 2

// paddedPCG keeps each generator's state on its own cache lines: the
// states of neighbouring blocks are updated by different cores.
type paddedPCG struct {
	_   [64]byte
	pcg rand.PCG
	_   [64]byte
}

// sampler is the run state of CD and PCD: their block-Gibbs sweeps
// (sweep), with one random stream per block of blockRows chains.
type sampler struct {
	persistent bool // PCD; CD restarts the chains from the minibatch
	m          *rbm.RBM
	p          *products
	all        *phase // the minibatch and the chains stacked (see startGibbs)
	// CD and PCD: the chains (CD: the minibatch rows). neg holds the
	// visible states, their hidden inputs and means (the statistics), h the
	// hidden states and vin the visible inputs. PCD's chain state is the
	// pair (v, h), h drawn given v after the previous update's last
	// half-sweep; see sweep.
	neg    *phase
	h, vin *buf
	pcgs   []*paddedPCG
	rngs   []*rand.Rand
	// Certified float32 visible inputs (products with vis32): the visible
	// layer's sigmoid form, the bounds (refreshed before every update) and
	// the number of straddling inputs recomputed in float64.
	visForm    sigmoidForm
	visCert    *bernoulli.Certificate
	recomputed atomic.Int64
}

// startGibbs builds the run state of CD (persistent false: the chains are
// the minibatch's rows) and PCD (persistent: n chains) for r. The
// minibatch and the chains are stacked in one set of buffers, so that the
// weight gradient is a single product over both.
func startGibbs(r *run, n int, persistent bool) (*sampler, error) {
	m, p, batch := r.m, r.prod, r.o.Batch
	nv, nh := p.nv, p.nh
	all := newPhase(nil, batch+n, nv, nh, r.o.Float32, 0)
	all.fuseGradTerms(m.Hidden)
	pos, neg := all.slice(0, batch, 1), all.slice(batch, batch+n, -1)
	r.pos, r.terms = pos, []term{all.term()}
	s := &sampler{persistent: persistent, m: m, p: p, all: all, neg: neg}
	s.h, s.vin = newBuf(n, nh, p.w32 != nil), newBuf(n, nv, p.w32 != nil)
	if p.w32 != nil && !p.all32 {
		s.visForm = m.Visible.(sigmoidForm)
		s.visCert = bernoulli.NewCertificate(nh, p.absRow, make([]float64, nv), 1, true)
	}
	s.pcgs = make([]*paddedPCG, (n+blockRows-1)/blockRows)
	s.rngs = make([]*rand.Rand, len(s.pcgs))
	for k := range s.pcgs {
		s.pcgs[k] = new(paddedPCG)
		s.pcgs[k].pcg.Seed(r.o.Seed, 0x7a11<<32|uint64(k))
		s.rngs[k] = rand.New(&s.pcgs[k].pcg)
	}
	if persistent {
		if err := s.startChains(); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	return s, nil
}

func (s *sampler) negative() *phase { return s.neg }

// advance runs the sweeps for the minibatch pos (see sweep); CD's chains
// are the minibatch's rows.
func (s *sampler) advance(ctx context.Context, k int, pos *phase) error {
	if !s.persistent {
		s.neg.rows = pos.rows
	}
	pos.v.sync32(0, pos.rows)
	return s.sweep(ctx, k, pos, s.all)
}

// startChains starts the persistent chains from independent samples of the
// visible layer alone (its fields only: the independent-site model after a
// data-based initialisation) and draws their hidden states given them.
func (s *sampler) startChains() error {
	rows := s.neg.rows
	zero := make([]float64, len(s.neg.v.f))
	err := s.eachBlock(0, rows, func(b0, b1 int, rng *rand.Rand) error {
		return s.m.Visible.Sample(rng, zero[b0*s.neg.v.cols:b1*s.neg.v.cols], s.neg.v.rows(b0, b1), 1)
	})
	if err != nil {
		return fmt.Errorf("initial chain states: %w", err)
	}
	s.neg.v.sync32(0, rows)
	if err := s.p.allInputs(s.neg.v, rows, false, s.p.all32, s.neg.in); err != nil {
		return fmt.Errorf("initial chain states: %w", err)
	}
	if err := s.sampleHidden(s.neg.in, 0, rows); err != nil {
		return fmt.Errorf("initial chain states: %w", err)
	}
	return nil
}

// eachBlock runs fn on the row blocks of [r0, r1) (r0 a block bound) in
// order, each with its block's random stream.
func (s *sampler) eachBlock(r0, r1 int, fn func(b0, b1 int, rng *rand.Rand) error) error {
	for b0 := r0; b0 < r1; b0 += blockRows {
		if err := fn(b0, min(b0+blockRows, r1), s.rngs[b0/blockRows]); err != nil {
			return err
		}
	}
	return nil
}

// sampleHidden draws rows [r0, r1) of h given the hidden inputs in.
func (s *sampler) sampleHidden(in *buf, r0, r1 int) error {
	return s.eachBlock(r0, r1, func(b0, b1 int, rng *rand.Rand) error {
		if err := s.m.Hidden.Sample(rng, in.rows(b0, b1), s.h.rows(b0, b1), 1); err != nil {
			return fmt.Errorf("sampling the hidden layer: %w", err)
		}
		return nil
	})
}

// sweep advances the chains by k block-Gibbs sweeps and sets their hidden
// inputs and means (the model statistics) and those of the minibatch pos,
// whose rows (pos.rows of them, float32 shadow current) must be loaded;
// all is the stacked buffer of pos and the chains (pos first, see
// startGibbs).
//
// A sweep samples v | h, then h | v. The hidden inputs v·W of the last
// half-sweep serve both the statistics ⟨h|v⟩ and the draw of h, so an
// update costs 2k products (sklearn's BernoulliRBM does the same). This is
// exact PCD, not a stale reuse: both conditionals of every sweep use the
// current parameters, and the chain state carried from one update to the
// next is the pair (v, h) (a Gibbs sweep of the joint distribution started
// from it leaves the current model invariant). Reusing the inputs of the
// statistics for the next update's h | v instead would draw h with the
// weights before the update.
//
// CD starts from the minibatch (its inputs computed first) and draws h from
// them; PCD starts from the persistent (v, h), and its first product v·W
// covers the minibatch and the chains at once. The sampling runs on row
// ranges of the chains and the products on column ranges of their outputs
// (products.inputs), with a barrier between. ctx is checked before each
// sweep, when (v, h) are consistent.
func (s *sampler) sweep(ctx context.Context, k int, pos, all *phase) error {
	m, neg, p := s.m, s.neg, s.p
	rows, cd := neg.rows, !s.persistent
	if cd {
		if err := p.allInputs(pos.v, pos.rows, false, p.all32, pos.in); err != nil {
			return err
		}
		if err := workers.ForRanges(rows, blockRows, func(r0, r1 int) error {
			copy(neg.v.rows(r0, r1), pos.v.rows(r0, r1))
			return s.sampleHidden(pos.in, r0, r1)
		}); err != nil {
			return err
		}
	}
	cert := s.certifyVisible() // W and the fields are fixed during the sweeps
	for step := 0; step < k; step++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.h.sync32(0, rows)
		if err := p.allInputs(s.h, rows, true, p.all32 || cert != nil, s.vin); err != nil {
			return err
		}
		if err := workers.ForRanges(rows, blockRows, func(r0, r1 int) error {
			err := s.eachBlock(r0, r1, func(b0, b1 int, rng *rand.Rand) error {
				return s.sampleVisible(rng, b0, b1, cert)
			})
			neg.v.sync32(r0, r1)
			return err
		}); err != nil {
			return err
		}
		var err error
		if step == 0 && !cd {
			err = p.allInputs(all.v, all.capacity(), false, p.all32, all.in)
		} else {
			err = p.allInputs(neg.v, rows, false, p.all32, neg.in)
		}
		if err != nil {
			return err
		}
		last := step == k-1
		if err := workers.ForRanges(rows, blockRows, func(r0, r1 int) error {
			if !last || !cd {
				if err := s.sampleHidden(neg.in, r0, r1); err != nil {
					return err
				}
			}
			if last {
				neg.means(m.Hidden, r0, r1)
				pos.means(m.Hidden, r0*pos.rows/rows, r1*pos.rows/rows)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// sigmoidForm is implemented by the binary and spin layers of rbm.
type sigmoidForm interface {
	SigmoidForm(beta float64) (theta []float64, scale, lo, hi float64)
}

// certifyVisible returns the bounds of the float32 visible inputs for the
// current weights and fields (bernoulli.NewCertificate: k = nh terms,
// binary or spin hidden states), or nil when the visible inputs are not
// certified: not a vis32 run, or weights too large for float32.
func (s *sampler) certifyVisible() *bernoulli.Certificate {
	if s.visCert == nil {
		return nil
	}
	big := 0.0
	for _, a := range s.p.absRow {
		big = max(big, a) // NaN stays NaN
	}
	if !(big < 0x1p100) {
		return nil
	}
	theta, scale, _, _ := s.visForm.SigmoidForm(1)
	s.visCert.Set(s.p.nh, s.p.absRow, theta, scale, true)
	return s.visCert
}

// sampleVisible draws the visible states of the chains [b0, b1) (one
// block, with its stream rng) given their visible inputs: from the float32
// inputs with cert (recomputing in float64 the inputs whose bound
// straddles a decision, so the samples are those of the float64 inputs),
// else from the float64 ones.
func (s *sampler) sampleVisible(rng *rand.Rand, b0, b1 int, cert *bernoulli.Certificate) error {
	v := s.neg.v.rows(b0, b1)
	if cert == nil {
		if err := s.m.Visible.Sample(rng, s.vin.rows(b0, b1), v, 1); err != nil {
			return fmt.Errorf("sampling the visible layer: %w", err)
		}
		return nil
	}
	theta, scale, lo, hi := s.visForm.SigmoidForm(1)
	bc := *cert
	bc.Exact = func(r, u int) float64 { return s.p.visibleInput(s.h, b0+r, u) }
	bernoulli.Sample(rng, theta, s.vin.s[b0*s.vin.cols:b1*s.vin.cols], v, scale, lo, hi, &bc)
	s.recomputed.Add(int64(bc.Recomputed))
	return nil
}

// streamStates returns the states of the chains' random streams.
func (s *sampler) streamStates() ([][]byte, error) {
	out := make([][]byte, len(s.pcgs))
	for k, p := range s.pcgs {
		b, err := p.pcg.MarshalBinary()
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

// setStreamStates restores states saved by streamStates.
func (s *sampler) setStreamStates(states [][]byte) error {
	if len(states) != len(s.pcgs) {
		return fmt.Errorf("%d random streams, want %d", len(states), len(s.pcgs))
	}
	for k, b := range states {
		if err := s.pcgs[k].pcg.UnmarshalBinary(b); err != nil {
			return err
		}
	}
	return nil
}

// allStates enumerates the configurations of a discrete (rbm.Discrete)
// layer such as binary, spin or Potts.
func allStates(l rbm.Layer) (*mat.Dense, error) {
	n, q := l.Len(), l.States()
	d, ok := l.(rbm.Discrete)
	if !ok {
		return nil, fmt.Errorf("train: Exact needs a discrete (binary, spin or Potts) visible layer, not %s", l.Kind())
	}
	vals := d.UnitValues()
	base := len(vals)
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
			copy(row[i*q:(i+1)*q], vals[c%base])
			c /= base
		}
	}
	return x, nil
}

func (s *sampler) swapRate() float64 { return math.NaN() }

func (s *sampler) chainStates() [][]float64 {
	if s.persistent {
		return [][]float64{s.neg.v.f}
	}
	return nil
}

func (s *sampler) hiddenStates() [][]float64 {
	if s.persistent {
		return [][]float64{s.h.f}
	}
	return nil
}
