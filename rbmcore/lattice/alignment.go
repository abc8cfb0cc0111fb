package lattice

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
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
	for r, v := range seqs {
		row := x.RawRowView(r)
		for i, a := range v {
			row[i*Q+int(a)] = 1
		}
	}
	return x
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
