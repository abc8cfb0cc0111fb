package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"gonum.org/v1/gonum/mat"
)

// sitePL returns log P(v_i | v_{-i}) for site i of one row, given the
// row's hidden input in = vW, using buffers alt (k×nh) and g (k).
func (m *RBM) sitePL(v, in []float64, i int, vals [][]float64, alt, g, e []float64) float64 {
	q := m.Visible.States()
	nh := Width(m.Hidden)
	wd := m.W.RawMatrix()
	cur := v[i*q : (i+1)*q]
	th := m.Visible.Params()[0][i*q : (i+1)*q]
	k := len(vals)
	curIdx := 0
	for b, val := range vals {
		row := alt[b*nh : (b+1)*nh]
		copy(row, in)
		same := true
		du := 0.0 // -U_v(v with site i = val) + U_v(v), fields only
		for a := 0; a < q; a++ {
			d := val[a] - cur[a]
			if d != 0 {
				same = false
				du += th[a] * d
				wr := wd.Data[(i*q+a)*wd.Stride : (i*q+a)*wd.Stride+nh]
				for j, w := range wr {
					row[j] += d * w
				}
			}
		}
		if same {
			curIdx = b
		}
		e[b] = du
	}
	m.Hidden.CGF(alt[:k*nh], g[:k])
	for b := range g[:k] {
		g[b] += e[b]
	}
	return g[curIdx] - mathx.LogSumExp(g[:k])
}

// PseudoLikelihood returns, for each row of v, the exact log
// pseudo-likelihood Σ_i log P(v_i | v_{-i}) (nats per configuration: divide
// by the number of visible units for a per-site value). Every conditional
// is computed from the free-energy differences of the site's values, so the
// cost is O(N q M) per row. For Gaussian and ReLU visible layers the
// conditional density of each site is normalised by numerical quadrature
// over the range holding its mass (about 400 evaluations of the hidden
// CGF per site), so the value is the log of a density. Other visible layers
// are an error. ctx is checked between rows, so a long evaluation (e.g. a
// full test set) stops with its error when it is cancelled; a nil ctx is
// ContextOrDefault(nil).
func (m *RBM) PseudoLikelihood(ctx context.Context, v *mat.Dense) ([]float64, error) {
	return m.pl(ContextOrDefault(ctx), nil, v)
}

// StochasticPseudoLikelihood returns, for each row of v, N·log P(v_i |
// v_{-i}) for one site i drawn uniformly per row from rng: an unbiased
// estimate of PseudoLikelihood at 1/N of the cost. ctx is checked as by
// PseudoLikelihood.
func (m *RBM) StochasticPseudoLikelihood(ctx context.Context, rng *rand.Rand, v *mat.Dense) ([]float64, error) {
	if rng == nil {
		return nil, fmt.Errorf("rbm: StochasticPseudoLikelihood: nil rng")
	}
	return m.pl(ContextOrDefault(ctx), rng, v)
}

func (m *RBM) pl(ctx context.Context, rng *rand.Rand, v *mat.Dense) ([]float64, error) {
	d, rows := rowsData(v, Width(m.Visible), "visible batch")
	if q, ok := m.Visible.(QuadraticPotential); ok {
		return m.plContinuous(ctx, q, rng, d, rows)
	}
	dv, ok := m.Visible.(Discrete)
	if !ok {
		return nil, fmt.Errorf("rbm: pseudo-likelihood needs a discrete visible layer or one with a quadratic potential (binary, spin, potts, gaussian, relu), not %s", m.Visible.Kind())
	}
	vals := dv.UnitValues()
	n, nv, nh := m.Visible.Len(), Width(m.Visible), Width(m.Hidden)
	in := make([]float64, rows*nh)
	// The inputs in slices of rows, so that a cancellation is seen between
	// them rather than after one product over the whole batch.
	const gemmRows = 512
	for r0 := 0; r0 < rows; r0 += gemmRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r1 := min(r0+gemmRows, rows)
		gemm(d[r0*nv:r1*nv], r1-r0, m.W.RawMatrix(), false, in[r0*nh:r1*nh])
	}
	out := make([]float64, rows)
	var sites []int
	if rng != nil {
		sites = make([]int, rows)
		for r := range sites {
			sites[r] = rng.IntN(n)
		}
	}
	k := len(vals)
	err := forBlocks(rows, streams(0, rows, 0), func(r0, r1 int, _ *rand.Rand) error {
		alt, g, e := make([]float64, k*nh), make([]float64, k), make([]float64, k)
		for r := r0; r < r1; r++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			row, ir := d[r*nv:(r+1)*nv], in[r*nh:(r+1)*nh]
			if sites != nil {
				out[r] = float64(n) * m.sitePL(row, ir, sites[r], vals, alt, g, e)
				continue
			}
			s := 0.0
			for i := 0; i < n; i++ {
				s += m.sitePL(row, ir, i, vals, alt, g, e)
			}
			out[r] = s
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for r, x := range out {
		if math.IsNaN(x) || x > 1e-9 {
			return nil, fmt.Errorf("rbm: pseudo-likelihood of row %d is %v: the row is not a valid %s state or the model overflows", r, x, m.Visible.Kind())
		}
	}
	return out, nil
}
