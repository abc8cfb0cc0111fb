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

// exitBlock is the number of structures between two checks of the early
// exit of ProposeAbove.
const exitBlock = 2048

// Tracker follows one sequence through single-site mutations and keeps
// P_nat(v;S) for every structure S up to date (Tubiana, Cocco & Monasson
// 2019, Eq. 20). It stores the Boltzmann weight w_S = exp(−E(v;S)/T + r) of
// each structure relative to a reference r (the lowest energy at the last
// refresh) and their sum Z. A mutation of site i from a to b multiplies
// w_S by Π_{j∈C_S(i)} exp(−(ε(b,v_j) − ε(a,v_j))/T) over the monomers j in
// contact with i in S; the product is the same for all structures with the
// same contacts at i (see Model), so it is computed once per group and a
// proposal costs one multiply-add per structure: O(structures × contacts
// of the site) at most, and no exponential per structure.
//
// The structures are kept in the order of the number of contacts they
// share with the target, most first: those are the competitors of a
// sequence designed for the target, so ProposeAbove can often stop after
// a small part of the sum.
//
// A Tracker is not safe for concurrent use; use one per goroutine.
type Tracker struct {
	m      *Model
	v      Sequence
	target int
	order  []int32          // order[k] is the structure at position k
	pos    []int32          // pos[s] is the position of structure s
	class  [Length][]uint16 // Model.class in the order of order
	w      []float64        // relative Boltzmann weights, in the order of order
	z      float64          // Σ w
	ref    float64          // w = exp(ref − E/T)
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
	t := &Tracker{m: m, v: v, target: target, w: make([]float64, n), order: make([]int32, n), pos: make([]int32, n)}
	// A counting sort by the number of shared contacts, 28 (the target
	// alone) down to 0, ties in index order.
	cm := m.st.ContactMap(target)
	shared := make([]uint8, n)
	var start [Contacts + 2]int
	for s := range shared {
		for _, c := range m.st.contacts[s] {
			shared[s] += cm[c[0]][c[1]]
		}
		start[Contacts-int(shared[s])+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	for s, c := range shared {
		k := &start[Contacts-int(c)]
		t.order[*k], t.pos[s] = int32(s), int32(*k)
		*k++
	}
	for i := range t.class {
		t.class[i] = make([]uint16, n)
		for k, s := range t.order {
			t.class[i][k] = m.class[i][s]
		}
	}
	t.refresh()
	return t, nil
}

// refresh recomputes the weights from the energies, with the reference at
// the lowest energy.
func (t *Tracker) refresh() {
	lo := math.Inf(1)
	for k, s := range t.order {
		t.w[k] = t.m.scaledEnergy(&t.v, int(s))
		lo = min(lo, t.w[k])
	}
	t.ref, t.z = lo, 0
	for k, e := range t.w {
		t.w[k] = math.Exp(lo - e)
		t.z += t.w[k]
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
func (t *Tracker) LogPNatOf(s int) float64 { return math.Log(t.w[t.pos[s]]) - math.Log(t.z) }

// LogZ returns log Σ_S exp(−E(v;S)/T) for the current sequence.
func (t *Tracker) LogZ() float64 { return math.Log(t.z) - t.ref }

// Propose computes log P_nat in the target structure of the sequence with
// site i changed to amino acid a, without changing the current sequence;
// Accept then applies that mutation. Proposing the current amino acid
// returns the current value.
func (t *Tracker) Propose(i int, a uint8) (float64, error) {
	lp, _, err := t.ProposeAbove(i, a, math.Inf(-1))
	return lp, err
}

// ProposeAbove is Propose for a caller that only needs log P_nat when it
// exceeds floor, such as a Metropolis step with its uniform number drawn
// first, or a threshold on P_nat: when the new log P_nat is at most floor
// it may stop early and return above = false, with lp not computed and
// nothing to Accept. Otherwise lp is exact and Accept applies the
// mutation. The partial sums of Z only grow, so the early answer is
// exact.
func (t *Tracker) ProposeAbove(i int, a uint8, floor float64) (lp float64, above bool, err error) {
	if i < 0 || i >= Length || int(a) >= Q {
		return 0, false, fmt.Errorf("lattice: Tracker.Propose: site %d, amino acid %d: want 0 ≤ site < %d, amino acid < %d", i, a, Length, Q)
	}
	t.pending = false
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
	class := t.class[i]
	w := t.w[:len(class)]
	tp := t.pos[t.target]
	wTarget := w[tp] * tg[class[tp]]
	// P_nat ≤ e^floor ⟺ Z ≥ wTarget·e^−floor.
	limit := wTarget * math.Exp(-floor)
	z := 0.0
	for k0 := 0; k0 < len(class); k0 += exitBlock {
		k1 := min(k0+exitBlock, len(class))
		// Four partial sums, so that the additions do not wait on each
		// other.
		var z0, z1, z2, z3 float64
		k := k0
		for ; k+4 <= k1; k += 4 {
			c := class[k : k+4 : k+4]
			x := w[k : k+4 : k+4]
			z0 += x[0] * tg[c[0]]
			z1 += x[1] * tg[c[1]]
			z2 += x[2] * tg[c[2]]
			z3 += x[3] * tg[c[3]]
		}
		for ; k < k1; k++ {
			z0 += w[k] * tg[class[k]]
		}
		z += (z0 + z1) + (z2 + z3)
		if z >= limit {
			return 0, false, nil
		}
	}
	t.site, t.aa, t.zNew, t.pending = i, a, z, true
	return math.Log(wTarget) - math.Log(z), true, nil
}

// Accept applies the mutation of the last Propose. It returns an error
// when there is no proposal pending (none yet, it was accepted, or
// ProposeAbove answered below its floor).
func (t *Tracker) Accept() error {
	if !t.pending {
		return fmt.Errorf("lattice: Tracker.Accept: no pending proposal")
	}
	t.pending = false
	tg := t.tg[:len(t.m.partners[t.site])]
	class := t.class[t.site]
	w := t.w[:len(class)]
	for k, g := range class {
		w[k] *= tg[g]
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
