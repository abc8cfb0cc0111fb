package mapping

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Pairwise returns the full symmetric N×N matrix of pairwise couplings
// J_kl = I({k, l}) (seed 001 Eqs. 15b, 18), with a zero diagonal (the
// diagonal of a {0,1} model belongs to the fields, see Fields).
//
// Linear and Exponential units go through one symmetric matrix product
// (J = W diag(1/γ) Wᵀ, J = U diag(e^θ) Uᵀ with u = e^w − 1); Step (and spin)
// units use the exact form J_kl = Σ_µ log(1 + y_kµ y_lµ),
// y = (e^w − 1) e^{θ/2} / (1 + e^{w+θ}); ReLU units a Taylor expansion of
// each unit's CGF in the weights (exact to double precision) when the unit's
// weights are small against its radius of convergence, the 4-point Möbius
// sum otherwise; other kinds the 4-point sum through the layer's CGF.
func (mp *Mapper) Pairwise(ctx context.Context) (*mat.Dense, error) {
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
		blas64.Syrk(blas.NoTrans, 1, blas64.General{Rows: n, Cols: m, Stride: m, Data: a}, 0,
			blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: j})
		if mp.Progress != nil {
			mp.Progress(1, 1)
		}
	default:
		if err := mp.pairwiseElementwise(ctx, j); err != nil {
			return nil, err
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
// Mapper.Pairwise).
func Pairwise(m *rbm.RBM) (*mat.Dense, error) {
	mp, err := New(m)
	if err != nil {
		return nil, err
	}
	return mp.Pairwise(context.Background())
}

// pairBlock is the number of rows of J one worker fills at a time; the
// unit's column of weights stays in cache across them.
const pairBlock = 8

// unitPrep is the per-unit data of the elementwise pairwise kernels.
type unitPrep struct {
	mode  int       // prepSkip, prepLog1p, prepPoly2/4, prepAtanh, prepTaylor, prepDirect
	y     []float64 // Step: y_kµ; ReLU: scaled weights a_kµ (length N)
	order int       // ReLU Taylor order in a_l
	inner int       // ReLU Taylor order in a_k of the coefficients
}

const (
	prepSkip = iota
	prepLog1p
	prepPoly2
	prepPoly4
	prepAtanh
	prepTaylor
	prepDirect
)

// polyMax[d] bounds |x| for the degree-d Taylor polynomial of log1p: the
// truncation error |x|^d/(d+1) stays below 1e-17 relative.
// polyMax[0] bounds |x| for the atanh form (7 odd terms).
var polyMax = map[int]float64{2: 5.4e-9, 4: 7.4e-5, 0: 0.1}

func (mp *Mapper) prepareUnits() ([]unitPrep, error) {
	n, m, h := mp.n, mp.m, mp.h
	preps := make([]unitPrep, m)
	for mu := 0; mu < m; mu++ {
		p := &preps[mu]
		col := mp.wt[mu*n : (mu+1)*n]
		amax := 0.0
		for _, x := range col {
			amax = math.Max(amax, math.Abs(x))
		}
		if amax == 0 {
			continue
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
					return nil, fmt.Errorf("mapping: Pairwise: weight W[%d][%d] = %v overflows", k, mu, w)
				}
				ymax = math.Max(ymax, math.Abs(p.y[k]))
			}
			switch x := ymax * ymax; {
			case x <= polyMax[2]:
				p.mode = prepPoly2
			case x <= polyMax[4]:
				p.mode = prepPoly4
			case x <= polyMax[0]:
				p.mode = prepAtanh
			default:
				p.mode = prepLog1p
			}
		case famReLU:
			p.y = make([]float64, n)
			for k, w := range col {
				p.y[k] = w * h.scale[mu]
			}
			// T(a_k, a_l) = Σ_q e_q(k) a_lᵍ is the expansion around x0 + a_k,
			// converging like (A/(R − A))ᵍ; e_q(k) = Σ_r C(q+r, q) g_{q+r} a_kʳ
			// (jets at x0) like C(q+r, q)(A/R)ʳ.
			a := amax * h.scale[mu]
			r := radius(famReLU, h.x0[mu])
			p.mode = prepDirect
			if a < r/3 {
				rho := a / (r - a)
				d := 1
				for ; d < maxJet/2; d++ {
					if math.Pow(rho, float64(d))*float64(d+1) < 1e-17 {
						break
					}
				}
				inner := 1
				for ; d+inner < maxJet; inner++ {
					if binom(d+inner, d)*math.Pow(a/r, float64(inner)) < 1e-17 {
						break
					}
				}
				if d < maxJet/2 && d+inner < maxJet {
					p.mode, p.order, p.inner = prepTaylor, tightOrder(h.jets[mu], a, d, inner), inner
				}
			}
		default:
			p.mode = prepDirect
		}
	}
	return preps, nil
}

// pairwiseElementwise fills the upper triangle of j (N×N row-major).
func (mp *Mapper) pairwiseElementwise(ctx context.Context, j []float64) error {
	preps, err := mp.prepareUnits()
	if err != nil {
		return err
	}
	n := mp.n
	nblocks := (n + pairBlock - 1) / pairBlock
	var next, done atomic.Int64
	var stop atomic.Bool
	workers := min(runtime.GOMAXPROCS(0), nblocks)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := mp.calcs.Get().(*unitCalc)
			defer mp.calcs.Put(c)
			coef := make([]float64, pairBlock*(maxJet+1))
			for !stop.Load() {
				b := int(next.Add(1)) - 1
				if b >= nblocks || ctx.Err() != nil {
					return
				}
				k0 := b * pairBlock
				k1 := min(k0+pairBlock, n)
				for mu := range preps {
					mp.pairUnit(c, &preps[mu], mu, k0, k1, j, coef)
				}
				done.Add(1)
			}
		}()
	}
	mp.waitProgress(&wg, &done, nblocks)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mapping: Pairwise interrupted after %d of %d row blocks: %w", done.Load(), nblocks, err)
	}
	for _, x := range j {
		if !isFinite(x) {
			return fmt.Errorf("mapping: Pairwise: a coupling is %v (the hidden CGF overflows)", x)
		}
	}
	return nil
}

// waitProgress waits for wg, reporting done/total every 100 ms when a
// Progress callback is set.
func (mp *Mapper) waitProgress(wg *sync.WaitGroup, done *atomic.Int64, total int) {
	if mp.Progress == nil {
		wg.Wait()
		return
	}
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
func (mp *Mapper) pairUnit(c *unitCalc, p *unitPrep, mu, k0, k1 int, j, coef []float64) {
	n := mp.n
	switch p.mode {
	case prepSkip:
		return
	case prepPoly2, prepPoly4, prepAtanh:
		for k := k0; k < k1; k++ {
			yk := p.y[k]
			if yk == 0 {
				continue
			}
			ys := p.y[k+1 : n]
			row := j[k*n+k+1 : (k+1)*n]
			row = row[:len(ys)]
			// log1p(x) = x − x²/2 + x³/3 − …, cut at the unit's degree.
			switch p.mode {
			case prepPoly2:
				for i, yl := range ys {
					x := yk * yl
					row[i] += x * (1 - 0.5*x)
				}
			case prepPoly4:
				for i, yl := range ys {
					x := yk * yl
					row[i] += x * (1 + x*(-1.0/2+x*(1.0/3+x*(-1.0/4))))
				}
			default:
				// log1p(x) = 2 atanh(z), z = x/(2+x), |z| ≤ 0.0477: odd
				// series to z¹³ (truncation below 1e-17 relative).
				for i, yl := range ys {
					x := yk * yl
					z := x / (2 + x)
					z2 := z * z
					row[i] += 2 * z * (1 + z2*(1.0/3+z2*(1.0/5+z2*(1.0/7+z2*(1.0/9+z2*(1.0/11+z2*(1.0/13)))))))
				}
			}
		}
	case prepLog1p:
		for k := k0; k < k1; k++ {
			yk := p.y[k]
			if yk == 0 {
				continue
			}
			row := j[k*n+k+1 : (k+1)*n]
			for i, yl := range p.y[k+1 : n] {
				x := yk * yl
				if x > -0.5 {
					row[i] += math.Log1p(x)
					continue
				}
				// 1 + x is a small difference: use the four-corner sum.
				var buf [2]float64
				buf[0], buf[1] = mp.w[k*mp.m+mu], mp.w[(k+1+i)*mp.m+mu]
				row[i] += c.unit(mu, buf[:])
			}
		}
	case prepTaylor:
		// T(a_k, a_l) = Σ_{q=1}^{D} e_q(k) a_lᵍ with
		// e_q(k) = Σ_{r≥1} C(q+r, q) g_{q+r} a_kʳ (jets at the unit's x0).
		g := mp.h.jets[mu]
		d := p.order
		for k := k0; k < k1; k++ {
			ak := p.y[k]
			e := coef[(k-k0)*(maxJet+1) : (k-k0+1)*(maxJet+1)]
			for q := 1; q <= d; q++ {
				// Horner in a_k over r = d..1 of C(q+r, q) g_{q+r}.
				s := 0.0
				for r := p.inner; r >= 1; r-- {
					s = s*ak + binom(q+r, q)*g[q+r]
				}
				e[q] = s * ak
			}
			if ak == 0 {
				continue
			}
			ys := p.y[k+1 : n]
			row := j[k*n+k+1 : (k+1)*n]
			row = row[:len(ys)]
			es := e[1 : d+1]
			for i, al := range ys {
				s := 0.0
				for q := len(es) - 1; q >= 0; q-- {
					s = s*al + es[q]
				}
				row[i] += s * al
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

// tightOrder lowers the a-priori Taylor order d of a ReLU unit to the last
// order whose terms, evaluated with the unit's actual coefficients at the
// extreme weights ±a, exceed 1e-18 of the first-order term.
func tightOrder(g []float64, a float64, d, inner int) int {
	var first float64
	last := 1
	for q := 1; q <= d; q++ {
		var t float64
		for _, ak := range [2]float64{a, -a} {
			s := 0.0
			for r := inner; r >= 1; r-- {
				s = s*ak + binom(q+r, q)*g[q+r]
			}
			t = math.Max(t, math.Abs(s*ak)*math.Pow(a, float64(q)))
		}
		if q == 1 {
			first = t
		}
		if t > 1e-18*first {
			last = q
		}
	}
	return last
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
