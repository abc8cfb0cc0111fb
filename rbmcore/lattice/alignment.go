package lattice

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
)

// OneHot encodes sequences as the rows of a len(seqs)×(Length·Q) matrix:
// column i·Q+a is 1 when site i holds amino acid a. This is the layout of
// a Potts visible layer and of the weight matrices of CountFeatures.
func OneHot(seqs []Sequence) *mat.Dense {
	if len(seqs) == 0 {
		return &mat.Dense{}
	}
	x := mat.NewDense(len(seqs), Length*Q, nil)
	if err := OneHotTo(x, seqs); err != nil {
		panic(err) // x has the shape OneHotTo wants
	}
	return x
}

// OneHotTo writes the one-hot rows of OneHot(seqs) into dst, which must be
// len(seqs)×(Length·Q); every entry is overwritten. It lets a loop over
// blocks of a long list of sequences reuse one matrix (or a view of its
// first rows, from Slice, for the last block) instead of allocating one
// per block.
func OneHotTo(dst *mat.Dense, seqs []Sequence) error {
	if r, c := dst.Dims(); r != len(seqs) || c != Length*Q {
		return fmt.Errorf("lattice: OneHotTo: destination is %d×%d, want %d×%d for %d sequences", r, c, len(seqs), Length*Q, len(seqs))
	}
	for r, v := range seqs {
		row := dst.RawRowView(r)
		clear(row)
		for i, a := range v {
			row[i*Q+int(a)] = 1
		}
	}
	return nil
}

// ShuffleSites returns the column-shuffled alignment: every site permuted
// independently across the sequences, with a permutation drawn from seed.
// It keeps each site's amino-acid frequencies and destroys every
// correlation between sites: the independent-site null model of an
// alignment (Tubiana, Cocco & Monasson 2019, Fig. 12).
func ShuffleSites(seqs []Sequence, seed uint64) []Sequence {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := append([]Sequence(nil), seqs...)
	for i := 0; i < Length; i++ {
		perm := rng.Perm(len(seqs))
		for r := range out {
			out[r][i] = seqs[perm[r]][i]
		}
	}
	return out
}

// ReadSequences reads an alignment written one sequence per line, as
// Sequence.String prints it (blank lines and surrounding spaces are
// ignored). The file is read line by line, so a corrupt or hostile file
// costs no more memory than its valid sequences; an error names the file
// and the line.
func ReadSequences(path string) ([]Sequence, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lattice: ReadSequences: %w", err)
	}
	defer f.Close()
	var out []Sequence
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		v, err := ParseSequence(text)
		if err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", path, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s, line %d: %w", path, line+1, err)
	}
	return out, nil
}

// WriteSequences writes seqs to path one per line, as ReadSequences reads
// them. The write is atomic: on any error path is left as it was.
func WriteSequences(path string, seqs []Sequence) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		for k := range seqs {
			if err := seqs[k].check(); err != nil {
				return fmt.Errorf("sequence %d: %w", k, err)
			}
			if _, err := io.WriteString(w, seqs[k].String()+"\n"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("lattice: WriteSequences %s: %w", path, err)
	}
	return nil
}

// SingleMutants returns every sequence that differs from some sequence of
// seqs at exactly one site and is not itself in seqs, each once, in
// lexicographic order of their residue indices. There are at most
// Length·(Q−1) per distinct sequence of seqs. With the distinct sequences
// of an alignment it completes the neighbourhood of the data over which an
// exact sum of e^{−F} bounds an RBM's partition function from below: the
// sum over any set of distinct sequences does. The mutants are sorted to
// remove the repeated ones, not hashed, so the memory taken is about that
// of the result: 27 bytes per mutant, a tenth of a map's.
func SingleMutants(seqs []Sequence) []Sequence {
	in := slices.Clone(seqs)
	slices.SortFunc(in, compareSequences)
	in = slices.Compact(in)
	out := make([]Sequence, 0, len(in)*Length*(Q-1))
	for _, v := range in {
		for i := range v {
			w := v
			for a := uint8(0); int(a) < Q; a++ {
				if a != v[i] {
					w[i] = a
					out = append(out, w)
				}
			}
		}
	}
	slices.SortFunc(out, compareSequences)
	out = slices.Compact(out)
	// Drop the members of seqs: both lists are sorted, so one pass over each.
	kept, k := out[:0], 0
	for _, w := range out {
		for k < len(in) && compareSequences(in[k], w) < 0 {
			k++
		}
		if k == len(in) || in[k] != w {
			kept = append(kept, w)
		}
	}
	return slices.Clip(kept)
}

// compareSequences orders sequences lexicographically by residue index.
func compareSequences(a, b Sequence) int { return bytes.Compare(a[:], b[:]) }
