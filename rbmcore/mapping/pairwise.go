package mapping

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Pairwise returns the full symmetric N×N matrix of pairwise couplings
// J_kl = I({k, l}) ([BR21] Eqs. 15b, 18), with a zero diagonal (the
// diagonal of a {0,1} model belongs to the fields, see Fields).
//
// Linear and Exponential units go through one symmetric matrix product
// (J = W diag(1/γ) Wᵀ, J = U diag(e^θ) Uᵀ with u = e^w − 1); Step (and spin)
// units use the exact form J_kl = Σ_µ log(1 + y_kµ y_lµ),
// y = (e^w − 1) e^{θ/2} / (1 + e^{w+θ}), through its log1p series as rank
// updates, or elementwise for units with large weights; ReLU units a
// low-rank factorisation of the double Taylor series of each unit's pair
// term (see lowrank.go; errors of a few ulps relative to each pair's
// first-order term) as symmetric rank updates when the unit's weights are
// small against the radius of convergence of its CGF, the 4-point Möbius sum
// otherwise; other kinds the 4-point sum through the layer's CGF. See the
// package doc.
func (mp *Mapper) Pairwise(ctx context.Context) (*mat.Dense, error) {
	ctx = rbm.ContextOrDefault(ctx)
	n, m := mp.n, mp.m
	j := make([]float64, n*n)
	h := mp.h
	switch h.fam {
	case famGaussian, famPoisson:
		a := make([]float64, n*m)
		for mu := 0; mu < m; mu++ {
			var f float64
			if h.fam == famGaussian {
				f = math.Sqrt(h.scale[mu]) // 1/√γ
			} else {
				f = math.Exp(0.5 * h.x0[mu]) // √λ̃
			}
			for k := 0; k < n; k++ {
				x := mp.w[k*m+mu]
				if h.fam == famPoisson {
					x = math.Expm1(x)
				}
				a[k*m+mu] = x * f
				if !isFinite(a[k*m+mu]) {
					return nil, fmt.Errorf("mapping: Pairwise: weight W[%d][%d] = %v with field %v overflows the Exponential unit", k, mu, mp.w[k*m+mu], h.x0[mu])
				}
			}
		}
		if err := syrkUpper(1, blas64.General{Rows: n, Cols: m, Stride: m, Data: a}, j); err != nil {
			return nil, fmt.Errorf("mapping: Pairwise: %w", err)
		}
		if mp.Progress != nil {
			mp.Progress(1, 1)
		}
	default:
		if err := mp.pairwiseElementwise(ctx, j); err != nil {
			return nil, err
		}
	}
	for _, x := range j {
		if !isFinite(x) {
			return nil, fmt.Errorf("mapping: Pairwise: a coupling is %v (the hidden CGF overflows)", x)
		}
	}
	// Mirror the upper triangle and clear the diagonal.
	for k := 0; k < n; k++ {
		j[k*n+k] = 0
		for l := k + 1; l < n; l++ {
			j[l*n+k] = j[k*n+l]
		}
	}
	return mat.NewDense(n, n, j), nil
}

// Pairwise returns the pairwise coupling matrix of the model (see
// Mapper.Pairwise), stopping when ctx is cancelled.
func Pairwise(ctx context.Context, m *rbm.RBM) (*mat.Dense, error) {
	mp, err := New(m)
	if err != nil {
		return nil, err
	}
	return mp.Pairwise(ctx)
}

// pairBlock is the number of rows of J one worker fills at a time; the
// unit's column of weights stays in cache across them.
const pairBlock = 8

// unitPrep is the per-unit data of the pairwise kernels.
type unitPrep struct {
	mode  int       // prepSkip, prepLog1p, prepSeries, prepLowRank, prepDirect, prepCGF
	y     []float64 // Step: y_kµ; ReLU: scaled weights a_kµ; other kinds: Γ(w_kµ), Γ(0)
	order int       // Step: series order in y_k y_l
	// ReLU low rank (see lowrank.go): coefficients of the factor
	// polynomials in t = a/amax, (L+1)×rank row-major, npos positive first.
	basis      []float64
	rank, npos int
	// Step series and ReLU low rank: the largest |y| (|a|) handled by the
	// series (factorisation); the sites beyond it, in increasing order,
	// are paired elementwise.
	amax  float64
	large []int
	// ReLU: for each large site l, the coefficients c_q of its pair term
	// with a small site k, Σ_q c_q a_kᵍ (nil: Term's evaluation).
	largeCoef [][]float64
}

// reluSeriesFrac is the fraction of the radius of convergence up to which a
// ReLU unit's scaled weights go through the factorisation (ranks ≲ 9).
const reluSeriesFrac = 0.1

// shiftedPairCoef returns c_q = g_q(x) − g_q(x0) (q ≥ 1; c_0 = 0), the
// Taylor coefficients in a_k of the ReLU pair term T(a_k, x − x0) =
// g(x + a_k) − g(x) − g(x0 + a_k) + g(x0), cut where |c_q| Aᵍ⁻¹ has stayed
// below 1e-18 |c_1| for three orders; nil if that does not happen by order
// maxJet/2. g0 is the jet at x0.
func shiftedPairCoef(g0 []float64, x, A float64) []float64 {
	g := make([]float64, maxJet/2+1)
	reluJet(x, g)
	for q := 1; q < len(g); q++ {
		g[q] -= g0[q]
	}
	g[0] = 0
	small := 0
	pw := 1.0
	for q := 2; q < len(g); q++ {
		pw *= A
		if math.Abs(g[q])*pw <= 1e-18*math.Abs(g[1]) {
			small++
			if small == 3 {
				return g[:q+1]
			}
		} else {
			small = 0
		}
	}
	return nil
}

const (
	prepSkip    = iota
	prepLog1p   // Step, elementwise log1p(y_k y_l)
	prepSeries  // Step, log1p series through matrix products
	prepLowRank // ReLU, low-rank factorisation of the double Taylor series
	prepDirect  // four-corner sums
	prepCGF     // other kinds: the layer's CGF, one vectorised call per row
)

// maxLog1pOrder caps the series order for Step units (|y_k y_l| ≲ 0.09);
// beyond it the elementwise log1p is cheaper.
const maxLog1pOrder = 16

// stepSeriesY is the largest |y| of a Step unit's sites in its series
// (order 13); larger ones are paired elementwise.
const stepSeriesY = 0.25

func (mp *Mapper) prepareUnits() ([]unitPrep, error) {
	preps := make([]unitPrep, mp.m)
	// Units are independent (the ReLU factorisations cost ~0.1 ms each).
	err := workers.ForRanges(mp.m, 16, func(u0, u1 int) error {
		for mu := u0; mu < u1; mu++ {
			if err := mp.prepareUnit(mu, &preps[mu]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return preps, nil
}

// prepareUnit chooses the pairwise kernel of unit mu and fills p.
func (mp *Mapper) prepareUnit(mu int, p *unitPrep) error {
	n, h := mp.n, mp.h
	col := mp.wt[mu*n : (mu+1)*n]
	amax := 0.0
	for _, x := range col {
		amax = math.Max(amax, math.Abs(x))
	}
	if amax == 0 {
		return nil
	}
	switch h.fam {
	case famBinary, famSpin:
		p.y = make([]float64, n)
		x0, sc := h.x0[mu], h.scale[mu]
		ymax := 0.0
		for k, w := range col {
			a := w * sc
			p.y[k] = math.Expm1(a) * math.Exp(0.5*x0-mathx.Softplus(x0+a))
			if !isFinite(p.y[k]) {
				return fmt.Errorf("mapping: Pairwise: weight W[%d][%d] = %v overflows", k, mu, w)
			}
			ymax = math.Max(ymax, math.Abs(p.y[k]))
		}
		// Sites with |y| > stepSeriesY are paired elementwise (p.large) so
		// that a few large weights do not make the whole unit elementwise,
		// unless more than a tenth of the sites are large.
		p.amax = ymax
		if ymax > stepSeriesY {
			for k, y := range p.y {
				if math.Abs(y) > stepSeriesY {
					p.large = append(p.large, k)
				}
			}
			p.amax = stepSeriesY
		}
		// log1p(x) = Σ_{q≤d} (−1)^{q+1} xᵍ/q with x^d/(d+1) < 1e-17.
		p.mode = prepLog1p
		if x := p.amax * p.amax; x < 1 && len(p.large) <= n/10 {
			for d := 1; d <= maxLog1pOrder; d++ {
				if math.Pow(x, float64(d))/float64(d+1) < 1e-17 {
					p.mode, p.order = prepSeries, d
					break
				}
			}
		}
		if p.mode == prepLog1p {
			p.large = nil
		}
	case famReLU:
		p.y = make([]float64, n)
		for k, w := range col {
			p.y[k] = w * h.scale[mu]
		}
		// Weights above reluSeriesFrac of the radius of convergence
		// (beyond it the factorisation's size and rank grow fast) are left
		// to the elementwise pass: the sites in p.large pair with the small
		// ones through the series around their own input (largeCoef), with
		// each other through Term's evaluation; the small sites pair
		// through the factorisation on [−amax, amax]. The whole unit is
		// elementwise when more than a tenth of its sites are large (or the
		// factorisation fails).
		p.amax = amax * h.scale[mu]
		if limit := reluSeriesFrac * h.rad[mu]; p.amax > limit {
			p.amax = limit
			for k, a := range p.y {
				if math.Abs(a) > limit {
					p.large = append(p.large, k)
				}
			}
		}
		p.mode = prepDirect
		if len(p.large) <= n/10 {
			if basis, rank, npos, ok := lowRankFactor(h.jets[mu], p.amax); ok {
				p.mode, p.basis, p.rank, p.npos = prepLowRank, basis, rank, npos
			}
		}
		if p.mode == prepDirect {
			p.large = nil
		}
		// Each large site l pairs with the small sites k through the
		// Taylor series in a_k around x0 + a_l.
		p.largeCoef = make([][]float64, len(p.large))
		for i, l := range p.large {
			p.largeCoef[i] = shiftedPairCoef(h.jets[mu], h.x0[mu]+p.y[l], p.amax)
		}
	default:
		// Γ at every single-site input, once per unit.
		p.mode = prepCGF
		p.y = make([]float64, n+1)
		in := make([]float64, n+1)
		for k, w := range col {
			in[k] = h.off[mu] + w
		}
		in[n] = h.off[mu]
		h.layer.UnitCGF(mu, in, p.y)
	}
	return nil
}

// pairwiseElementwise fills the upper triangle of j (N×N row-major).
func (mp *Mapper) pairwiseElementwise(ctx context.Context, j []float64) error {
	preps, err := mp.prepareUnits()
	if err != nil {
		return err
	}
	if err := mp.pairwiseProducts(ctx, preps, j); err != nil {
		return err
	}
	if err := mp.pairwiseLowRank(ctx, preps, j); err != nil {
		return err
	}
	n := mp.n
	elementwise := false
	for _, p := range preps {
		elementwise = elementwise || p.mode == prepLog1p || p.mode == prepDirect || p.mode == prepCGF || len(p.large) > 0
	}
	if elementwise {
		nblocks := (n + pairBlock - 1) / pairBlock
		err = mp.parallel(ctx, nblocks, func(c *unitCalc, b int) error {
			k0 := b * pairBlock
			k1 := min(k0+pairBlock, n)
			for mu := range preps {
				// A block costs O(pairBlock·N·M) unit evaluations: seconds
				// for large models, so the context is checked per unit
				// (parallel reports the interruption).
				if ctx.Err() != nil {
					return nil
				}
				mp.pairUnit(c, &preps[mu], mu, k0, k1, j)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("mapping: Pairwise: %w", err)
		}
	}
	return nil
}

// waitProgress waits for the workers of wg, reporting done/total every
// 100 ms and at the end when a Progress callback is set. Progress runs on the
// caller's goroutine; if it panics, the workers are stopped (through stop)
// and waited for before the panic goes on, so none outlives the call.
func (mp *Mapper) waitProgress(wg *sync.WaitGroup, stop *atomic.Bool, done *atomic.Int64, total int) {
	if mp.Progress == nil || total == 0 {
		wg.Wait()
		return
	}
	defer func() {
		if r := recover(); r != nil {
			stop.Store(true)
			wg.Wait()
			panic(r)
		}
	}()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			mp.Progress(int(done.Load()), total)
			return
		case <-tick.C:
			mp.Progress(int(done.Load()), total)
		}
	}
}

// pairUnit adds unit µ's contribution to rows k0..k1−1 of J (l > k).
func (mp *Mapper) pairUnit(c *unitCalc, p *unitPrep, mu, k0, k1 int, j []float64) {
	n := mp.n
	switch p.mode {
	case prepLog1p:
		for k := k0; k < k1; k++ {
			if p.y[k] == 0 {
				continue
			}
			row := j[k*n : (k+1)*n]
			for l := k + 1; l < n; l++ {
				row[l] += mp.stepPair(c, p, mu, k, l)
			}
		}
	case prepCGF:
		// J_kl += Γ(w_k + w_l) − Γ(w_k) − Γ(w_l) + Γ(0), the pair inputs of a
		// row in one call of the layer's CGF (p.y holds Γ(w_k), p.y[n] Γ(0)).
		in, out := c.rowIn[:n], c.rowOut[:n]
		off := mp.h.off[mu]
		for k := k0; k < k1; k++ {
			wk := mp.w[k*mp.m+mu]
			if wk == 0 || k+1 >= n {
				continue
			}
			ws := mp.wt[mu*n+k+1 : (mu+1)*n]
			in, out = in[:len(ws)], out[:len(ws)]
			for i, wl := range ws {
				in[i] = off + wk + wl
			}
			mp.h.layer.UnitCGF(mu, in, out)
			row := j[k*n+k+1 : (k+1)*n]
			row = row[:len(ws)]
			c0 := p.y[n] - p.y[k]
			singles := p.y[k+1 : n]
			for i, wl := range ws {
				if wl != 0 {
					row[i] += out[i] - singles[i] + c0
				}
			}
		}
	case prepSeries, prepLowRank:
		// The pairs of the sites too large for the series (their rows of
		// Y or Z are zero): a large site k with every l > k, a small one
		// with the large l > k; Step through log1p, ReLU as Term
		// evaluates them.
		if len(p.large) == 0 {
			return
		}
		pair := func(k, l int) float64 {
			if p.mode == prepSeries {
				return mp.stepPair(c, p, mu, k, l)
			}
			// ReLU: the series around the large site's input when the
			// other site is small.
			big, small := k, l
			if math.Abs(p.y[l]) > math.Abs(p.y[k]) {
				big, small = l, k
			}
			if a := p.y[small]; math.Abs(a) <= p.amax {
				if coef := p.largeCoef[sort.SearchInts(p.large, big)]; coef != nil {
					v := 0.0
					for q := len(coef) - 1; q >= 1; q-- {
						v = v*a + coef[q]
					}
					return v * a
				}
			}
			buf := [2]float64{mp.w[k*mp.m+mu], mp.w[l*mp.m+mu]}
			return c.unit(mu, buf[:])
		}
		for k := k0; k < k1; k++ {
			if mp.w[k*mp.m+mu] == 0 {
				continue
			}
			row := j[k*n : (k+1)*n]
			if math.Abs(p.y[k]) > p.amax {
				for l := k + 1; l < n; l++ {
					if mp.w[l*mp.m+mu] != 0 {
						row[l] += pair(k, l)
					}
				}
				continue
			}
			for _, l := range p.large {
				if l > k && mp.w[l*mp.m+mu] != 0 {
					row[l] += pair(k, l)
				}
			}
		}
	case prepDirect:
		// Units whose weights are too large for the series: the four-corner
		// Möbius sum (precision-preserving for ReLU, the layer's CGF
		// otherwise).
		var buf [2]float64
		relu := mp.h.fam == famReLU
		for k := k0; k < k1; k++ {
			wk := mp.w[k*mp.m+mu]
			if wk == 0 {
				continue
			}
			row := j[k*n : (k+1)*n]
			for l := k + 1; l < n; l++ {
				wl := mp.w[l*mp.m+mu]
				if wl == 0 {
					continue
				}
				if relu {
					buf[0], buf[1] = p.y[k], p.y[l]
					row[l] += c.direct(mp.h.x0[mu], buf[:])
				} else {
					buf[0], buf[1] = wk, wl
					row[l] += c.unit(mu, buf[:])
				}
			}
		}
	}
}

// stepPair is a Step (or spin) unit's pair term log(1 + y_k y_l), or the
// four-corner sum when 1 + y_k y_l is a small difference.
func (mp *Mapper) stepPair(c *unitCalc, p *unitPrep, mu, k, l int) float64 {
	x := p.y[k] * p.y[l]
	if x > -0.5 {
		return math.Log1p(x)
	}
	buf := [2]float64{mp.w[k*mp.m+mu], mp.w[l*mp.m+mu]}
	return c.unit(mu, buf[:])
}

// binom returns the binomial coefficient C(n, k) for n ≤ 2·maxJet.
func binom(n, k int) float64 { return binomTable[n][k] }

var binomTable = func() [][]float64 {
	t := make([][]float64, 2*maxJet+2)
	for n := range t {
		t[n] = make([]float64, n+1)
		t[n][0], t[n][n] = 1, 1
		for k := 1; k < n; k++ {
			t[n][k] = t[n-1][k-1] + t[n-1][k]
		}
	}
	return t
}()

// pairwiseProducts adds the contributions of the Step series units
// (prepSeries) to J through symmetric rank updates: with the units sorted by
// decreasing order, order q involves the first M_q of them,
//
//	J += ((−1)^{q+1}/q) Y_q Y_qᵀ,  (Y_q)_kµ = y_kµᵍ.
//
// Only the upper triangle of j is meaningful afterwards.
func (mp *Mapper) pairwiseProducts(ctx context.Context, preps []unitPrep, j []float64) error {
	n := mp.n
	var units []int
	for mu, p := range preps {
		if p.mode == prepSeries {
			units = append(units, mu)
		}
	}
	if len(units) == 0 {
		return nil
	}
	sort.SliceStable(units, func(a, b int) bool { return preps[units[a]].order > preps[units[b]].order })
	ms := len(units)
	maxOrder := preps[units[0]].order
	pow := make([]float64, n*ms) // y^q
	for c, mu := range units {
		for k, y := range preps[mu].y {
			if math.Abs(y) <= preps[mu].amax { // p.large: elementwise pass
				pow[k*ms+c] = y
			}
		}
	}
	base := append([]float64(nil), pow...)
	for q := 1; q <= maxOrder; q++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mapping: Pairwise interrupted at order %d of %d: %w", q, maxOrder, err)
		}
		mq := sort.Search(ms, func(c int) bool { return preps[units[c]].order < q })
		if q > 1 {
			for k := 0; k < n; k++ {
				row, b := pow[k*ms:k*ms+mq], base[k*ms:k*ms+mq]
				for c := range row {
					row[c] *= b[c]
				}
			}
		}
		coef := 1 / float64(q)
		if q%2 == 0 {
			coef = -coef
		}
		if err := syrkUpper(coef, blas64.General{Rows: n, Cols: mq, Stride: ms, Data: pow}, j); err != nil {
			return fmt.Errorf("mapping: Pairwise: %w", err)
		}
		if mp.Progress != nil {
			mp.Progress(q, maxOrder)
		}
	}
	return nil
}
