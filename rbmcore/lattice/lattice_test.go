package lattice

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
)

// The enumeration takes a few seconds; the tests share one.
var (
	fixtureOnce  sync.Once
	fixtureModel *Model
	fixtureErr   error
)

func model(t testing.TB) *Model {
	t.Helper()
	fixtureOnce.Do(func() {
		st, err := Enumerate(context.Background(), EnumerateOptions{})
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureModel, fixtureErr = NewModel(st, ModelOptions{})
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureModel
}

func randomSequence(rng *rand.Rand) Sequence {
	var v Sequence
	for i := range v {
		v[i] = uint8(rng.IntN(Q))
	}
	return v
}

func TestStructureCount(t *testing.T) {
	st := model(t).Structures()
	if st.Len() != 103346 {
		t.Errorf("%d structures, want 103346 (Shakhnovich & Gutin 1990)", st.Len())
	}
	if st.Reversible() != 62 {
		t.Errorf("%d reversible structures, want 62", st.Reversible())
	}
	if up := (st.Len() + st.Reversible()) / 2; up != 51704 {
		t.Errorf("%d structures up to reversal, want 51704", up)
	}
}

// countWalks counts the directed Hamiltonian paths of the cube by a plain
// depth-first search with no symmetry reduction, from one corner and one
// face centre: every site of the same kind starts as many walks (a cube
// symmetry maps one onto the other), and no walk starts on an edge centre
// or the centre, since a walk alternates the two colours of the cube's
// chessboard colouring and the 27 sites have 14 of one and 13 of the other.
func countWalks() int {
	var used uint32
	var grow func(s site, n int) int
	grow = func(s site, n int) int {
		if n == Length {
			return 1
		}
		c := 0
		for _, t := range nbr[s] {
			if used&(1<<t) == 0 {
				used |= 1 << t
				c += grow(t, n+1)
				used &^= 1 << t
			}
		}
		return c
	}
	used = 1 << 0 // corner (0,0,0)
	corner := grow(0, 1)
	used = 1 << 4 // face centre (1,1,0)
	face := grow(4, 1)
	return 8*corner + 6*face
}

func TestStructureCountBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("counts the 4 960 608 directed walks without symmetry (7–130 s on a busy 2-core machine)")
	}
	st := model(t).Structures()
	// No symmetry but the identity fixes a walk, so each structure stands
	// for 48 directed walks.
	if n := countWalks(); n != 48*st.Len() {
		t.Errorf("%d directed walks, want 48 × %d structures = %d", n, st.Len(), 48*st.Len())
	}
}

func TestStructuresAreDistinctCompactWalks(t *testing.T) {
	st := model(t).Structures()
	seen := make(map[[Contacts][2]int]int, st.Len())
	for s := 0; s < st.Len(); s++ {
		w := st.Walk(s)
		var at [3][3][3]int
		for i := range at {
			for j := range at[i] {
				for k := range at[i][j] {
					at[i][j][k] = -1
				}
			}
		}
		for i, p := range w {
			if at[p[0]][p[1]][p[2]] >= 0 {
				t.Fatalf("structure %d visits %v twice", s, p)
			}
			at[p[0]][p[1]][p[2]] = i
			if i > 0 {
				d := 0
				for a := 0; a < 3; a++ {
					d += abs(p[a] - w[i-1][a])
				}
				if d != 1 {
					t.Fatalf("structure %d: monomers %d and %d are not neighbours", s, i-1, i)
				}
			}
		}
		// Contacts from the coordinates, independently of Enumerate.
		var cm [Length][Length]uint8
		n := 0
		for i := 0; i < Length; i++ {
			for j := i + 2; j < Length; j++ {
				d := 0
				for a := 0; a < 3; a++ {
					d += abs(w[i][a] - w[j][a])
				}
				if d == 1 {
					cm[i][j], cm[j][i] = 1, 1
					n++
				}
			}
		}
		if n != Contacts {
			t.Fatalf("structure %d has %d contacts, want %d", s, n, Contacts)
		}
		got := st.ContactMap(s)
		if got != cm {
			t.Fatalf("structure %d: ContactMap differs from the contacts of its walk", s)
		}
		for i := 0; i < Length; i++ {
			for j := 0; j < Length; j++ {
				if got[i][j] != got[j][i] {
					t.Fatalf("structure %d: contact map not symmetric at (%d,%d)", s, i, j)
				}
				if got[i][j] == 1 && (j-i)%2 == 0 {
					t.Fatalf("structure %d: contact (%d,%d) at even distance on a bipartite lattice", s, i, j)
				}
			}
		}
		c := st.Contacts(s)
		if prev, dup := seen[c]; dup {
			t.Fatalf("structures %d and %d have the same contacts", prev, s)
		}
		seen[c] = s
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestMiyazawaJernigan(t *testing.T) {
	e := MiyazawaJernigan()
	at := func(a, b byte) float64 {
		return e[indexOf(t, a)][indexOf(t, b)]
	}
	// Values of Miyazawa & Jernigan 1996, Table III.
	for _, c := range []struct {
		a, b byte
		want float64
	}{{'L', 'L', -7.37}, {'K', 'K', -0.12}, {'C', 'C', -5.44}, {'F', 'L', -7.28}, {'E', 'K', -1.68}, {'D', 'R', -2.27}, {'W', 'P', -3.73}, {'A', 'G', -2.31}} {
		if got := at(c.a, c.b); got != c.want {
			t.Errorf("ε(%c,%c) = %v, want %v", c.a, c.b, got, c.want)
		}
		if at(c.a, c.b) != at(c.b, c.a) {
			t.Errorf("ε(%c,%c) ≠ ε(%c,%c)", c.a, c.b, c.b, c.a)
		}
	}
	if _, err := parseEnergies("aa\tC\tM\n", "bad.tsv"); err == nil {
		t.Error("a 2-column header was accepted")
	}
	asym := []byte(mjTSV)
	// Change the first energy of the C row (ε(C,C) is on the diagonal, so
	// take the second: ε(C,M)).
	i := indexAfter(t, string(asym), "\nC\t-5.44\t")
	copy(asym[i:], "-9.99")
	if _, err := parseEnergies(string(asym), "asym.tsv"); err == nil {
		t.Error("an asymmetric table was accepted")
	}
}

func indexOf(t *testing.T, a byte) int {
	for k := 0; k < Q; k++ {
		if Alphabet[k] == a {
			return k
		}
	}
	t.Fatalf("%c not in the alphabet", a)
	return -1
}

func indexAfter(t *testing.T, s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i + len(sub)
		}
	}
	t.Fatalf("%q not found", sub)
	return -1
}

func TestAlphabetMatchesDataPackage(t *testing.T) {
	if data.ProteinAlphabet[:Q] != Alphabet {
		t.Errorf("Alphabet %q is not the amino-acid part of data.ProteinAlphabet %q", Alphabet, data.ProteinAlphabet)
	}
}

func TestEnergyHandExample(t *testing.T) {
	m := model(t)
	st := m.Structures()
	ala, lys := uint8(indexOf(t, 'A')), uint8(indexOf(t, 'K'))
	var v Sequence
	for i := range v {
		v[i] = ala
	}
	// All alanine: 28 contacts of ε(A,A) = −2.72 in every structure.
	for _, s := range []int{0, 777, st.Len() - 1} {
		if e, _ := m.Energy(v, s); math.Abs(e-28*-2.72) > 1e-12 {
			t.Errorf("E(A…A; %d) = %v, want %v", s, e, 28*-2.72)
		}
	}
	// Lysine on the monomer at the cube's centre, an inner monomer: its 4
	// contacts become A–K, ε = −1.31: E = 24·(−2.72) + 4·(−1.31).
	for s := 0; s < st.Len(); s += 997 {
		w := st.Walk(s)
		mid := -1
		for i, p := range w {
			if p == [3]int{1, 1, 1} {
				mid = i
			}
		}
		if mid == 0 || mid == Length-1 {
			continue
		}
		u := v
		u[mid] = lys
		want := 24*-2.72 + 4*-1.31
		if e, _ := m.Energy(u, s); math.Abs(e-want) > 1e-12 {
			t.Errorf("structure %d, K at the centre (monomer %d): E = %v, want %v", s, mid, e, want)
		}
	}
	// Random sequences against the double sum over the contact map.
	rng := rand.New(rand.NewPCG(3, 4))
	eps := MiyazawaJernigan()
	for k := 0; k < 50; k++ {
		v := randomSequence(rng)
		s := rng.IntN(st.Len())
		cm := st.ContactMap(s)
		want := 0.0
		for i := 0; i < Length; i++ {
			for j := i + 1; j < Length; j++ {
				want += float64(cm[i][j]) * eps[v[i]][v[j]]
			}
		}
		if e, _ := m.Energy(v, s); math.Abs(e-want) > 1e-10 {
			t.Errorf("E(%v; %d) = %v, want %v", v, s, e, want)
		}
	}
	if _, err := m.Energy(Sequence{0: 20}, 0); err == nil {
		t.Error("state 20 was accepted")
	}
	if _, err := m.Energy(v, st.Len()); err == nil {
		t.Error("structure out of range was accepted")
	}
}

func TestPNatSumsToOne(t *testing.T) {
	m := model(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 3; k++ {
		v := randomSequence(rng)
		e, err := m.Energies(v)
		if err != nil {
			t.Fatal(err)
		}
		// Σ_S P_nat(v;S) from the energies, in plain float64 (the MJ
		// energies span < 210, so exp(−E) is in range).
		z := 0.0
		for _, x := range e {
			z += math.Exp(-x)
		}
		tr, err := NewTracker(m, v, 0)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for s := range e {
			sum += math.Exp(tr.LogPNatOf(s))
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("Σ_S P_nat = %v, want 1", sum)
		}
		for _, s := range []int{0, 1234, 99999} {
			lp, _ := m.LogPNat(v, s)
			want := -e[s] - math.Log(z)
			if math.Abs(lp-want) > 1e-9 {
				t.Errorf("log P_nat(v;%d) = %v, want %v", s, lp, want)
			}
		}
	}
}

func TestTrackerMatchesRecomputation(t *testing.T) {
	m := model(t)
	rng := rand.New(rand.NewPCG(7, 8))
	v := randomSequence(rng)
	const target = 4242
	tr, err := NewTracker(m, v, target)
	if err != nil {
		t.Fatal(err)
	}
	steps := 300
	if !testing.Short() {
		steps = refreshEvery + 200 // across a refresh
	}
	for k := 1; k <= steps; k++ {
		i, a := rng.IntN(Length), uint8(rng.IntN(Q))
		if k%3 == 0 { // a proposal that is not accepted changes nothing
			before := tr.LogPNat()
			if _, err := tr.Propose(i, a); err != nil {
				t.Fatal(err)
			}
			if tr.LogPNat() != before {
				t.Fatal("Propose changed the state")
			}
			continue
		}
		lp, err := tr.Mutate(i, a)
		if err != nil {
			t.Fatal(err)
		}
		v[i] = a
		if tr.Sequence() != v {
			t.Fatalf("step %d: tracked sequence %v, want %v", k, tr.Sequence(), v)
		}
		if k%25 != 1 {
			continue
		}
		want, _ := m.LogPNat(v, target)
		if math.Abs(lp-want) > 1e-10 || math.Abs(tr.LogPNat()-want) > 1e-10 {
			t.Fatalf("step %d: log P_nat %v (Mutate %v), recomputed %v", k, tr.LogPNat(), lp, want)
		}
		s := rng.IntN(m.Structures().Len())
		want, _ = m.LogPNat(v, s)
		if got := tr.LogPNatOf(s); math.Abs(got-want) > 1e-10 {
			t.Fatalf("step %d: log P_nat(v;%d) %v, recomputed %v", k, s, got, want)
		}
	}
	if _, err := tr.Mutate(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := tr.Accept(); err == nil {
		t.Error("Accept without a pending proposal succeeded")
	}
	// ProposeAbove answers like Propose on either side of its floor.
	for k := 0; k < 100; k++ {
		i, a := rng.IntN(Length), uint8(rng.IntN(Q))
		exact, _ := tr.Propose(i, a)
		floor := exact + rng.Float64()*2 - 1
		lp, above, err := tr.ProposeAbove(i, a, floor)
		if err != nil {
			t.Fatal(err)
		}
		if above != (exact > floor) || (above && math.Abs(lp-exact) > 1e-12) {
			t.Fatalf("ProposeAbove(floor %v) = %v, %v; Propose = %v", floor, lp, above, exact)
		}
		if !above && tr.Accept() == nil {
			t.Fatal("Accept after a proposal below its floor succeeded")
		}
	}
	if _, err := tr.Propose(Length, 0); err == nil {
		t.Error("site 27 was accepted")
	}
}

func TestFold(t *testing.T) {
	m := model(t)
	rng := rand.New(rand.NewPCG(9, 10))
	v := randomSequence(rng)
	s, p, err := m.Fold(v)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := m.Energies(v)
	for k, x := range e {
		if x < e[s] {
			t.Fatalf("Fold chose %d (E = %v) but structure %d has E = %v", s, e[s], k, x)
		}
	}
	if want, _ := m.PNat(v, s); math.Abs(p-want) > 1e-12 {
		t.Errorf("Fold's P_nat %v, PNat %v", p, want)
	}
}

func TestParseSequence(t *testing.T) {
	v, err := ParseSequence("acdefghiklmnpqrstvwyACDEFGH")
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "ACDEFGHIKLMNPQRSTVWYACDEFGH" {
		t.Errorf("round trip gave %s", v)
	}
	for _, bad := range []string{"ACD", "BCDEFGHIKLMNPQRSTVWYACDEFGH", "-CDEFGHIKLMNPQRSTVWYACDEFGH"} {
		if _, err := ParseSequence(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// exampleFASTA is the bundled alignment (see gen.go).
const exampleFASTA = "testdata/example.fasta"

func TestSampleFoldsAndRoundTrips(t *testing.T) {
	m := model(t)
	opts := SampleOptions{Sequences: 12, Chains: 2, Interval: 20, BurnIn: 20, Seed: 11}
	var last Progress
	opts.Progress = func(p Progress) { last = p }
	s, err := Sample(context.Background(), m, DefaultTarget, opts)
	if err != nil {
		t.Fatal(err)
	}
	if last.Done != 12 || last.Total != 12 {
		t.Errorf("last progress %+v, want 12 of 12", last)
	}
	for k, v := range s.Sequences {
		p, _ := m.PNat(v, DefaultTarget)
		if !(p > 0.995) || math.Abs(p-s.PNat[k]) > 1e-9 {
			t.Errorf("sequence %d %v: P_nat %v (recorded %v), want > 0.995", k, v, p, s.PNat[k])
		}
	}
	// The same seed and chains on one worker give the same alignment.
	opts.Workers, opts.Progress = 1, nil
	again, err := Sample(context.Background(), m, DefaultTarget, opts)
	if err != nil {
		t.Fatal(err)
	}
	for k := range s.Sequences {
		if again.Sequences[k] != s.Sequences[k] {
			t.Fatalf("sequence %d differs between runs: %v vs %v", k, s.Sequences[k], again.Sequences[k])
		}
	}
	path := filepath.Join(t.TempDir(), "lp.fasta")
	if err := s.SaveFASTA(path); err != nil {
		t.Fatal(err)
	}
	a, err := data.LoadAlignment(path, data.AlignmentOptions{Alphabet: Alphabet})
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != len(s.Sequences) {
		t.Fatalf("read %d sequences, wrote %d", a.Len(), len(s.Sequences))
	}
	for k, row := range a.Seqs {
		if Sequence(row) != s.Sequences[k] {
			t.Errorf("sequence %d read back as %v, want %v", k, row, s.Sequences[k])
		}
	}
	if _, err := Sample(context.Background(), m, -1, opts); err == nil {
		t.Error("target −1 was accepted")
	}
	if _, err := Sample(context.Background(), m, 0, SampleOptions{Threshold: 1}); err == nil {
		t.Error("threshold 1 was accepted")
	}
}

// TestIsolatedSequence checks that the set Sample explores is not connected
// by single mutations (SampleOptions.Chains): this sequence, on which chain
// 278 of the alignment of 46 000 sequences from 400 chains (seed 1) lands
// and stays, folds in DefaultTarget above the threshold, while none of its
// 27·19 single mutants does.
func TestIsolatedSequence(t *testing.T) {
	m := model(t)
	v, err := ParseSequence("DKCCKDCDKWMAPAMEGKLKADDFDCK")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := m.PNat(v, DefaultTarget); !(p > 0.995) {
		t.Fatalf("P_nat = %v, want > 0.995", p)
	}
	mutants := SingleMutants([]Sequence{v})
	if len(mutants) != Length*(Q-1) {
		t.Fatalf("%d single mutants, want %d", len(mutants), Length*(Q-1))
	}
	for _, w := range mutants {
		if p, _ := m.PNat(w, DefaultTarget); p > 0.995 {
			t.Errorf("mutant %v has P_nat = %v > 0.995", w, p)
		}
	}
}

// cancelAfter is a context that cancels itself on its n-th Err call, so a
// test can interrupt a computation part-way through however fast the
// machine runs it.
type cancelAfter struct {
	context.Context
	left   atomic.Int64
	cancel context.CancelFunc
}

func newCancelAfter(n int64) *cancelAfter {
	ctx, cancel := context.WithCancel(context.Background())
	c := &cancelAfter{Context: ctx, cancel: cancel}
	c.left.Store(n)
	return c
}

func (c *cancelAfter) Err() error {
	if c.left.Add(-1) <= 0 {
		c.cancel()
	}
	return c.Context.Err()
}

func TestCancellation(t *testing.T) {
	m := model(t)
	runs := map[string]func(ctx context.Context) error{
		"Enumerate": func(ctx context.Context) error {
			_, err := Enumerate(ctx, EnumerateOptions{})
			return err
		},
		"Sample": func(ctx context.Context) error {
			_, err := Sample(ctx, m, DefaultTarget, SampleOptions{Sequences: 100000})
			return err
		},
	}
	for name, run := range runs {
		// Part-way: the context turns cancelled after a few checks.
		ctx := newCancelAfter(5)
		if err := run(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled part-way: error %v, want context.Canceled", name, err)
		}
		ctx.cancel()

		// Latency: a cancellation from outside ends the call within a
		// second. A machine fast enough to finish before the cancellation
		// fires returns nil, which is right: there was nothing to stop.
		ctx2, cancel := context.WithCancel(context.Background())
		const after = 200 * time.Millisecond
		time.AfterFunc(after, cancel)
		t0 := time.Now()
		err := run(ctx2)
		d := time.Since(t0)
		switch {
		case err == nil && d > after+100*time.Millisecond:
			t.Errorf("%s ignored a cancellation: finished with no error after %v", name, d)
		case err != nil && !errors.Is(err, context.Canceled):
			t.Errorf("%s: error %v, want context.Canceled", name, err)
		}
		if d > (1200+cancelSlack)*time.Millisecond {
			t.Errorf("%s returned %v after the start, %v after the cancellation", name, d, d-after)
		}
		cancel()
	}
}

func TestExampleAlignment(t *testing.T) {
	if _, err := os.Stat(exampleFASTA); err != nil {
		t.Fatalf("the bundled alignment is missing (go generate): %v", err)
	}
	a, err := data.LoadAlignment(exampleFASTA, data.AlignmentOptions{Alphabet: Alphabet})
	if err != nil {
		t.Fatal(err)
	}
	m := model(t)
	for k, row := range a.Seqs {
		if p, _ := m.PNat(Sequence(row), DefaultTarget); !(p > 0.995) {
			t.Errorf("%s: P_nat(S_A) = %v, want > 0.995", a.Names[k], p)
		}
	}
	st := alignmentStats(a.Seqs, m.Structures().ContactMap(DefaultTarget))
	t.Logf("%d sequences: site entropy %.2f–%.2f nats (mean %.2f); mean ‖C_ij‖ in contact %.4f, not in contact %.4f; %d contacts among the 28 largest",
		a.Len(), st.minEntropy, st.maxEntropy, st.meanEntropy, st.contactCorr, st.otherCorr, st.topContacts)
	// Fig. 4 of Tubiana, Cocco & Monasson 2019: partly conserved and
	// variable sites; correlations concentrated on the contacts.
	if !(st.minEntropy < 1.5 && st.maxEntropy > 2) {
		t.Errorf("site entropies %.2f–%.2f, want some conserved (< 1.5 nats) and some variable (> 2 nats) sites", st.minEntropy, st.maxEntropy)
	}
	// With 300 sequences (10 chains) the sampling noise adds ~0.1 to every
	// norm; the 36 000 of lpgen give 0.236 against 0.133.
	if !(st.contactCorr > 1.2*st.otherCorr) {
		t.Errorf("mean correlation norm in contact %.4f, not in contact %.4f: want contacts clearly stronger", st.contactCorr, st.otherCorr)
	}
	if st.topContacts < 7 {
		t.Errorf("%d contacts among the 28 most correlated pairs, want ≥ 7 (2.4 by chance)", st.topContacts)
	}
}

// TestDefaultTarget checks the reconstruction of S_A documented on
// DefaultTarget.
func TestDefaultTarget(t *testing.T) {
	st := model(t).Structures()
	described := [][2]int{{2, 25}, {4, 21}, {10, 21}, {0, 17}, {0, 19}} // 0-based
	patch := []int{1, 15, 17, 22, 24}                                   // their sites 2, 16, 18, 23, 25
	var match, connected []int
	for s := 0; s < st.Len(); s++ {
		cm := st.ContactMap(s)
		ok := true
		for _, c := range described {
			ok = ok && cm[c[0]][c[1]] == 1
		}
		if !ok {
			continue
		}
		match = append(match, s)
		// Grow the patch's component from its first site.
		in := map[int]bool{patch[0]: true}
		for grown := true; grown; {
			grown = false
			for _, i := range patch {
				for _, j := range patch {
					if in[i] && !in[j] && cm[i][j] == 1 {
						in[j], grown = true, true
					}
				}
			}
		}
		if len(in) == len(patch) {
			connected = append(connected, s)
		}
	}
	if len(match) != 10 || len(connected) != 1 || connected[0] != DefaultTarget {
		t.Errorf("structures with the described contacts %v, with a connected patch %v; want 10 and [%d]", match, connected, DefaultTarget)
	}
	if st.ContactMap(DefaultTarget)[0][25] != 0 {
		t.Error("sites 1 and 26 (1-based) are in contact in DefaultTarget")
	}
}
