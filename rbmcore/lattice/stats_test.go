package lattice

import (
	"math"
	"sort"
)

// alignmentSummary holds the statistics of Fig. 4 of Tubiana, Cocco &
// Monasson 2019 that tests and the report compare with.
type alignmentSummary struct {
	minEntropy, maxEntropy, meanEntropy float64
	// Mean Frobenius norm of the connected correlation C_ij(a,b) =
	// f_ij(a,b) − f_i(a) f_j(b) over the pairs in contact in S_A and the
	// other pairs with |i − j| > 1.
	contactCorr, otherCorr float64
	// topContacts counts the contacts among the 28 pairs of largest norm
	// (28·28/325 ≈ 2.4 expected by chance).
	topContacts int
}

func alignmentStats(seqs [][]uint8, cm [Length][Length]uint8) alignmentSummary {
	b := float64(len(seqs))
	var f [Length][Q]float64
	for _, v := range seqs {
		for i, a := range v {
			f[i][a] += 1 / b
		}
	}
	s := alignmentSummary{minEntropy: math.Inf(1)}
	for i := range f {
		h := 0.0
		for _, p := range f[i] {
			if p > 0 {
				h -= p * math.Log(p)
			}
		}
		s.minEntropy, s.maxEntropy = min(s.minEntropy, h), max(s.maxEntropy, h)
		s.meanEntropy += h / Length
	}
	nc, no := 0, 0
	type pair struct {
		norm    float64
		contact bool
	}
	var pairs []pair
	for i := 0; i < Length; i++ {
		for j := i + 2; j < Length; j++ {
			var fij [Q][Q]float64
			for _, v := range seqs {
				fij[v[i]][v[j]] += 1 / b
			}
			norm := 0.0
			for a := 0; a < Q; a++ {
				for c := 0; c < Q; c++ {
					d := fij[a][c] - f[i][a]*f[j][c]
					norm += d * d
				}
			}
			pairs = append(pairs, pair{math.Sqrt(norm), cm[i][j] == 1})
			if cm[i][j] == 1 {
				s.contactCorr += math.Sqrt(norm)
				nc++
			} else {
				s.otherCorr += math.Sqrt(norm)
				no++
			}
		}
	}
	sort.Slice(pairs, func(a, b int) bool { return pairs[a].norm > pairs[b].norm })
	for _, p := range pairs[:Contacts] {
		if p.contact {
			s.topContacts++
		}
	}
	s.contactCorr /= float64(nc)
	s.otherCorr /= float64(no)
	return s
}
