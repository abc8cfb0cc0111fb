package mapping

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Triplets returns I^(3) for every triple of the given sites (sorted and
// de-duplicated first), in lexicographic order of the sorted triple.
//
// The units are processed one at a time (in parallel over the cores). For
// Step, spin and ReLU units whose weights on the chosen sites are small
// against the radius of convergence of their CGF, the cumulant series of
// Term, D(k,l,m) = Σ_n κ_n [zⁿ] Π_{j∈{k,l,m}} (e^{a_j z} − 1), is organised
// by pairs: with e_k(i) = a_kⁱ/i!, P_kl = e_k ∗ e_l (a convolution) and
// Q_kl(i) = Σ_j κ_{i+j} P_kl(j), every triple costs one dot product
// Σ_i e_m(i) Q_kl(i) (Exponential: λ̃ u_k u_l u_m; Linear: 0). The series is cut where Term cuts it for the unit's
// largest weights, so the values agree with Term to rounding. Other units
// use Term's per-set evaluation. Sums over units are compensated.
func (mp *Mapper) Triplets(ctx context.Context, sites []int) ([]Term, error) {
	ctx = rbm.ContextOrDefault(ctx)
	set, err := mp.checkSet(sites)
	if err != nil {
		return nil, err
	}
	var out []Term
	for a := 0; a < len(set); a++ {
		for b := a + 1; b < len(set); b++ {
			for c := b + 1; c < len(set); c++ {
				out = append(out, Term{Sites: []int{set[a], set[b], set[c]}})
			}
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	type acc struct{ sum, comp []float64 }
	var parts []acc
	var partsMu sync.Mutex
	// The units run on workers.ForRanges in a goroutine of their own, so
	// that Progress is called on the caller's goroutine (waitProgress).
	var wg sync.WaitGroup
	var stop atomic.Bool
	var done atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		err = workers.ForRanges(mp.m, 1, func(u0, u1 int) error {
			a := acc{make([]float64, len(out)), make([]float64, len(out))}
			c := mp.calcs.Get().(*unitCalc)
			defer mp.calcs.Put(c)
			for mu := u0; mu < u1; mu++ {
				if ctx.Err() != nil || stop.Load() {
					break
				}
				mp.tripletUnit(c, mu, set, a.sum, a.comp)
				done.Add(1)
			}
			partsMu.Lock()
			parts = append(parts, a)
			partsMu.Unlock()
			return nil
		})
	}()
	mp.waitProgress(&wg, &stop, &done, mp.m)
	if err != nil {
		return nil, fmt.Errorf("mapping: Triplets: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mapping: Triplets interrupted: %w", err)
	}
	var sum, comp []float64
	for _, a := range parts {
		if sum == nil {
			sum, comp = a.sum, a.comp
			continue
		}
		for i := range sum {
			neumaier(&sum[i], &comp[i], a.sum[i])
			comp[i] += a.comp[i]
		}
	}
	for i := range out {
		out[i].Value = sum[i] + comp[i]
		if !isFinite(out[i].Value) {
			return nil, fmt.Errorf("mapping: I%v = %v: the hidden CGF overflows for these weights", out[i].Sites, out[i].Value)
		}
	}
	return out, nil
}

// neumaier adds v to the compensated sum (*sum, *comp).
func neumaier(sum, comp *float64, v float64) {
	t := *sum + v
	if math.Abs(*sum) >= math.Abs(v) {
		*comp += (*sum - t) + v
	} else {
		*comp += (v - t) + *sum
	}
	*sum = t
}

// tripletUnit adds unit mu's contribution to every triple of set (in the
// order of Triplets) to the compensated sums.
func (mp *Mapper) tripletUnit(c *unitCalc, mu int, set []int, sum, comp []float64) {
	h := mp.h
	ns := len(set)
	switch h.fam {
	case famGaussian:
		return // Linear: exactly 0 beyond pairs (Eq. 20a)
	case famPoisson:
		// λ̃ Π u (Eq. 20d), as Term computes it.
		u := make([]float64, ns)
		for x, k := range set {
			u[x] = math.Expm1(mp.w[k*mp.m+mu])
		}
		lam := math.Exp(h.x0[mu])
		i := 0
		for x := 0; x < ns; x++ {
			for y := x + 1; y < ns; y++ {
				p := lam * u[x] * u[y]
				for z := y + 1; z < ns; z++ {
					neumaier(&sum[i], &comp[i], p*u[z])
					i++
				}
			}
		}
		return
	}
	var cut int
	if h.fam == famBinary || h.fam == famSpin || h.fam == famReLU {
		amax := 0.0
		for _, k := range set {
			amax = math.Max(amax, math.Abs(mp.w[k*mp.m+mu]*h.scale[mu]))
		}
		cut = seriesCut(h.kappa[mu], 3*amax, 3, seriesOrder(3*amax/h.rad[mu], 3))
	}
	if cut == 0 {
		// Term's own evaluation, set by set.
		var buf [3]float64
		i := 0
		for x := 0; x < ns; x++ {
			for y := x + 1; y < ns; y++ {
				for z := y + 1; z < ns; z++ {
					buf[0], buf[1], buf[2] = mp.w[set[x]*mp.m+mu], mp.w[set[y]*mp.m+mu], mp.w[set[z]*mp.m+mu]
					if buf[0] != 0 && buf[1] != 0 && buf[2] != 0 {
						neumaier(&sum[i], &comp[i], c.unit(mu, buf[:]))
					}
					i++
				}
			}
		}
		return
	}
	kappa := h.kappa[mu]
	// e[x][i] = a^i/i!, i = 0..cut.
	w := cut + 1
	e := make([]float64, ns*w)
	for x, k := range set {
		a := mp.w[k*mp.m+mu] * h.scale[mu]
		t := 1.0
		for i := 1; i <= cut; i++ {
			t *= a * invN[i]
			e[x*w+i] = t
		}
	}
	p := make([]float64, w)
	q := make([]float64, w)
	i := 0
	for x := 0; x < ns; x++ {
		ex := e[x*w : (x+1)*w]
		for y := x + 1; y < ns; y++ {
			ey := e[y*w : (y+1)*w]
			// P(j) = Σ_{i=1}^{j−1} e_x(i) e_y(j−i), j = 2..cut−1.
			for j := 2; j < cut; j++ {
				s := 0.0
				for r := 1; r < j; r++ {
					s += ex[r] * ey[j-r]
				}
				p[j] = s
			}
			// Q(r) = Σ_{j=2}^{cut−r} κ_{r+j} P(j), r = 1..cut−2.
			for r := 1; r+2 <= cut; r++ {
				s := 0.0
				for j := 2; r+j <= cut; j++ {
					s += kappa[r+j] * p[j]
				}
				q[r] = s
			}
			for z := y + 1; z < ns; z++ {
				ez := e[z*w : (z+1)*w]
				s := 0.0
				for r := 1; r+2 <= cut; r++ {
					s += ez[r] * q[r]
				}
				neumaier(&sum[i], &comp[i], s)
				i++
			}
		}
	}
}
