package data

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// ProteinAlphabet is the default alignment alphabet: the 20 amino acids
// followed by the gap, q = 21 (the alignments of [TCM19]).
const ProteinAlphabet = "ACDEFGHIKLMNPQRSTVWY-"

// AlignmentOptions controls LoadAlignment. The zero value reads FASTA with
// ProteinAlphabet and rejects characters outside it.
type AlignmentOptions struct {
	// Alphabet lists the allowed characters; the position of a character is
	// its Potts state. Letters are matched case-insensitively (except
	// insertions in A2M mode). Default ProteinAlphabet.
	Alphabet string
	// A2M drops insert states: lower-case letters and '.' (A2M/A3M
	// convention), keeping upper-case letters and '-' (match columns). In
	// FASTA mode (A2M false) lower case is upper-cased and '.' read as '-'.
	A2M bool
	// Unknown, when non-zero, is the alphabet character that replaces
	// characters outside the alphabet (e.g. '-' for X, B, Z); when zero such
	// characters are an error naming the line and column.
	Unknown byte
}

// Alignment is a multiple sequence alignment coded as Potts states.
type Alignment struct {
	// Names holds the header line (without '>') of each sequence.
	Names []string
	// Seqs holds each aligned sequence as states 0..len(Alphabet)-1.
	Seqs [][]uint8
	// Alphabet maps states to characters.
	Alphabet string
	// Source is the file the alignment was read from.
	Source string
}

// LoadAlignment reads a FASTA or A2M alignment ('>' header lines, sequence
// possibly wrapped over several lines). All sequences must have the same
// aligned length; errors name the file and line.
func LoadAlignment(path string, opts AlignmentOptions) (*Alignment, error) {
	c, err := newAlignmentCode(opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return readAlignment(f, path, c)
}

// alignmentCode maps the characters of an alignment file to states.
type alignmentCode struct {
	alpha   string
	state   [256]int16 // -1: not in the alphabet
	unknown int16      // the state of characters not in the alphabet; -1: an error
	a2m     bool       // drop insert states (AlignmentOptions.A2M)
}

// newAlignmentCode checks opts and builds the character map.
func newAlignmentCode(opts AlignmentOptions) (*alignmentCode, error) {
	c := &alignmentCode{alpha: opts.Alphabet, unknown: -1, a2m: opts.A2M}
	if c.alpha == "" {
		c.alpha = ProteinAlphabet
	}
	if len(c.alpha) > 255 {
		return nil, fmt.Errorf("data: LoadAlignment: alphabet of %d characters (max 255)", len(c.alpha))
	}
	for i := range c.state {
		c.state[i] = -1
	}
	for i := 0; i < len(c.alpha); i++ {
		ch := c.alpha[i]
		c.state[ch] = int16(i)
		if 'a' <= ch && ch <= 'z' {
			c.state[ch-'a'+'A'] = int16(i)
		} else if 'A' <= ch && ch <= 'Z' {
			c.state[ch-'A'+'a'] = int16(i)
		}
	}
	if opts.Unknown != 0 {
		c.unknown = c.state[opts.Unknown]
		if c.unknown < 0 {
			return nil, fmt.Errorf("data: LoadAlignment: Unknown = %q is not in the alphabet %q", opts.Unknown, c.alpha)
		}
	}
	return c, nil
}

// readAlignment reads the alignment file path from r (see LoadAlignment).
func readAlignment(r io.Reader, path string, code *alignmentCode) (*Alignment, error) {
	alpha := code.alpha
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<28)
	a := &Alignment{Alphabet: alpha, Source: path}
	var cur []uint8
	line, headerLine, length := 0, 0, -1
	finish := func() error {
		if len(a.Names) == 0 {
			return nil
		}
		if len(cur) == 0 {
			return fmt.Errorf("data: %s:%d: sequence %q is empty", path, headerLine, a.Names[len(a.Names)-1])
		}
		if length < 0 {
			length = len(cur)
		} else if len(cur) != length {
			return fmt.Errorf("data: %s:%d: sequence %q has aligned length %d, the first sequence has %d",
				path, headerLine, a.Names[len(a.Names)-1], len(cur), length)
		}
		a.Seqs = append(a.Seqs, cur)
		cur = nil
		return nil
	}
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), " \t\r")
		if text == "" {
			continue
		}
		if text[0] == '>' {
			if err := finish(); err != nil {
				return nil, err
			}
			a.Names = append(a.Names, strings.TrimSpace(text[1:]))
			headerLine = line
			continue
		}
		if len(a.Names) == 0 {
			if text[0] == ';' || text[0] == '#' {
				continue
			}
			return nil, fmt.Errorf("data: %s:%d: sequence data before the first '>' header", path, line)
		}
		for col := 0; col < len(text); col++ {
			c := text[col]
			if code.a2m && (c == '.' || ('a' <= c && c <= 'z')) {
				continue
			}
			if c == '.' && !code.a2m {
				c = '-'
			}
			k := code.state[c]
			if k < 0 {
				k = code.unknown
			}
			if k < 0 {
				return nil, fmt.Errorf("data: %s:%d:%d: character %q not in the alphabet %q", path, line, col+1, c, alpha)
			}
			cur = append(cur, uint8(k))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("data: %s: after line %d: %w", path, line, err)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(a.Seqs) == 0 {
		return nil, fmt.Errorf("data: %s: no sequences", path)
	}
	return a, nil
}

// Len returns the number of sequences.
func (a *Alignment) Len() int { return len(a.Seqs) }

// Q returns the number of Potts states (the alphabet size).
func (a *Alignment) Q() int { return len(a.Alphabet) }

// Set returns the alignment as a one-hot Potts set (kind "potts", Q =
// alphabet size, column i*Q+a for site i in state a) without weights.
func (a *Alignment) Set() *Set {
	q := a.Q()
	n := len(a.Seqs[0])
	x := mat.NewDense(len(a.Seqs), n*q, nil)
	for s, seq := range a.Seqs {
		row := x.RawRowView(s)
		for i, c := range seq {
			row[i*q+int(c)] = 1
		}
	}
	return &Set{X: x, Kind: KindPotts, Q: q, Source: a.Source}
}

// IdentityWeights returns the standard sequence reweighting: the weight of
// sequence s is 1/n_s, where n_s counts the sequences (s itself included)
// whose fraction of identical aligned positions with s (gaps included) is
// at least threshold (e.g. 0.8). The sum of the weights is the effective
// number of sequences. The O(B²N) comparison checks ctx between rows.
func (a *Alignment) IdentityWeights(ctx context.Context, threshold float64) ([]float64, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if !(threshold >= 0 && threshold <= 1) {
		return nil, fmt.Errorf("data: IdentityWeights: threshold = %v, want a value in [0, 1]", threshold)
	}
	b := len(a.Seqs)
	n := len(a.Seqs[0])
	need := int(math.Ceil(threshold*float64(n) - 1e-9)) // identical positions needed
	count := make([]int, b)
	for s := 0; s < b; s++ {
		if s%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("data: IdentityWeights: %w", err)
			}
		}
		count[s]++
		x := a.Seqs[s]
		for t := s + 1; t < b; t++ {
			y := a.Seqs[t]
			same := 0
			for i := range x {
				if x[i] == y[i] {
					same++
				}
			}
			if same >= need {
				count[s]++
				count[t]++
			}
		}
	}
	w := make([]float64, b)
	for s := range w {
		w[s] = 1 / float64(count[s])
	}
	return w, nil
}
