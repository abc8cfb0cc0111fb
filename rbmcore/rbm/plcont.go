package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// The 8-point Gauss–Legendre rule on [-1, 1] (nodes ±gl8x, weights gl8w).
var (
	gl8x = [4]float64{0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363}
	gl8w = [4]float64{0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763}
)

// Quadrature of the continuous conditionals: plPanels panels of the
// 8-point rule over the range where the log-density is within plDrop nats
// of its largest value found.
const (
	plPanels = 48
	plDrop   = 40.0
)

// continuousSite integrates the conditional of one site of a Gaussian or
// ReLU visible layer (see plContinuous). Its buffers serve one row block.
type continuousSite struct {
	m          *RBM
	gamma, th  []float64
	lower      float64 // support: [lower, ∞) (−∞ for Gaussian)
	j, in, out []float64
}

// logDensity returns g(x) = −U_i(x) + Σ_µ Γ_µ(J_µ + w_iµ x), the
// unnormalised log-density of site i given the rest (J: the hidden inputs
// without site i).
func (c *continuousSite) logDensity(i int, x float64) float64 {
	if x < c.lower {
		return math.Inf(-1)
	}
	wd := c.m.W.RawMatrix()
	wr := wd.Data[i*wd.Stride : i*wd.Stride+wd.Cols]
	for k, w := range wr {
		c.in[k] = c.j[k] + w*x
	}
	c.m.Hidden.CGF(c.in, c.out)
	return -0.5*c.gamma[i]*x*x + c.th[i]*x + c.out[0]
}

// logNorm returns log ∫ exp(g(x)) dx over the support, with g from
// logDensity, starting the search for the mass at x0 (the observed value).
// The range grows by doubling steps from x0 until g falls plDrop nats below
// the largest value seen; the integral is then a composite Gauss–Legendre
// sum over that range.
func (c *continuousSite) logNorm(i int, x0 float64) (float64, error) {
	s := 1 / math.Sqrt(c.gamma[i])
	top := c.logDensity(i, x0)
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return 0, fmt.Errorf("log-density %v at the observed value %v", top, x0)
	}
	edge := func(dir float64) float64 {
		for d := s; ; d *= 2 {
			x := x0 + dir*d
			if x <= c.lower {
				return c.lower
			}
			g := c.logDensity(i, x)
			if math.IsNaN(g) {
				return math.NaN()
			}
			top = math.Max(top, g)
			if g < top-plDrop {
				return x
			}
			if d > 1e12*s {
				return math.NaN()
			}
		}
	}
	hi := edge(1)
	lo := edge(-1)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, fmt.Errorf("the conditional density does not decay (the model is not normalisable)")
	}
	width := (hi - lo) / plPanels
	logs := make([]float64, 0, plPanels*8)
	for p := 0; p < plPanels; p++ {
		mid := lo + (float64(p)+0.5)*width
		for k, x := range gl8x {
			lw := math.Log(gl8w[k] * width / 2)
			logs = append(logs, lw+c.logDensity(i, mid-x*width/2), lw+c.logDensity(i, mid+x*width/2))
		}
	}
	return mathx.LogSumExp(logs), nil
}

// plContinuous is pl for Gaussian and ReLU visible layers: each conditional
// log P(v_i | v_−i) = g(v_i) − log ∫ exp(g) is computed by quadrature
// (continuousSite.logNorm), about 400 evaluations of the hidden CGF per site.
func (m *RBM) plContinuous(ctx context.Context, vis QuadraticPotential, rng *rand.Rand, d []float64, rows int) ([]float64, error) {
	n, nh := m.Visible.Len(), Width(m.Hidden)
	gamma, theta, lower := vis.Quadratic()
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
	wd := m.W.RawMatrix()
	err := forBlocks(rows, streams(0, rows, 0), func(r0, r1 int, _ *rand.Rand) error {
		c := &continuousSite{m: m, gamma: gamma, th: theta, lower: lower,
			j: make([]float64, nh), in: make([]float64, nh), out: make([]float64, 1)}
		site := func(r, i int) (float64, error) {
			x := d[r*n+i]
			wr := wd.Data[i*wd.Stride : i*wd.Stride+wd.Cols]
			for k, w := range wr {
				c.j[k] = in[r*nh+k] - w*x
			}
			z, err := c.logNorm(i, x)
			if err != nil {
				return 0, fmt.Errorf("rbm: pseudo-likelihood of row %d, visible unit %d: %w", r, i, err)
			}
			return c.logDensity(i, x) - z, nil
		}
		for r := r0; r < r1; r++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if sites != nil {
				p, err := site(r, sites[r])
				out[r] = float64(n) * p
				if err != nil {
					return err
				}
				continue
			}
			for i := 0; i < n; i++ {
				p, err := site(r, i)
				if err != nil {
					return err
				}
				out[r] += p
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
