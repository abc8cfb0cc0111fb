package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// UnitVectors returns the hidden-unit weight vectors of an N×M weight matrix
// as the rows of an M×N matrix (a copy of wᵀ), the input KMeans and
// VarianceExplained cluster; to cluster units modulo sign set
// KMeansOptions.Mirror.
func UnitVectors(w *mat.Dense) *mat.Dense {
	n, m := w.Dims()
	out := mat.NewDense(m, n, nil)
	out.Copy(w.T())
	return out
}

// KMeansOptions configures KMeans and VarianceExplained. The zero value is
// one k-means++ start, clusters of rows as they are, and random stream 0.
type KMeansOptions struct {
	// Restarts is the number of k-means++ starts, each from its own random
	// draws; the one with the smallest WCSS is returned. Values below 1
	// mean 1.
	Restarts int
	// Mirror lets a row join a cluster with either sign (distance
	// min(‖x−c‖, ‖x+c‖)): with no hidden fields a unit and its mirror
	// w_µ → −w_µ are the same feature, and the count of blocks of [ES]
	// must not see them as two clusters.
	Mirror bool
	// Seed selects the random stream of the k-means++ draws, so a run is
	// reproducible.
	Seed uint64
}

// KMeansResult is a clustering of the rows of a matrix.
type KMeansResult struct {
	// Assign[r] is the cluster of row r.
	Assign []int
	// Centres holds the k cluster centres as rows.
	Centres *mat.Dense
	// WCSS is the within-cluster sum of squared distances.
	WCSS float64
	// Iterations is the number of Lloyd iterations of the best restart.
	Iterations int
	// Signs[r] is +1, or −1 when row r was matched to its centre mirrored
	// (always +1 without mirror).
	Signs []float64
}

// KMeans clusters the rows of x into k clusters: k-means++ initial centres
// then Lloyd iterations to convergence, opts.Restarts times; the start with
// the smallest WCSS is returned (see KMeansOptions). ctx is checked at every
// iteration.
func KMeans(ctx context.Context, x *mat.Dense, k int, opts KMeansOptions) (*KMeansResult, error) {
	ctx = rbm.ContextOrDefault(ctx)
	restarts, mirror, seed := opts.Restarts, opts.Mirror, opts.Seed
	b, n := x.Dims()
	if k < 1 || k > b {
		return nil, fmt.Errorf("analysis: KMeans: k = %d, want 1..%d (the number of rows)", k, b)
	}
	restarts = max(restarts, 1)
	rng := rand.New(rand.NewPCG(seed, 0x4ea5))
	norms := make([]float64, b)
	for r := 0; r < b; r++ {
		row := x.RawRowView(r)
		norms[r] = mat.Dot(mat.NewVecDense(n, row), mat.NewVecDense(n, row))
	}
	var best *KMeansResult
	dots := mat.NewDense(b, k, nil)
	for rep := 0; rep < restarts; rep++ {
		centres := kmeansPlusPlus(x, norms, k, mirror, rng)
		assign := make([]int, b)
		signs := make([]float64, b)
		for r := range assign {
			assign[r] = -1
		}
		var wcss float64
		iter := 0
		for ; iter < 300; iter++ {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("analysis: KMeans: %w", err)
			}
			// Squared distances ‖x‖² − 2x·c + ‖c‖² through one matrix product.
			dots.Mul(x, centres.T())
			cn := make([]float64, k)
			for c := 0; c < k; c++ {
				row := centres.RawRowView(c)
				for _, v := range row {
					cn[c] += v * v
				}
			}
			changed := false
			wcss = 0
			for r := 0; r < b; r++ {
				bc, bd, bs := 0, math.Inf(1), 1.0
				for c, d := range dots.RawRowView(r) {
					sg := 1.0
					if mirror && d < 0 {
						sg = -1
					}
					if dist := norms[r] - 2*sg*d + cn[c]; dist < bd {
						bc, bd, bs = c, dist, sg
					}
				}
				wcss += math.Max(bd, 0)
				if assign[r] != bc || signs[r] != bs {
					assign[r], signs[r], changed = bc, bs, true
				}
			}
			if !changed {
				break
			}
			// Update the centres; an emptied cluster takes the worst-fitted row.
			centres.Zero()
			count := make([]int, k)
			for r := 0; r < b; r++ {
				count[assign[r]]++
				cr := centres.RawRowView(assign[r])
				for i, v := range x.RawRowView(r) {
					cr[i] += signs[r] * v
				}
			}
			for c := 0; c < k; c++ {
				cr := centres.RawRowView(c)
				if count[c] == 0 {
					copy(cr, x.RawRowView(rng.IntN(b)))
					continue
				}
				for i := range cr {
					cr[i] /= float64(count[c])
				}
			}
		}
		// Exact WCSS for the final assignment (the expansion above can lose digits).
		wcss = 0
		for r := 0; r < b; r++ {
			cr := centres.RawRowView(assign[r])
			for i, v := range x.RawRowView(r) {
				d := signs[r]*v - cr[i]
				wcss += d * d
			}
		}
		if best == nil || wcss < best.WCSS {
			best = &KMeansResult{Assign: assign, Centres: mat.DenseCopyOf(centres), WCSS: wcss, Iterations: iter, Signs: signs}
		}
	}
	return best, nil
}

// kmeansPlusPlus picks k initial centres with D² sampling (distance to the
// nearest centre or, with mirror, to its mirror image).
func kmeansPlusPlus(x *mat.Dense, norms []float64, k int, mirror bool, rng *rand.Rand) *mat.Dense {
	b, n := x.Dims()
	centres := mat.NewDense(k, n, nil)
	copy(centres.RawRowView(0), x.RawRowView(rng.IntN(b)))
	d2 := make([]float64, b)
	for r := range d2 {
		d2[r] = math.Inf(1)
	}
	for c := 1; c < k; c++ {
		prev := centres.RawRowView(c - 1)
		tot := 0.0
		for r := 0; r < b; r++ {
			s, sm := 0.0, 0.0
			for i, v := range x.RawRowView(r) {
				s += (v - prev[i]) * (v - prev[i])
				sm += (v + prev[i]) * (v + prev[i])
			}
			if mirror {
				s = math.Min(s, sm)
			}
			d2[r] = math.Min(d2[r], s)
			tot += d2[r]
		}
		pick := rng.IntN(b)
		if tot > 0 {
			u := rng.Float64() * tot
			for r := 0; r < b; r++ {
				if u -= d2[r]; u < 0 {
					pick = r
					break
				}
			}
		}
		copy(centres.RawRowView(c), x.RawRowView(pick))
	}
	return centres
}

// VarianceExplained returns VE(k) = 1 − WCSS(k)/TSS for k = 1..kmax (index
// k−1), with TSS = WCSS(1) (the sum of squares about the mean row, or about
// the best mirror-invariant centre with opts.Mirror): the curve of [ES]
// Fig. 3A, which saturates at the number of blocks of identical hidden units.
// Pass UnitVectors(W) and Mirror: true to cluster hidden units without
// fields. The clustering for k uses the random stream opts.Seed + k.
func VarianceExplained(ctx context.Context, x *mat.Dense, kmax int, opts KMeansOptions) ([]float64, error) {
	ctx = rbm.ContextOrDefault(ctx)
	b, _ := x.Dims()
	if kmax < 1 || kmax > b {
		return nil, fmt.Errorf("analysis: VarianceExplained: kmax = %d, want 1..%d", kmax, b)
	}
	one, err := KMeans(ctx, x, 1, opts)
	if err != nil {
		return nil, err
	}
	tss := one.WCSS
	ve := make([]float64, kmax)
	for k := 1; k <= kmax; k++ {
		ok := opts
		ok.Seed += uint64(k)
		res, err := KMeans(ctx, x, k, ok)
		if err != nil {
			return nil, err
		}
		if tss > 0 {
			ve[k-1] = 1 - res.WCSS/tss
		} else {
			ve[k-1] = 1
		}
	}
	return ve, nil
}
