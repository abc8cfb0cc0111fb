package data

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// ClockRing is the discrete XY (P-state clock) ring of [HTCM20],
//
//	p(v) ∝ exp(β Σ_{i=1}^{N} cos(2π(v_i − v_{i+1})/P)),  v_{N+1} ≡ v_1,
//
// with v_i ∈ {0, …, P−1}. The zero value is not a valid ring: N ≥ 1 and
// P ≥ 2 are required.
type ClockRing struct {
	// N is the number of sites.
	N int
	// P is the number of states of a site.
	P int
	// Beta is the inverse temperature, any finite value (0: independent
	// uniform sites; negative: antiferromagnetic).
	Beta float64
}

// Sample draws `samples` independent configurations of the ring exactly, by
// sequential sampling with the transfer matrix T_ab = exp(β cos(2π(a−b)/P)):
// v_1 is uniform and P(v_{i+1} = b | v_i = a, v_1) ∝ T_ab (T^{N−i})_{b v_1}.
// The vectors T^n e_{v_1} are built once by repeated normalised products (no
// cancellation), so each sample costs O(N·P). seed selects the random
// stream; ctx is checked every few thousand samples. The result is a one-hot
// Potts set (Q = P, column i*P+v).
func (r ClockRing) Sample(ctx context.Context, samples int, seed uint64) (*Set, error) {
	n, p, beta := r.N, r.P, r.Beta
	codes, err := clockCodes(ctx, n, p, samples, beta, seed)
	if err != nil {
		return nil, fmt.Errorf("data: ClockRing.Sample: %w", err)
	}
	x := mat.NewDense(samples, n*p, nil)
	for s := 0; s < samples; s++ {
		row := x.RawRowView(s)
		for i, v := range codes[s*n : (s+1)*n] {
			row[i*p+v] = 1
		}
	}
	return &Set{X: x, Kind: KindPotts, Q: p, Source: fmt.Sprintf("ClockRing(N=%d, P=%d, β=%g)", n, p, beta)}, nil
}

// IsingRing is the periodic 1D Ising chain p(v) ∝ exp(β Σ_i v_i v_{i+1}),
// v ∈ {±1}^N, v_{N+1} ≡ v_1 (the P = 2 clock ring). The zero value is not
// a valid ring: N ≥ 1 is required.
type IsingRing struct {
	// N is the number of spins.
	N int
	// Beta is the inverse temperature, any finite value (0: independent
	// uniform spins).
	Beta float64
}

// Sample draws `samples` independent configurations of the ring exactly
// (see ClockRing.Sample). seed selects the random stream; ctx is checked
// every few thousand samples. The result is a "spin" set.
func (r IsingRing) Sample(ctx context.Context, samples int, seed uint64) (*Set, error) {
	n, beta := r.N, r.Beta
	codes, err := clockCodes(ctx, n, 2, samples, beta, seed)
	if err != nil {
		return nil, fmt.Errorf("data: IsingRing.Sample: %w", err)
	}
	x := mat.NewDense(samples, n, nil)
	raw := x.RawMatrix().Data
	for k, c := range codes {
		raw[k] = float64(1 - 2*c) // state 0 ↦ +1, state 1 ↦ −1
	}
	return &Set{X: x, Kind: KindSpin, Q: 1, Source: fmt.Sprintf("IsingRing(N=%d, β=%g)", n, beta)}, nil
}

// Correlation returns the exact ⟨v_i v_{i+d}⟩ of the ring:
// (t^d + t^{N−d})/(1 + t^N) with t = tanh β.
func (r IsingRing) Correlation(d int) float64 {
	n, t := r.N, math.Tanh(r.Beta)
	return (math.Pow(t, float64(d)) + math.Pow(t, float64(n-d))) / (1 + math.Pow(t, float64(n)))
}

// clockCodes returns samples×n states in 0..p-1, row-major.
func clockCodes(ctx context.Context, n, p, samples int, beta float64, seed uint64) ([]int, error) {
	ctx = rbm.ContextOrDefault(ctx)
	switch {
	case n < 1:
		return nil, fmt.Errorf("ring length N = %d, want ≥ 1", n)
	case p < 2:
		return nil, fmt.Errorf("number of states P = %d, want ≥ 2", p)
	case samples < 1:
		return nil, fmt.Errorf("samples = %d, want ≥ 1", samples)
	case math.IsNaN(beta) || math.IsInf(beta, 0):
		return nil, fmt.Errorf("β = %v, want a finite value", beta)
	case samples > maxGenEntries/(n*p):
		return nil, fmt.Errorf("%d samples of %d sites with %d states exceed %d one-hot entries", samples, n, p, maxGenEntries)
	}
	// T_ab = exp(β cos(2π(a−b)/P)) scaled by exp(−|β|) so that entries are ≤ 1.
	t := make([]float64, p) // circulant: T_ab = t[(a−b) mod P]
	for d := range t {
		t[d] = math.Exp(beta*math.Cos(2*math.Pi*float64(d)/float64(p)) - math.Abs(beta))
	}
	// back[m][b] ∝ (T^m)_{b,0}, each vector normalised to max 1.
	back := make([][]float64, n)
	back[0] = make([]float64, p)
	back[0][0] = 1
	for m := 1; m < n; m++ {
		prev, cur := back[m-1], make([]float64, p)
		mx := 0.0
		for b := 0; b < p; b++ {
			s := 0.0
			for c := 0; c < p; c++ {
				s += t[(b-c+p)%p] * prev[c]
			}
			cur[b] = s
			mx = max(mx, s)
		}
		for b := range cur {
			cur[b] /= mx
		}
		back[m] = cur
	}
	rng := rand.New(rand.NewPCG(seed, 0xc10c))
	codes := make([]int, samples*n)
	prob := make([]float64, p)
	for s := 0; s < samples; s++ {
		if s%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("interrupted after %d of %d samples: %w", s, samples, err)
			}
		}
		v := codes[s*n : (s+1)*n]
		v[0] = rng.IntN(p)
		for i := 1; i < n; i++ {
			a := v[i-1]
			tot := 0.0
			for b := 0; b < p; b++ {
				// (T^{N−i})_{b, v_1} = back[N−i][(b − v_1) mod P] by circulant symmetry.
				prob[b] = t[(a-b+p)%p] * back[n-i][(b-v[0]+p)%p]
				tot += prob[b]
			}
			u := rng.Float64() * tot
			b := 0
			for ; b < p-1; b++ {
				u -= prob[b]
				if u < 0 {
					break
				}
			}
			v[i] = b
		}
	}
	return codes, nil
}

// maxGenEntries bounds samples × sites × states of a generated set (8 GiB of float64),
// so a typo in a size fails at once instead of exhausting memory.
const maxGenEntries = 1 << 30

// Hierarchical generates the hierarchical (phylogenetic) ±1 data of the
// replica paper [ES] (Section VI): the root is (+1,…,+1) of length n; every node of level j
// (j = 1..L) is a copy of its parent with each site flipped independently with
// probability p[j-1]; a node of level j−1 has k[j-1] children. The rows are
// the Π_j k[j] leaves in lexicographic order of their tree path, so siblings
// are contiguous. Expected overlaps: replica.Tree.Overlap ([ES] Eq. 27).
func Hierarchical(n int, k []int, p []float64, seed uint64) (*Set, error) {
	if n < 1 {
		return nil, fmt.Errorf("data: Hierarchical: n = %d, want ≥ 1", n)
	}
	if len(k) == 0 || len(k) != len(p) {
		return nil, fmt.Errorf("data: Hierarchical: %d branching numbers and %d flip probabilities (want the same number ≥ 1)", len(k), len(p))
	}
	leaves := 1
	for j := range k {
		if k[j] < 1 {
			return nil, fmt.Errorf("data: Hierarchical: k[%d] = %d, want ≥ 1", j, k[j])
		}
		if !(p[j] >= 0 && p[j] <= 1) {
			return nil, fmt.Errorf("data: Hierarchical: p[%d] = %v, want a probability", j, p[j])
		}
		leaves *= k[j]
	}
	rng := rand.New(rand.NewPCG(seed, 0x41e7))
	x := mat.NewDense(leaves, n, nil)
	row := 0
	var grow func(level int, parent []float64)
	grow = func(level int, parent []float64) {
		for c := 0; c < k[level]; c++ {
			child := make([]float64, n)
			for i, v := range parent {
				if rng.Float64() < p[level] {
					v = -v
				}
				child[i] = v
			}
			if level == len(k)-1 {
				copy(x.RawRowView(row), child)
				row++
			} else {
				grow(level+1, child)
			}
		}
	}
	root := make([]float64, n)
	for i := range root {
		root[i] = 1
	}
	grow(0, root)
	return &Set{X: x, Kind: KindSpin, Q: 1, Source: fmt.Sprintf("Hierarchical(N=%d, K=%v, p=%v)", n, k, p)}, nil
}

// BarsAndStripes returns the n×n bars-and-stripes set in the usual
// convention: for each of the 2^n bit patterns, the image whose rows copy the
// pattern (stripes) and the image whose columns copy it (bars), 2^(n+1) rows
// of n*n pixels (row-major) in {0,1}. The all-0 and all-1 images appear twice,
// so the empirical entropy is (for n = 3) 2.599 nats, the best average
// log-likelihood any model can reach.
func BarsAndStripes(n int) (*Set, error) {
	if n < 1 || n > 12 {
		return nil, fmt.Errorf("data: BarsAndStripes: n = %d, want 1..12", n)
	}
	m := 1 << n
	x := mat.NewDense(2*m, n*n, nil)
	for mask := 0; mask < m; mask++ {
		stripes, bars := x.RawRowView(mask), x.RawRowView(m+mask)
		for r := 0; r < n; r++ {
			for c := 0; c < n; c++ {
				stripes[r*n+c] = float64(mask >> r & 1)
				bars[r*n+c] = float64(mask >> c & 1)
			}
		}
	}
	return &Set{X: x, Kind: KindBinary, Q: 1, Source: fmt.Sprintf("BarsAndStripes(%d)", n)}, nil
}
