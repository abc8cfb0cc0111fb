package lattice

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/guard"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Length is the number of monomers of a lattice protein: one per site of
// the 3×3×3 cube.
const Length = 27

// Contacts is the number of contacts of every maximally compact 27-mer: the
// cube has 54 nearest-neighbour bonds, of which the chain uses 26.
const Contacts = 28

// site is a cube site x + 3y + 9z, x, y, z ∈ {0, 1, 2}.
type site = uint8

var (
	// nbr[s] lists the lattice neighbours of site s.
	nbr [Length][]site
	// sym[g][s] is the image of site s under the g-th cube symmetry; g = 0
	// is the identity.
	sym [48][Length]site
	// below[s] and above[s] are the masks of the symmetries g with
	// sym[g][s] < s and sym[g][s] > s (the lexicographic-leader test).
	below, above [Length]uint64
)

func init() {
	coord := func(s site) [3]int { return [3]int{int(s) % 3, int(s) / 3 % 3, int(s) / 9} }
	index := func(c [3]int) site { return site(c[0] + 3*c[1] + 9*c[2]) }
	for s := site(0); s < Length; s++ {
		c := coord(s)
		for d := 0; d < 3; d++ {
			for _, step := range []int{-1, 1} {
				n := c
				n[d] += step
				if n[d] >= 0 && n[d] <= 2 {
					nbr[s] = append(nbr[s], index(n))
				}
			}
		}
	}
	// The 48 symmetries: a permutation of the axes (6) times a reflection
	// x ↦ 2−x of any subset of them (8), the identity first.
	perms := [6][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	g := 0
	for _, p := range perms {
		for flip := 0; flip < 8; flip++ {
			for s := site(0); s < Length; s++ {
				c := coord(s)
				var t [3]int
				for d := 0; d < 3; d++ {
					t[d] = c[p[d]]
					if flip>>d&1 == 1 {
						t[d] = 2 - t[d]
					}
				}
				sym[g][s] = index(t)
			}
			g++
		}
	}
	for g := range sym {
		for s := site(0); s < Length; s++ {
			switch {
			case sym[g][s] < s:
				below[s] |= 1 << g
			case sym[g][s] > s:
				above[s] |= 1 << g
			}
		}
	}
}

// Structures is the set of maximally compact conformations of the 27-mer:
// the self-avoiding walks that fill the 3×3×3 cube (Hamiltonian paths of
// its grid graph), one per class of walks related by a symmetry of the
// cube. A walk and its reversal are different structures unless a cube
// symmetry maps one onto the other: a sequence has a direction, and
// reading its walk backwards changes its contacts (i, j) into
// (26−j, 26−i). Index s numbers the structures in the lexicographic order
// of their representative walks (see Walk), so the numbering is the same
// on every machine and run.
//
// A Structures is read-only after Enumerate returns and is safe for
// concurrent use.
type Structures struct {
	walks [][Length]site
	// contacts[s] holds the 28 contacts (i, j), i+1 < j, of structure s in
	// increasing order.
	contacts [][Contacts][2]uint8
	// reversible counts the structures whose walk read backwards is an
	// image of itself under a cube symmetry.
	reversible int
}

// Len returns the number of structures.
func (st *Structures) Len() int { return len(st.walks) }

// Walk returns the cube coordinates (x, y, z ∈ {0, 1, 2}) of the 27
// monomers of structure s. The representative walk of a class is the one
// whose sequence of site indices x + 3y + 9z is lexicographically smallest
// among the 48 images of the walk under the cube's symmetries.
func (st *Structures) Walk(s int) [Length][3]int {
	var w [Length][3]int
	for i, p := range st.walks[s] {
		w[i] = [3]int{int(p) % 3, int(p) / 3 % 3, int(p) / 9}
	}
	return w
}

// Contacts returns the 28 contacts of structure s: the pairs of monomers
// (i, j), 0 ≤ i, i+1 < j < 27, that are lattice neighbours, sorted.
// Monomers are numbered from 0 (the paper numbers sites from 1).
func (st *Structures) Contacts(s int) [Contacts][2]int {
	var c [Contacts][2]int
	for k, p := range st.contacts[s] {
		c[k] = [2]int{int(p[0]), int(p[1])}
	}
	return c
}

// ContactMap returns the symmetric 27×27 contact map c^(S)_ij of structure
// s (Tubiana, Cocco & Monasson 2019, Eq. 19): 1 when monomers i and j are
// in contact, 0 otherwise (and on the chain bonds and the diagonal).
func (st *Structures) ContactMap(s int) [Length][Length]uint8 {
	var m [Length][Length]uint8
	for _, p := range st.contacts[s] {
		m[p[0]][p[1]], m[p[1]][p[0]] = 1, 1
	}
	return m
}

// Reversible returns how many structures are symmetric under chain
// reversal: their walk read from the last monomer is the image of the walk
// under one of the cube's symmetries, so their contact map is unchanged by
// i ↦ 26−i. The number of structures up to reversal too is
// (Len() + Reversible()) / 2 (see the package doc).
func (st *Structures) Reversible() int { return st.reversible }

// EnumerateOptions controls Enumerate. The zero value uses every core and
// reports no progress.
type EnumerateOptions struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called from the calling goroutine about ten
	// times a second and once at the end, with the share of the search
	// tree done.
	Progress func(Progress)
}

// assembleCheck is how many structures Enumerate assembles between checks
// of its context (a few milliseconds of work).
const assembleCheck = 4096

// Enumerate lists the maximally compact 27-mers: every Hamiltonian path of
// the 3×3×3 grid graph up to the 48 symmetries of the cube, with their
// contact maps (see Structures).
//
// The search keeps only lexicographic leaders: a walk p (as site indices)
// is grown only while no cube symmetry g maps the prefix to a smaller one,
// which is decided in O(1) per step from the set of symmetries that still
// fix the prefix. A complete leader is kept when it is not larger than the
// leader of its reverse, which then joins it (unless they are equal), so
// the search visits each pair of reversed structures once. The walk's ends
// lie on the 14 sites of the majority colour of the cube's chessboard
// colouring (corners and face centres), so the leaders start on site 0 or
// 4.
//
// It stops within milliseconds when ctx is cancelled and returns ctx's
// error.
func Enumerate(ctx context.Context, opts EnumerateOptions) (*Structures, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if opts.Workers < 0 {
		return nil, fmt.Errorf("lattice: Enumerate: Workers = %d, want ≥ 0", opts.Workers)
	}
	workers := opts.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The tasks are the leader prefixes of prefixLen monomers; the DFS
	// below them is independent.
	const prefixLen = 7
	var tasks []searchState
	for _, start := range []site{0, 4} {
		var st searchState
		st.push(start, 1<<len(sym)-1) // every symmetry ties the empty prefix
		st.collectPrefixes(prefixLen, &tasks)
	}
	results := make([][][Length]site, len(tasks))
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = guard.Call(func() error {
				for {
					k := int(next.Add(1) - 1)
					if k >= len(tasks) || ctx.Err() != nil {
						return nil
					}
					st := tasks[k]
					st.complete(&results[k])
					done.Add(1)
				}
			})
		}()
	}
	waitWithProgress(ctx, &wg, opts.Progress, func() (int, int) { return int(done.Load()), len(tasks) })
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("lattice: Enumerate: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lattice: Enumerate: interrupted after %d of %d subtrees: %w", done.Load(), len(tasks), err)
	}
	// Assembling the structures takes about half the call, so it checks
	// ctx too: every assembleCheck structures and between its phases.
	assembling := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("lattice: Enumerate: interrupted while assembling the structures: %w", err)
		}
		return nil
	}
	n := 0
	for _, r := range results {
		n += len(r)
	}
	st := &Structures{walks: make([][Length]site, 0, 2*n)}
	for _, r := range results {
		for _, p := range r {
			st.walks = append(st.walks, p)
			if rl := reverseLeader(&p); rl != p {
				st.walks = append(st.walks, rl)
			} else {
				st.reversible++
			}
		}
		if err := assembling(); err != nil {
			return nil, err
		}
	}
	sort.Slice(st.walks, func(a, b int) bool { return lessWalk(&st.walks[a], &st.walks[b]) })
	if err := assembling(); err != nil {
		return nil, err
	}
	st.contacts = make([][Contacts][2]uint8, len(st.walks))
	for s := range st.walks {
		if err := contactsOf(&st.walks[s], &st.contacts[s]); err != nil {
			return nil, fmt.Errorf("lattice: Enumerate: structure %d: %w", s, err)
		}
		if s%assembleCheck == 0 {
			if err := assembling(); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// searchState is a walk prefix being grown by the depth-first search.
type searchState struct {
	path [Length]site
	n    int
	used uint32 // sites on the path
	// tied[k] is the set of symmetries g with g(path[:k]) = path[:k].
	tied [Length + 1]uint64
}

// push appends site s, whose parent prefix is tied by the symmetries in
// tied, and reports whether the prefix is still a lexicographic leader.
func (st *searchState) push(s site, tied uint64) bool {
	if tied&below[s] != 0 {
		return false
	}
	st.path[st.n] = s
	st.n++
	st.used |= 1 << s
	st.tied[st.n] = tied &^ above[s]
	return true
}

func (st *searchState) pop() {
	st.n--
	st.used &^= 1 << st.path[st.n]
}

// collectPrefixes appends every leader extension of st of length n to out.
func (st *searchState) collectPrefixes(n int, out *[]searchState) {
	if st.n == n {
		*out = append(*out, *st)
		return
	}
	for _, s := range nbr[st.path[st.n-1]] {
		if st.used&(1<<s) == 0 && st.push(s, st.tied[st.n]) {
			st.collectPrefixes(n, out)
			st.pop()
		}
	}
}

// complete appends to out the walks that extend st into a leader of its
// class under the symmetries that is not larger than the leader of its
// reverse.
func (st *searchState) complete(out *[][Length]site) {
	if st.n == Length {
		if rl := reverseLeader(&st.path); !lessWalk(&rl, &st.path) {
			*out = append(*out, st.path)
		}
		return
	}
	for _, s := range nbr[st.path[st.n-1]] {
		if st.used&(1<<s) == 0 && st.push(s, st.tied[st.n]) {
			st.complete(out)
			st.pop()
		}
	}
}

// reverseLeader returns the smallest image of the reversed walk p under
// the 48 symmetries.
func reverseLeader(p *[Length]site) [Length]site {
	var best [Length]site
	for g := range sym {
		var q [Length]site
		for i := range q {
			q[i] = sym[g][p[Length-1-i]]
		}
		if g == 0 || lessWalk(&q, &best) {
			best = q
		}
	}
	return best
}

func lessWalk(a, b *[Length]site) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// contactsOf fills c with the contacts of walk p, checking that p is a
// Hamiltonian path with exactly Contacts contacts.
func contactsOf(p *[Length]site, c *[Contacts][2]uint8) error {
	var pos [Length]int
	for i := range pos {
		pos[i] = -1
	}
	for i, s := range p {
		if pos[s] >= 0 {
			return fmt.Errorf("site %d visited twice", s)
		}
		pos[s] = i
	}
	n := 0
	for i, s := range p {
		for _, t := range nbr[s] {
			j := pos[t]
			if j == i-1 || j == i+1 {
				continue
			}
			if j > i {
				if n == Contacts {
					return fmt.Errorf("more than %d contacts", Contacts)
				}
				c[n] = [2]uint8{uint8(i), uint8(j)}
				n++
			}
		}
	}
	if n != Contacts {
		return fmt.Errorf("%d contacts, want %d", n, Contacts)
	}
	sort.Slice(c[:], func(a, b int) bool {
		if c[a][0] != c[b][0] {
			return c[a][0] < c[b][0]
		}
		return c[a][1] < c[b][1]
	})
	return nil
}
