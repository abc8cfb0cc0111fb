// Package data loads and generates the data sets RBMs are trained on.
//
// Every loader and generator returns a *Set: a matrix with one sample per row,
// in the layout the rbm package's layers read (see Set). Loaders read IDX
// (MNIST, Fashion-MNIST; gzipped or not), FASTA/A2M multiple sequence
// alignments (one-hot Potts, with sequence reweighting), whitespace/CSV text
// matrices and numpy .npy files; a corrupt or truncated file gives an error
// that names the file and the byte offset or line at fault.
//
// MNIST and FashionMNIST find the official files where
// a machine has them (environment variables, the user cache, Debian's
// package, the Go module cache), check them against recorded SHA-256 sums
// and load a split with its labels.
//
// Generators sample exactly: the 1D Ising ring and the discrete XY (clock)
// ring of [HTCM20] at any inverse temperature (IsingRing and ClockRing,
// transfer matrix), hierarchical (phylogenetic) ±1 data of [ES]
// (Hierarchical), bars-and-stripes, and samples of a given RBM (FromRBM).
//
// Sets are split with Split, subsetted with Subset and iterated in shuffled
// minibatches with Minibatches.
//
// The functions that can run long (the generators' Sample methods, FromRBM,
// Alignment.IdentityWeights, MNIST, FashionMNIST) take a context first; a
// nil one is context.Background(). Their knobs are option structs
// (FromRBMOptions, BatchOptions, IDXOptions, AlignmentOptions,
// CatalogueOptions) whose zero value is documented and usually what you
// want. FromRBM's progress callback is only ever called on the caller's
// goroutine.
//
// References:
//
//   - [BR21] Bulso & Roudi 2021, "Restricted Boltzmann machines as models of
//     interacting variables", Neural Computation.
//   - [TCM19] Tubiana, Cocco & Monasson 2019, "Learning compositional
//     representations of interacting systems with restricted Boltzmann
//     machines: comparative study of lattice proteins", Neural Computation.
//   - [HTCM20] Harsh, Tubiana, Cocco & Monasson 2020, "'Place-cell'
//     emergence and learning of invariant data with restricted Boltzmann
//     machines", J. Phys. A 53, 174002.
//   - [ES] "Exact solution of RBMs trained on structured data in the
//     undersampled regime" (the replica paper of package replica; the text
//     we work from names no authors or year).
package data

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Kinds of data sets; they match the rbm layer kinds a set can feed.
const (
	KindBinary = "binary" // entries in {0,1}
	KindSpin   = "spin"   // entries in {-1,+1}
	KindPotts  = "potts"  // one-hot rows, Q states per unit
	KindReal   = "real"   // any real entries
)

// Set is a data set: one sample per row of X.
//
// For Potts data (Kind "potts") a sample of N units with Q states is stored
// one-hot: X has N*Q columns and unit i in state a sets column i*Q+a to 1
// (unit-major order, the layout of rbm Potts layers). For the other kinds
// Q is 1 and X has one column per unit.
//
// Weights, when non-nil, holds one non-negative weight per row (sequence
// reweighting, importance weights); nil means every row has weight 1.
// Labels, when non-nil, holds one integer label per row (e.g. IDX label
// files). Source names the file or generator the set came from.
type Set struct {
	X       *mat.Dense // samples as rows
	Kind    string     // one of the Kind constants
	Q       int        // states per unit (Potts), else 1
	Weights []float64  // per-row weights, nil for all 1
	Labels  []int      // per-row labels, or nil
	Source  string     // the file or generator of the set
}

// NewSet wraps a B×(N*q) matrix as a set of the given kind and checks that
// its entries belong to the kind (0/1, ±1, one-hot). q must be 1 unless kind
// is "potts".
func NewSet(x *mat.Dense, kind string, q int) (*Set, error) {
	s := &Set{X: x, Kind: kind, Q: q, Source: "matrix"}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Len returns the number of samples (rows).
func (s *Set) Len() int {
	r, _ := s.X.Dims()
	return r
}

// Width returns the number of columns of X (N*Q).
func (s *Set) Width() int {
	_, c := s.X.Dims()
	return c
}

// Units returns the number of units N (columns divided by Q).
func (s *Set) Units() int { return s.Width() / s.q() }

func (s *Set) q() int {
	if s.Q < 1 {
		return 1
	}
	return s.Q
}

// Row returns row r of X (a view: do not modify).
func (s *Set) Row(r int) []float64 { return s.X.RawRowView(r) }

// Weight returns the weight of row r (1 when Weights is nil).
func (s *Set) Weight(r int) float64 {
	if s.Weights == nil {
		return 1
	}
	return s.Weights[r]
}

// TotalWeight returns the sum of the row weights (the number of rows when
// Weights is nil).
func (s *Set) TotalWeight() float64 {
	if s.Weights == nil {
		return float64(s.Len())
	}
	t := 0.0
	for _, w := range s.Weights {
		t += w
	}
	return t
}

// Validate checks that the entries match the kind, that a Potts set is
// one-hot and that Weights and Labels have one entry per row. The error
// names the first offending row and column.
func (s *Set) Validate() error {
	if s.X == nil {
		return fmt.Errorf("data: %s: nil matrix", s.Source)
	}
	rows, cols := s.X.Dims()
	q := s.q()
	if s.Kind != KindPotts && q != 1 {
		return fmt.Errorf("data: %s: Q = %d for kind %q (must be 1)", s.Source, s.Q, s.Kind)
	}
	if cols%q != 0 {
		return fmt.Errorf("data: %s: %d columns is not a multiple of Q = %d", s.Source, cols, q)
	}
	if s.Weights != nil && len(s.Weights) != rows {
		return fmt.Errorf("data: %s: %d weights for %d rows", s.Source, len(s.Weights), rows)
	}
	for r, w := range s.Weights {
		if !(w >= 0) || w > 1e300 {
			return fmt.Errorf("data: %s: weight of row %d is %v (must be finite and ≥ 0)", s.Source, r, w)
		}
	}
	if s.Labels != nil && len(s.Labels) != rows {
		return fmt.Errorf("data: %s: %d labels for %d rows", s.Source, len(s.Labels), rows)
	}
	for r := 0; r < rows; r++ {
		row := s.X.RawRowView(r)
		for c, x := range row {
			ok := true
			switch s.Kind {
			case KindBinary:
				ok = x == 0 || x == 1
			case KindSpin:
				ok = x == -1 || x == 1
			case KindPotts:
				ok = x == 0 || x == 1
			case KindReal:
				ok = x-x == 0 // finite
			default:
				return fmt.Errorf("data: %s: unknown kind %q (want binary, spin, potts or real)", s.Source, s.Kind)
			}
			if !ok {
				return fmt.Errorf("data: %s: row %d, column %d: value %v not allowed for kind %q", s.Source, r, c, x, s.Kind)
			}
		}
		if s.Kind == KindPotts {
			for i := 0; i < cols/q; i++ {
				sum := 0.0
				for a := 0; a < q; a++ {
					sum += row[i*q+a]
				}
				if sum != 1 {
					return fmt.Errorf("data: %s: row %d, unit %d: one-hot block sums to %v", s.Source, r, i, sum)
				}
			}
		}
	}
	return nil
}

// Subset returns a new set made of the given rows (copied), in that order,
// with their weights and labels.
func (s *Set) Subset(rows []int) *Set {
	w := s.Width()
	x := &mat.Dense{} // a zero-row set has an empty matrix
	if len(rows) > 0 {
		x = mat.NewDense(len(rows), w, nil)
	}
	out := &Set{Kind: s.Kind, Q: s.Q, Source: s.Source}
	if s.Weights != nil {
		out.Weights = make([]float64, len(rows))
	}
	if s.Labels != nil {
		out.Labels = make([]int, len(rows))
	}
	for k, r := range rows {
		copy(x.RawRowView(k), s.X.RawRowView(r))
		if s.Weights != nil {
			out.Weights[k] = s.Weights[r]
		}
		if s.Labels != nil {
			out.Labels[k] = s.Labels[r]
		}
	}
	out.X = x
	return out
}

// Split shuffles the rows with the given seed and returns the first
// round(testFraction*Len) of them as the test set and the rest as the
// training set. testFraction must lie in [0, 1].
func (s *Set) Split(testFraction float64, seed uint64) (train, test *Set, err error) {
	if !(testFraction >= 0 && testFraction <= 1) {
		return nil, nil, fmt.Errorf("data: Split: testFraction = %v, want a value in [0, 1]", testFraction)
	}
	n := s.Len()
	perm := rand.New(rand.NewPCG(seed, 0x5eed)).Perm(n)
	nt := int(testFraction*float64(n) + 0.5)
	return s.Subset(perm[nt:]), s.Subset(perm[:nt]), nil
}

// Head returns the first n rows (all rows if n ≥ Len) as a new set.
func (s *Set) Head(n int) *Set {
	n = min(n, s.Len())
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return s.Subset(idx)
}

// Mean returns the (weighted) column means of X.
func (s *Set) Mean() []float64 {
	w := s.Width()
	m := make([]float64, w)
	tot := 0.0
	for r := 0; r < s.Len(); r++ {
		wr := s.Weight(r)
		tot += wr
		for c, x := range s.X.RawRowView(r) {
			m[c] += wr * x
		}
	}
	if tot > 0 {
		for c := range m {
			m[c] /= tot
		}
	}
	return m
}

// Iterator walks a set in minibatches. Create one with Minibatches; call
// Next until it returns false (the end of an epoch), then Reset to start a
// new epoch with a fresh shuffle.
type Iterator struct {
	set     *Set
	size    int
	shuffle bool
	rng     *rand.Rand
	perm    []int
	pos     int
	cur     []int
	batch   *mat.Dense
	weights []float64
}

// BatchOptions configures Minibatches. The zero value reshuffles the rows
// at every epoch from random stream 0.
type BatchOptions struct {
	// InOrder keeps the rows in their order instead of reshuffling them.
	InOrder bool
	// Seed selects the random stream of the shuffles.
	Seed uint64
}

// Minibatches returns an iterator over minibatches of the given size (the
// last batch of an epoch may be smaller), in an order set by opts.
func (s *Set) Minibatches(size int, opts BatchOptions) (*Iterator, error) {
	if size < 1 {
		return nil, fmt.Errorf("data: Minibatches: size = %d, want ≥ 1", size)
	}
	if s.Len() == 0 {
		return nil, fmt.Errorf("data: Minibatches: %s has no rows", s.Source)
	}
	it := &Iterator{set: s, size: size, shuffle: !opts.InOrder, rng: rand.New(rand.NewPCG(opts.Seed, 0xba7c4))}
	it.perm = make([]int, s.Len())
	it.Reset()
	return it, nil
}

// Reset starts a new epoch (reshuffling if the iterator shuffles).
func (it *Iterator) Reset() {
	for i := range it.perm {
		it.perm[i] = i
	}
	if it.shuffle {
		it.rng.Shuffle(len(it.perm), func(i, j int) { it.perm[i], it.perm[j] = it.perm[j], it.perm[i] })
	}
	it.pos = 0
}

// Next advances to the next minibatch and reports whether there is one.
func (it *Iterator) Next() bool {
	if it.pos >= len(it.perm) {
		return false
	}
	end := min(it.pos+it.size, len(it.perm))
	it.cur = it.perm[it.pos:end]
	it.pos = end
	b := len(it.cur)
	w := it.set.Width()
	if it.batch == nil || it.batch.RawMatrix().Rows != b {
		it.batch = mat.NewDense(b, w, nil)
		it.weights = make([]float64, b)
	}
	for k, r := range it.cur {
		copy(it.batch.RawRowView(k), it.set.X.RawRowView(r))
		it.weights[k] = it.set.Weight(r)
	}
	return true
}

// Batch returns the current minibatch (rows copied into a buffer that is
// reused by the next call to Next).
func (it *Iterator) Batch() *mat.Dense { return it.batch }

// BatchWeights returns the weights of the current minibatch's rows (all 1
// when the set has no weights); reused by the next call to Next.
func (it *Iterator) BatchWeights() []float64 { return it.weights }

// Indices returns the set rows of the current minibatch.
func (it *Iterator) Indices() []int { return it.cur }

// BatchesPerEpoch returns the number of minibatches in one epoch.
func (it *Iterator) BatchesPerEpoch() int { return (len(it.perm) + it.size - 1) / it.size }
