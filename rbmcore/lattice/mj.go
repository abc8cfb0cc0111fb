package lattice

import (
	_ "embed" // mj1996.tsv
	"fmt"
	"strconv"
	"strings"
)

// Alphabet is the amino-acid alphabet of sequences: residue state k is the
// letter Alphabet[k]. It is data.ProteinAlphabet without the gap, so an
// alignment written by WriteFASTA and read by data.LoadAlignment with
// AlignmentOptions{Alphabet: lattice.Alphabet} has the same states.
const Alphabet = "ACDEFGHIKLMNPQRSTVWY"

// Q is the number of amino acids.
const Q = len(Alphabet)

// Energies is a symmetric table of contact energies ε(a, b) between amino
// acids in Alphabet order, in units of the thermal energy RT (Tubiana,
// Cocco & Monasson 2019, Eq. 19).
type Energies [Q][Q]float64

// mjTSV is Table III of Miyazawa & Jernigan (1996), J. Mol. Biol. 256,
// 623–644: the contact energies e_ij in units of RT, in the table's own
// residue order (a header row and column of one-letter codes).
//
//go:embed mj1996.tsv
var mjTSV string

// mj is mjTSV parsed, in Alphabet order.
var mj = func() Energies {
	e, err := parseEnergies(mjTSV, "mj1996.tsv")
	if err != nil {
		panic(err) // the embedded table is constant; TestMiyazawaJernigan reads it
	}
	return e
}()

// MiyazawaJernigan returns the Miyazawa–Jernigan contact energies
// (Miyazawa & Jernigan 1996, Table III), the ε of the lattice-protein
// model of Tubiana, Cocco & Monasson 2019 and Jacquin et al. 2016, in RT
// units: from −7.37 (Leu–Leu) to −0.12 (Lys–Lys).
func MiyazawaJernigan() Energies { return mj }

// parseEnergies reads a tab-separated table of contact energies: '#'
// comment lines, a header "aa" followed by the 20 one-letter codes in any
// order, and one row per amino acid. It checks that every amino acid of
// Alphabet appears once in each direction and that the table is
// symmetric.
func parseEnergies(text, name string) (Energies, error) {
	var e Energies
	var cols []int // column k of a row holds the energy with Alphabet[cols[k]]
	seen := make(map[int]bool)
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if cols == nil {
			if f[0] != "aa" || len(f) != Q+1 {
				return e, fmt.Errorf("lattice: %s:%d: header %q, want \"aa\" and %d amino acids", name, n+1, line, Q)
			}
			have := make(map[int]bool)
			for _, c := range f[1:] {
				k := strings.Index(Alphabet, c)
				if len(c) != 1 || k < 0 || have[k] {
					return e, fmt.Errorf("lattice: %s:%d: header entry %q is not a new amino acid of %s", name, n+1, c, Alphabet)
				}
				have[k] = true
				cols = append(cols, k)
			}
			continue
		}
		a := strings.Index(Alphabet, f[0])
		if len(f[0]) != 1 || a < 0 || seen[a] || len(f) != Q+1 {
			return e, fmt.Errorf("lattice: %s:%d: row %q is not a new amino acid with %d energies", name, n+1, f[0], Q)
		}
		seen[a] = true
		for k, v := range f[1:] {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return e, fmt.Errorf("lattice: %s:%d: column %d: %w", name, n+1, k+2, err)
			}
			e[a][cols[k]] = x
		}
	}
	if len(seen) != Q {
		return e, fmt.Errorf("lattice: %s: %d amino-acid rows, want %d", name, len(seen), Q)
	}
	for a := 0; a < Q; a++ {
		for b := 0; b < a; b++ {
			if e[a][b] != e[b][a] {
				return e, fmt.Errorf("lattice: %s: ε(%c,%c) = %v but ε(%c,%c) = %v: the table is not symmetric",
					name, Alphabet[a], Alphabet[b], e[a][b], Alphabet[b], Alphabet[a], e[b][a])
			}
		}
	}
	return e, nil
}
