package train

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// ExactHidden replaces the chains by the exact model average computed by
// enumerating the hidden layer instead of the visible one: for a hidden
// state h the visible units are independent, so
//
//	P(h) ∝ exp(−U_h(h) + Σ_i Γ_i(I_i(h))),   I(h) = W h,
//
// and the negative statistics are ⟨v hᵀ⟩ = Σ_h P(h) E[v|h] hᵀ, ⟨v⟩ and ⟨h⟩
// likewise. This is exact minibatch gradient ascent for a wide visible
// layer and a few hidden units: with one ±1 hidden unit and no fields the
// model term of w_i is tanh(w_i) (Harsh, Tubiana, Cocco & Monasson 2020,
// Eq. 32), with two it is their Eq. 48. The only noise left is that of the
// minibatches.
//
// Both layers must have a field as their only parameter (binary, spin or
// Potts units: their gradients are the phase means, which E[v|h] gives
// exactly), and the hidden layer at most 2^20 configurations. The cost
// per update is that of 2^M visible inputs and CGFs (M hidden units).
type ExactHidden struct{}

// String returns "ExactHidden".
func (ExactHidden) String() string  { return "ExactHidden" }
func (ExactHidden) sweeps() int     { return 1 }
func (ExactHidden) validate() error { return nil }
func (ExactHidden) gibbs() bool     { return false }
func (ExactHidden) start(r *run) (chains, error) {
	for _, side := range []struct {
		name string
		l    rbm.Layer
	}{{"visible", r.m.Visible}, {"hidden", r.m.Hidden}} {
		if !fieldOnly(side.l) {
			return nil, fmt.Errorf("train: ExactHidden needs layers whose only parameter is a field (binary, spin, Potts); the %s layer is %s", side.name, side.l.Kind())
		}
	}
	d, ok := r.m.Hidden.(rbm.Discrete)
	if !ok {
		return nil, fmt.Errorf("train: ExactHidden needs a discrete hidden layer, not %s", r.m.Hidden.Kind())
	}
	count := 1
	for i := 0; i < r.m.Hidden.Len(); i++ {
		if count *= len(d.UnitValues()); count > maxExactStates {
			return nil, fmt.Errorf("train: ExactHidden: hidden layer %s(%d) has more than %d configurations", r.m.Hidden.Kind(), r.m.Hidden.Len(), maxExactStates)
		}
	}
	states, err := allStates(r.m.Hidden)
	if err != nil {
		return nil, fmt.Errorf("train: ExactHidden: %w", err)
	}
	rows, nh := states.Dims()
	r.pos = newPhase(nil, r.o.Batch, r.prod.nv, r.prod.nh, r.o.Float32, 1)
	e := &hiddenAverage{m: r.m, p: r.prod, states: states, weights: make([]float64, rows),
		energy: make([]float64, rows), cgf: make([]float64, rows),
		neg: newPhase(nil, rows, r.prod.nv, nh, r.o.Float32, -1)}
	e.neg.coef = e.weights
	// The hidden "means" of the model phase are the enumerated states.
	copy(e.neg.hm.f, states.RawMatrix().Data)
	return e, nil
}

// hiddenAverage is the run state of ExactHidden: every hidden state,
// weighted by its probability under the current model, with the visible
// conditional means as the phase's visible rows.
type hiddenAverage struct {
	m       *rbm.RBM
	p       *products
	states  *mat.Dense // every hidden configuration, one per row
	weights []float64  // P(h) of each row (the phase's coef)
	energy  []float64  // U_h(h) of each row
	cgf     []float64  // Σ_i Γ_i(I_i(h)) of each row
	neg     *phase
}

func (e *hiddenAverage) negative() *phase { return e.neg }

func (e *hiddenAverage) advance(ctx context.Context, k int, pos *phase) error {
	if err := pos.fill(e.p); err != nil {
		return err
	}
	return e.average()
}

// average sets the model phase from the current parameters.
func (e *hiddenAverage) average() error {
	m, ph := e.m, e.neg
	h := e.states.RawMatrix().Data
	in := m.VisibleInput(e.states).RawMatrix().Data
	m.Hidden.Energy(h, e.energy)
	m.Visible.CGF(in, e.cgf)
	mx := math.Inf(-1)
	for s := range e.cgf {
		e.cgf[s] -= e.energy[s] // log of the unnormalised P(h)
		mx = math.Max(mx, e.cgf[s])
	}
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return fmt.Errorf("train: ExactHidden: non-finite log-probability of the hidden states (max %v)", mx)
	}
	tot := 0.0
	for s, x := range e.cgf {
		e.weights[s] = math.Exp(x - mx)
		tot += e.weights[s]
	}
	nh := ph.hm.cols
	for s := range e.weights {
		e.weights[s] /= tot
		for j := 0; j < nh; j++ {
			ph.hw.f[s*nh+j] = ph.sign * e.weights[s] * h[s*nh+j]
		}
	}
	m.Visible.Mean(in, ph.v.f)
	ph.v.sync32(0, ph.rows)
	ph.hw.sync32(0, ph.rows)
	return nil
}

func (e *hiddenAverage) swapRate() float64                     { return math.NaN() }
func (e *hiddenAverage) chainStates() [][]float64              { return nil }
func (e *hiddenAverage) hiddenStates() [][]float64             { return nil }
func (e *hiddenAverage) streamStates() ([][]byte, error)       { return nil, nil }
func (e *hiddenAverage) setStreamStates(states [][]byte) error { return noStreams(states) }
