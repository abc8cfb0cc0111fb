package lattice

import (
	"fmt"
	"math"
	"strings"
)

// Sequence is a lattice-protein sequence: the amino acid of each of the 27
// monomers as a state 0..Q-1 of Alphabet.
type Sequence [Length]uint8

// ParseSequence reads a sequence of 27 one-letter amino-acid codes of
// Alphabet (either case).
func ParseSequence(s string) (Sequence, error) {
	var v Sequence
	if len(s) != Length {
		return v, fmt.Errorf("lattice: ParseSequence: %q has %d letters, want %d", s, len(s), Length)
	}
	for i := 0; i < Length; i++ {
		k := strings.IndexByte(Alphabet, s[i]&^0x20) // upper case
		if k < 0 {
			return v, fmt.Errorf("lattice: ParseSequence: %q: letter %d (%q) is not an amino acid of %s", s, i+1, s[i], Alphabet)
		}
		v[i] = uint8(k)
	}
	return v, nil
}

// String returns the sequence as 27 one-letter codes (a state ≥ Q prints
// as '?').
func (v Sequence) String() string {
	var b [Length]byte
	for i, a := range v {
		b[i] = '?'
		if int(a) < Q {
			b[i] = Alphabet[a]
		}
	}
	return string(b[:])
}

func (v *Sequence) check() error {
	for i, a := range v {
		if int(a) >= Q {
			return fmt.Errorf("lattice: sequence site %d has state %d, want 0..%d", i, a, Q-1)
		}
	}
	return nil
}

// MaxSpan is the largest energy range, 28·(max ε − min ε)/T, that NewModel
// accepts: the incremental computation (Tracker) keeps Boltzmann weights
// relative to a reference energy in float64, which stays exact as long as
// every weight exp(±span) and their sum over ~10⁵ structures are normal
// numbers. The Miyazawa–Jernigan energies at T = 1 span 203.
const MaxSpan = 600

// ModelOptions controls NewModel. The zero value gives the model of
// Tubiana, Cocco & Monasson 2019, Eqs. 19–20: Miyazawa–Jernigan energies
// at temperature 1.
type ModelOptions struct {
	// Energies is the contact energy table ε; nil means
	// MiyazawaJernigan().
	Energies *Energies
	// Temperature T divides the energies in P_nat ∝ exp(−E/T); 0 means 1,
	// the convention of Eq. 20 with the energies in RT units (room
	// temperature).
	Temperature float64
}

// Model is the lattice-protein model over a set of structures: the energy
// E(v;S) = Σ_{i<j} c^(S)_ij ε(v_i, v_j) of a sequence v folded in
// structure S (Tubiana, Cocco & Monasson 2019, Eq. 19) and the
// probability that v folds in S,
//
//	P_nat(v;S) = exp(−E(v;S)/T) / Σ_{S'} exp(−E(v;S')/T)   (Eq. 20),
//
// the sum running over all structures. A Model is read-only and safe for
// concurrent use; the incremental computation for Monte Carlo lives in
// Tracker.
type Model struct {
	st  *Structures
	eps Energies // ε/T
	t   float64
	// For each site i, the structures are grouped by the set of monomers
	// in contact with i: class[i][s] is the group of structure s and
	// partners[i][k] the monomers of group k (at most 5, since a cube
	// site has at most 6 neighbours, one of them the chain's). A mutation
	// at i changes E(v;S) by the same amount in all structures of a group.
	class    [Length][]uint16
	partners [Length][][]uint8
}

// NewModel returns the model over the structures st. It returns an error
// when the options are invalid: T not positive and finite, an energy table
// that is not finite and symmetric, or an energy span above MaxSpan.
func NewModel(st *Structures, opts ModelOptions) (*Model, error) {
	if st == nil || st.Len() == 0 {
		return nil, fmt.Errorf("lattice: NewModel: no structures")
	}
	t := opts.Temperature
	if t == 0 {
		t = 1
	}
	if !(t > 0) || math.IsInf(t, 0) {
		return nil, fmt.Errorf("lattice: NewModel: Temperature = %v, want a positive finite value", opts.Temperature)
	}
	eps := mj
	if opts.Energies != nil {
		eps = *opts.Energies
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for a := 0; a < Q; a++ {
		for b := 0; b < Q; b++ {
			x := eps[a][b]
			if math.IsNaN(x) || math.IsInf(x, 0) || x != eps[b][a] {
				return nil, fmt.Errorf("lattice: NewModel: Energies[%c][%c] = %v, Energies[%c][%c] = %v: want finite symmetric energies",
					Alphabet[a], Alphabet[b], x, Alphabet[b], Alphabet[a], eps[b][a])
			}
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if span := Contacts * (hi - lo) / t; span > MaxSpan {
		return nil, fmt.Errorf("lattice: NewModel: energy span 28·(%v − %v)/T = %v at T = %v exceeds MaxSpan = %d",
			hi, lo, span, t, MaxSpan)
	}
	m := &Model{st: st, t: t}
	for a := range eps {
		for b := range eps[a] {
			m.eps[a][b] = eps[a][b] / t
		}
	}
	n := st.Len()
	for i := 0; i < Length; i++ {
		m.class[i] = make([]uint16, n)
	}
	groups := make([]map[uint32]uint16, Length)
	for i := range groups {
		groups[i] = make(map[uint32]uint16)
	}
	for s := 0; s < n; s++ {
		var set [Length]uint32 // bit j of set[i]: j is in contact with i
		for _, c := range st.contacts[s] {
			set[c[0]] |= 1 << c[1]
			set[c[1]] |= 1 << c[0]
		}
		for i := 0; i < Length; i++ {
			k, ok := groups[i][set[i]]
			if !ok {
				if len(m.partners[i]) == math.MaxUint16+1 {
					return nil, fmt.Errorf("lattice: NewModel: more than %d contact sets at site %d", math.MaxUint16+1, i)
				}
				k = uint16(len(m.partners[i]))
				groups[i][set[i]] = k
				var p []uint8
				for j := 0; j < Length; j++ {
					if set[i]>>j&1 == 1 {
						p = append(p, uint8(j))
					}
				}
				m.partners[i] = append(m.partners[i], p)
			}
			m.class[i][s] = k
		}
	}
	return m, nil
}

// Structures returns the structures of the model.
func (m *Model) Structures() *Structures { return m.st }

// Temperature returns the temperature T of P_nat.
func (m *Model) Temperature() float64 { return m.t }

// Energy returns E(v;S) for structure s (Eq. 19), in the units of the
// energy table (not divided by T).
func (m *Model) Energy(v Sequence, s int) (float64, error) {
	if err := m.checkArgs(&v, s); err != nil {
		return 0, fmt.Errorf("lattice: Energy: %w", err)
	}
	return m.t * m.scaledEnergy(&v, s), nil
}

// scaledEnergy returns E(v;S)/T.
func (m *Model) scaledEnergy(v *Sequence, s int) float64 {
	e := 0.0
	for _, c := range m.st.contacts[s] {
		e += m.eps[v[c[0]]][v[c[1]]]
	}
	return e
}

func (m *Model) checkArgs(v *Sequence, s int) error {
	if s < 0 || s >= m.st.Len() {
		return fmt.Errorf("structure %d out of range [0, %d)", s, m.st.Len())
	}
	return v.check()
}

// Energies returns E(v;S) for every structure S, in the units of the
// energy table.
func (m *Model) Energies(v Sequence) ([]float64, error) {
	if err := v.check(); err != nil {
		return nil, fmt.Errorf("lattice: Energies: %w", err)
	}
	e := make([]float64, m.st.Len())
	for s := range e {
		e[s] = m.t * m.scaledEnergy(&v, s)
	}
	return e, nil
}

// LogPNat returns log P_nat(v;S) for structure s (Eq. 20), computed
// stably as −E_s/T − logΣ_{S'} exp(−E_{S'}/T) with the log-sum-exp shifted
// by the lowest energy. It costs one pass over all structures; Tracker
// updates P_nat after a mutation much faster.
func (m *Model) LogPNat(v Sequence, s int) (float64, error) {
	if err := m.checkArgs(&v, s); err != nil {
		return 0, fmt.Errorf("lattice: LogPNat: %w", err)
	}
	return -m.scaledEnergy(&v, s) - m.logZ(&v), nil
}

// PNat returns P_nat(v;S) for structure s (Eq. 20).
func (m *Model) PNat(v Sequence, s int) (float64, error) {
	lp, err := m.LogPNat(v, s)
	if err != nil {
		return 0, fmt.Errorf("lattice: PNat: %w", err)
	}
	return math.Exp(lp), nil
}

// logZ returns log Σ_S exp(−E(v;S)/T).
func (m *Model) logZ(v *Sequence) float64 {
	e := make([]float64, m.st.Len())
	lo := math.Inf(1)
	for s := range e {
		e[s] = m.scaledEnergy(v, s)
		lo = min(lo, e[s])
	}
	z := 0.0
	for _, x := range e {
		z += math.Exp(lo - x)
	}
	return math.Log(z) - lo
}

// Fold returns the structure that sequence v prefers, the one of lowest
// energy E(v;S) and so of highest P_nat (Tubiana, Cocco & Monasson 2019,
// §III.C), with its P_nat. Ties go to the lowest index.
func (m *Model) Fold(v Sequence) (s int, pnat float64, err error) {
	if err := v.check(); err != nil {
		return 0, 0, fmt.Errorf("lattice: Fold: %w", err)
	}
	best := math.Inf(1)
	for k := 0; k < m.st.Len(); k++ {
		if e := m.scaledEnergy(&v, k); e < best {
			s, best = k, e
		}
	}
	return s, math.Exp(-best - m.logZ(&v)), nil
}
