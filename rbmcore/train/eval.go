package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// pseudoLikelihood returns the mean over rows of rbm's exact log
// pseudo-likelihood Σ_i log P(v_i | v_{−i}) (nats per sample, [BR21]
// §3.4), or with a non-nil rng of its unbiased estimate
// StochasticPseudoLikelihood; NaN for visible layers where it is not
// defined (continuous units). Rows go in chunks of 100 with ctx checked
// between chunks.
func pseudoLikelihood(ctx context.Context, m *rbm.RBM, v *mat.Dense, rng *rand.Rand) (float64, error) {
	if _, ok := m.Visible.(rbm.Discrete); !ok {
		return math.NaN(), nil
	}
	rows, cols := v.Dims()
	s := 0.0
	for r0 := 0; r0 < rows; r0 += 100 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		r1 := min(r0+100, rows)
		chunk := v.Slice(r0, r1, 0, cols).(*mat.Dense)
		var pl []float64
		var err error
		if rng != nil {
			pl, err = m.StochasticPseudoLikelihood(ctx, rng, chunk)
		} else {
			pl, err = m.PseudoLikelihood(ctx, chunk)
		}
		if err != nil {
			return 0, fmt.Errorf("pseudo-likelihood: %w", err)
		}
		for _, x := range pl {
			s += x
		}
	}
	s /= float64(rows)
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("pseudo-likelihood is %v: the model diverged", s)
	}
	return s, nil
}

// maxExactLogZ bounds the configurations logLikelihood enumerates before
// switching to AIS.
const maxExactLogZ = 1 << 20

// configurations returns the number of configurations of a discrete layer
// (rbm.Discrete: binary, spin, Potts), or 0 when continuous or above
// maxExactLogZ.
func configurations(l rbm.Layer) int {
	d, ok := l.(rbm.Discrete)
	if !ok {
		return 0
	}
	base := len(d.UnitValues())
	n := 1
	for i := 0; i < l.Len(); i++ {
		if n *= base; n > maxExactLogZ {
			return 0
		}
	}
	return n
}

// logLikelihood returns the mean log-likelihood of the rows of v and its
// bounds: exact (rbm's ExactLogZ) when a discrete layer has at most 2^20
// configurations, otherwise from rbm's AIS (base model fitted to the
// training data) with ±3 standard-error bounds.
func logLikelihood(ctx context.Context, m *rbm.RBM, v *mat.Dense, train *data.Set, cfg Monitor, seed uint64) (ll, lo, hi float64, err error) {
	nan := math.NaN()
	if configurations(m.Visible) > 0 || configurations(m.Hidden) > 0 {
		logZ, err := m.ExactLogZ(ctx)
		if err != nil {
			return nan, nan, nan, err
		}
		ll, err = m.LogLikelihood(v, logZ)
		return ll, ll, ll, err
	}
	base, err := rbm.BaseFromData(m.Visible, train.X, 1e-3)
	if err != nil {
		return nan, nan, nan, err
	}
	res, err := rbm.AIS{Runs: cfg.AISRuns, Steps: cfg.AISBetas, Base: base, Seed: seed}.Run(ctx, m, nil)
	if err != nil {
		return nan, nan, nan, err
	}
	ll, err = m.LogLikelihood(v, res.LogZ)
	if err != nil {
		return nan, nan, nan, err
	}
	// A larger log Z gives a lower likelihood: the bounds swap.
	return ll, ll + res.LogZ - res.LogZHigh, ll + res.LogZ - res.LogZLow, nil
}
