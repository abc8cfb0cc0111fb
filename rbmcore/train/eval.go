package train

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// pseudoLikelihood returns the mean over rows of the exact log
// pseudo-likelihood Σ_i log P(v_i | v_{−i}) (nats per sample; seed 001
// §3.4) for binary, spin or Potts visible layers.
func pseudoLikelihood(m *rbm.RBM, v *mat.Dense) (float64, error) {
	kind := m.Visible.Kind()
	var theta []float64
	switch kind {
	case "binary", "spin", "potts":
		theta = m.Visible.Params()[0]
	default:
		return math.NaN(), nil // not defined for continuous visible units
	}
	rows, nv := v.Dims()
	n, q := m.Visible.Len(), m.Visible.States()
	nh := rbm.Width(m.Hidden)
	in := m.HiddenInput(v)
	w := m.W.RawMatrix().Data
	shifted := make([]float64, nh)
	var g [1]float64
	total := 0.0
	states := q
	if q == 1 {
		states = 2
	}
	lw := make([]float64, states)
	alt := make([]float64, q)
	for b := 0; b < rows; b++ {
		x, ib := v.RawRowView(b), in.RawRowView(b)
		for i := 0; i < n; i++ {
			cur := -1
			for s := 0; s < states; s++ {
				// Column values of unit i in candidate state s, and the change Δ.
				clear(alt)
				switch kind {
				case "binary":
					alt[0] = float64(s)
				case "spin":
					alt[0] = float64(2*s - 1)
				default:
					alt[s] = 1
				}
				same := true
				field := 0.0
				for a := 0; a < q; a++ {
					if alt[a] != x[i*q+a] {
						same = false
					}
					field += theta[i*q+a] * alt[a]
				}
				if same {
					cur = s
				}
				copy(shifted, ib)
				for a := 0; a < q; a++ {
					if d := alt[a] - x[i*q+a]; d != 0 {
						row := w[(i*q+a)*nh : (i*q+a+1)*nh]
						for j := range shifted {
							shifted[j] += d * row[j]
						}
					}
				}
				m.Hidden.CGF(shifted, g[:])
				lw[s] = field + g[0]
			}
			if cur < 0 {
				return 0, fmt.Errorf("pseudo-likelihood: row %d, unit %d is not a valid %s state", b, i, kind)
			}
			mx := math.Inf(-1)
			for _, l := range lw {
				mx = math.Max(mx, l)
			}
			z := 0.0
			for _, l := range lw {
				z += math.Exp(l - mx)
			}
			total += lw[cur] - mx - math.Log(z)
		}
	}
	_ = nv
	pl := total / float64(rows)
	if math.IsNaN(pl) || math.IsInf(pl, 0) {
		return 0, fmt.Errorf("pseudo-likelihood is %v: the model diverged", pl)
	}
	return pl, nil
}

// logLikelihood returns the mean log-likelihood of the rows of v and its
// bounds: exact (rbm's ExactLogZ) when the model is small enough.
func logLikelihood(ctx context.Context, m *rbm.RBM, v *mat.Dense, train *data.Set, cfg Monitor, seed uint64) (ll, lo, hi float64, err error) {
	logZ, err := m.ExactLogZ(ctx)
	if err != nil {
		return math.NaN(), math.NaN(), math.NaN(), err
	}
	ll, err = m.LogLikelihood(v, logZ)
	return ll, ll, ll, err
}
