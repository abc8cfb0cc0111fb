package lattice

import (
	"fmt"
	"math"
)

// refreshEvery is the number of accepted mutations after which a Tracker
// recomputes its weights from scratch, so that the rounding of the
// multiplicative updates (~1e-16 relative each) never accumulates beyond
// ~1e-13.
const refreshEvery = 1000

// Tracker follows one sequence through single-site mutations and keeps
// P_nat(v;S) for every structure S up to date (Tubiana, Cocco & Monasson
// 2019, Eq. 20). It stores the Boltzmann weight w_S = exp(−E(v;S)/T + r) of
// each structure relative to a reference r (the lowest energy at the last
// refresh) and their sum Z. A mutation of site i from a to b multiplies
// w_S by Π_{j∈C_S(i)} exp(−(ε(b,v_j) − ε(a,v_j))/T) over the monomers j in
// contact with i in S; the product is the same for all structures with the
// same contacts at i, so it is computed once per group and a proposal
// costs one multiply-add per structure: O(structures × contacts of the
// site) at most, and no exponential per structure.
//
// A Tracker is not safe for concurrent use; use one per goroutine.
type Tracker struct {
	m      *Model
	v      Sequence
	target int
	w      []float64 // relative Boltzmann weights
	z      float64   // Σ w
	ref    float64   // w_S = exp(ref − E_S/T)
	// The last proposal: site, amino acid, the weight factor of each
	// group of structures (see Model) and the new Z.
	site     int
	aa       uint8
	tg       []float64
	zNew     float64
	pending  bool
	accepted int
	tj       [Length]float64 // scratch: factor per partner monomer

}

// NewTracker starts a Tracker at sequence v with target structure target
// (the S of LogPNat).
func NewTracker(m *Model, v Sequence, target int) (*Tracker, error) {
	if err := m.checkArgs(&v, target); err != nil {
		return nil, fmt.Errorf("lattice: NewTracker: %w", err)
	}
	n := m.st.Len()
	t := &Tracker{m: m, v: v, target: target, w: make([]float64, n)}
	t.refresh()
	return t, nil
}

// refresh recomputes the weights from the energies, with the reference at
// the lowest energy.
func (t *Tracker) refresh() {
	lo := math.Inf(1)
	for s := range t.w {
		t.w[s] = t.m.scaledEnergy(&t.v, s)
		lo = min(lo, t.w[s])
	}
	t.ref, t.z = lo, 0
	for s, e := range t.w {
		t.w[s] = math.Exp(lo - e)
		t.z += t.w[s]
	}
	t.accepted = 0
}

// Sequence returns the current sequence.
func (t *Tracker) Sequence() Sequence { return t.v }

// Target returns the target structure.
func (t *Tracker) Target() int { return t.target }

// LogPNat returns log P_nat of the current sequence in the target
// structure.
func (t *Tracker) LogPNat() float64 { return t.LogPNatOf(t.target) }

// LogPNatOf returns log P_nat of the current sequence in structure s.
func (t *Tracker) LogPNatOf(s int) float64 { return math.Log(t.w[s]) - math.Log(t.z) }

// LogZ returns log Σ_S exp(−E(v;S)/T) for the current sequence.
func (t *Tracker) LogZ() float64 { return math.Log(t.z) - t.ref }

// Propose computes log P_nat in the target structure of the sequence with
// site i changed to amino acid a, without changing the current sequence;
// Accept then applies that mutation. Proposing the current amino acid
// returns the current value.
func (t *Tracker) Propose(i int, a uint8) (float64, error) {
	if i < 0 || i >= Length || int(a) >= Q {
		return 0, fmt.Errorf("lattice: Tracker.Propose: site %d, amino acid %d: want 0 ≤ site < %d, amino acid < %d", i, a, Length, Q)
	}
	old := t.v[i]
	for j, b := range t.v {
		t.tj[j] = math.Exp(t.m.eps[old][b] - t.m.eps[a][b])
	}
	groups := t.m.partners[i]
	if cap(t.tg) < len(groups) {
		t.tg = make([]float64, len(groups))
	}
	tg := t.tg[:len(groups)]
	for k, p := range groups {
		f := 1.0
		for _, j := range p {
			f *= t.tj[j]
		}
		tg[k] = f
	}
	class := t.m.class[i]
	w := t.w[:len(class)]
	z := 0.0
	for s, k := range class {
		z += w[s] * tg[k]
	}
	t.site, t.aa, t.zNew, t.pending = i, a, z, true
	return math.Log(w[t.target]*tg[class[t.target]]) - math.Log(z), nil
}

// Accept applies the mutation of the last Propose. It returns an error
// when there is no proposal pending (none yet, or it was accepted).
func (t *Tracker) Accept() error {
	if !t.pending {
		return fmt.Errorf("lattice: Tracker.Accept: no pending proposal")
	}
	t.pending = false
	tg := t.tg[:len(t.m.partners[t.site])]
	class := t.m.class[t.site]
	w := t.w[:len(class)]
	for s, k := range class {
		w[s] *= tg[k]
	}
	t.z = t.zNew
	t.v[t.site] = t.aa
	t.accepted++
	if t.accepted >= refreshEvery {
		t.refresh()
	}
	return nil
}

// Mutate changes site i to amino acid a (Propose then Accept) and returns
// the new log P_nat in the target structure.
func (t *Tracker) Mutate(i int, a uint8) (float64, error) {
	lp, err := t.Propose(i, a)
	if err != nil {
		return 0, err
	}
	return lp, t.Accept()
}
