package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"gonum.org/v1/gonum/mat"
)

// siteValues lists the values one unit of a discrete visible layer can take,
// as one-hot rows of width States().
func siteValues(l Layer) ([][]float64, error) {
	switch l.Kind() {
	case "binary":
		return [][]float64{{0}, {1}}, nil
	case "spin":
		return [][]float64{{-1}, {1}}, nil
	case "potts":
		q := l.States()
		vals := make([][]float64, q)
		for a := range vals {
			vals[a] = make([]float64, q)
			vals[a][a] = 1
		}
		return vals, nil
	}
	return nil, fmt.Errorf("rbm: pseudo-likelihood needs a binary, spin, potts, gaussian or relu visible layer, not %s", l.Kind())
}

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
// are an error.
// It cannot be interrupted; PseudoLikelihoodContext can.
func (m *RBM) PseudoLikelihood(v *mat.Dense) ([]float64, error) {
	return m.pl(context.TODO(), nil, v)
}

// PseudoLikelihoodContext is PseudoLikelihood checking ctx between rows, so
// a long evaluation (e.g. a full test set) can be interrupted.
func (m *RBM) PseudoLikelihoodContext(ctx context.Context, v *mat.Dense) ([]float64, error) {
	return m.pl(ContextOrDefault(ctx), nil, v)
}

// StochasticPseudoLikelihood returns, for each row of v, N·log P(v_i |
// v_{-i}) for one site i drawn uniformly per row from rng: an unbiased
// estimate of PseudoLikelihood at 1/N of the cost.
func (m *RBM) StochasticPseudoLikelihood(rng *rand.Rand, v *mat.Dense) ([]float64, error) {
	if rng == nil {
		return nil, fmt.Errorf("rbm: StochasticPseudoLikelihood: nil rng")
	}
	return m.pl(context.TODO(), rng, v)
}

func (m *RBM) pl(ctx context.Context, rng *rand.Rand, v *mat.Dense) ([]float64, error) {
	d, rows := rowsData(v, Width(m.Visible), "visible batch")
	if k := m.Visible.Kind(); k == "gaussian" || k == "relu" {
		return m.plContinuous(ctx, rng, d, rows)
	}
	vals, err := siteValues(m.Visible)
	if err != nil {
		return nil, err
	}
	n, nv, nh := m.Visible.Len(), Width(m.Visible), Width(m.Hidden)
	in := make([]float64, rows*nh)
	gemm(d, rows, m.W.RawMatrix(), false, in)
	out := make([]float64, rows)
	var sites []int
	if rng != nil {
		sites = make([]int, rows)
		for r := range sites {
			sites[r] = rng.IntN(n)
		}
	}
	k := len(vals)
	err = forBlocks(rows, streams(0, rows, 0), func(r0, r1 int, _ *rand.Rand) error {
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
