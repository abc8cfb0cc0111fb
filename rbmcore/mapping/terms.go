package mapping

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/guard"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Term is one interaction of the binary model: the coefficient Value of the
// monomial Π_{k∈Sites} v_k in log P(v) ([BR21] Eq. 3). Sites are 0-based
// and strictly increasing; each set appears once (no symmetric copies).
type Term struct {
	Sites []int   // visible sites of the monomial, 0-based, increasing
	Value float64 // the coefficient I(Sites)
}

// Mapper computes the interactions of one RBM. It copies what it needs from
// the model when it is created (later changes to the model are not seen).
// Its methods are safe for concurrent use.
type Mapper struct {
	// Progress, when set, is called from the bulk methods with the work
	// done so far and the total (in arbitrary units), at most ~10 times a
	// second and once at the end.
	Progress func(done, total int)

	n, m  int
	spin  bool      // visible layer is ±1 (see the package doc)
	bias  []float64 // effective {0,1} fields b_k
	w     []float64 // effective weights, N×M row-major
	wt    []float64 // the same, M×N
	h     *hiddenUnits
	calcs sync.Pool
}

// newMapper builds a Mapper from the layers and the N×M row-major weights.
func newMapper(vis, hid rbm.Layer, w []float64) (*Mapper, error) {
	if vis == nil || hid == nil {
		return nil, fmt.Errorf("mapping: model has a nil layer")
	}
	n, m := vis.Len(), hid.Len()
	if len(w) != n*m {
		return nil, fmt.Errorf("mapping: weights have %d entries, want N×M = %d×%d", len(w), n, m)
	}
	mp := &Mapper{n: n, m: m}
	theta := paramByName(vis, "theta")
	if len(theta) != n {
		return nil, fmt.Errorf("mapping: visible layer kind %q has no theta of length %d", vis.Kind(), n)
	}
	mp.bias = make([]float64, n)
	mp.w = make([]float64, n*m)
	var off []float64
	switch visibleValues(vis) {
	case zeroOne:
		copy(mp.bias, theta)
		copy(mp.w, w)
	case plusMinusOne:
		// s = 2v − 1: θ s = 2θ v − θ, Σ w s = Σ 2w v − Σ w.
		mp.spin = true
		off = make([]float64, m)
		for i := 0; i < n; i++ {
			mp.bias[i] = 2 * theta[i]
			for mu := 0; mu < m; mu++ {
				mp.w[i*m+mu] = 2 * w[i*m+mu]
				off[mu] -= w[i*m+mu]
			}
		}
	default:
		return nil, fmt.Errorf("mapping: visible layer kind %q is not supported (units with values {0,1} or ±1: binary or spin)", vis.Kind())
	}
	for i, x := range mp.w {
		if !isFinite(x) {
			return nil, fmt.Errorf("mapping: weight W[%d][%d] = %v is not finite", i/m, i%m, w[i])
		}
	}
	for i, x := range mp.bias {
		if !isFinite(x) {
			return nil, fmt.Errorf("mapping: visible theta[%d] = %v is not finite", i, theta[i])
		}
	}
	h, err := newHiddenUnits(hid, off)
	if err != nil {
		return nil, err
	}
	mp.h = h
	mp.wt = make([]float64, n*m)
	for i := 0; i < n; i++ {
		for mu := 0; mu < m; mu++ {
			mp.wt[mu*n+i] = mp.w[i*m+mu]
		}
	}
	mp.calcs.New = func() any {
		c := newUnitCalc(h)
		c.rowIn, c.rowOut = make([]float64, n), make([]float64, n)
		return c
	}
	return mp, nil
}

// N is the number of visible sites.
func (mp *Mapper) N() int { return mp.n }

// M is the number of hidden units.
func (mp *Mapper) M() int { return mp.m }

// Bias returns the visible fields b_k of the {0,1} model (a copy): the
// visible layer's θ, or 2θ for a spin visible layer. Fields() − Bias() is
// the hidden layer's contribution Σ_µ K_µ(w_kµ) to the first-order terms.
func (mp *Mapper) Bias() []float64 { return append([]float64(nil), mp.bias...) }

func (mp *Mapper) checkSites(sites []int) ([]int, error) {
	if len(sites) == 0 {
		return nil, fmt.Errorf("mapping: empty site set")
	}
	s := append([]int(nil), sites...)
	sort.Ints(s)
	for j, k := range s {
		if k < 0 || k >= mp.n {
			return nil, fmt.Errorf("mapping: site %d out of range [0, %d)", k, mp.n)
		}
		if j > 0 && s[j-1] == k {
			return nil, fmt.Errorf("mapping: site %d repeated", k)
		}
	}
	if len(s) > 30 {
		return nil, fmt.Errorf("mapping: %d sites: orders above 30 are not supported", len(s))
	}
	return s, nil
}

// term evaluates I(S) for a sorted, valid site set with the given calculator.
func (mp *Mapper) term(c *unitCalc, sites []int, buf []float64) float64 {
	var sum, comp float64
	for mu := 0; mu < mp.m; mu++ {
		buf = buf[:0]
		zero := false
		for _, k := range sites {
			x := mp.w[k*mp.m+mu]
			if x == 0 {
				zero = true // support property: a zero weight kills the term
				break
			}
			buf = append(buf, x)
		}
		if zero {
			continue
		}
		v := c.unit(mu, buf)
		t := sum + v
		if math.Abs(sum) >= math.Abs(v) {
			comp += (sum - t) + v
		} else {
			comp += (v - t) + sum
		}
		sum = t
	}
	if len(sites) == 1 {
		sum += mp.bias[sites[0]]
	}
	return sum + comp
}

// Term returns the interaction I(S) of the site set S (0-based, any order;
// duplicates are an error), including the visible bias when |S| = 1
// ([BR21] Eqs. 14, 15a).
func (mp *Mapper) Term(sites ...int) (float64, error) {
	s, err := mp.checkSites(sites)
	if err != nil {
		return 0, err
	}
	c := mp.calcs.Get().(*unitCalc)
	defer mp.calcs.Put(c)
	v := mp.term(c, s, make([]float64, 0, len(s)))
	if !isFinite(v) {
		return v, fmt.Errorf("mapping: I%v = %v: the hidden CGF overflows for these weights", s, v)
	}
	return v, nil
}

// Fields returns all first-order terms I^(1)_k = b_k + Σ_µ K_µ(w_kµ)
// (Eq. 15a), stopping when ctx is cancelled.
func (mp *Mapper) Fields(ctx context.Context) ([]float64, error) {
	out := make([]float64, mp.n)
	err := mp.parallel(rbm.ContextOrDefault(ctx), mp.n, func(c *unitCalc, k int) error {
		out[k] = mp.term(c, []int{k}, make([]float64, 0, 1))
		if !isFinite(out[k]) {
			return fmt.Errorf("mapping: field of site %d = %v: the hidden CGF overflows", k, out[k])
		}
		return nil
	})
	return out, err
}

// checkSet sorts and de-duplicates a list of sites, checking their range.
func (mp *Mapper) checkSet(sites []int) ([]int, error) {
	s := append([]int(nil), sites...)
	sort.Ints(s)
	out := s[:0]
	for j, k := range s {
		if k < 0 || k >= mp.n {
			return nil, fmt.Errorf("mapping: site %d out of range [0, %d)", k, mp.n)
		}
		if j == 0 || s[j-1] != k {
			out = append(out, k)
		}
	}
	return out, nil
}

// MaxAllTerms bounds the number of terms All will enumerate.
const MaxAllTerms = 1 << 22

// All returns every interaction up to order maxOrder (1 ≤ maxOrder ≤ N), in
// order of increasing size and lexicographically within a size. It is meant
// for small N: the number of terms Σ_{s≤maxOrder} C(N, s) must not exceed
// MaxAllTerms.
func (mp *Mapper) All(ctx context.Context, maxOrder int) ([]Term, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if maxOrder < 1 || maxOrder > mp.n {
		return nil, fmt.Errorf("mapping: maxOrder = %d must be in [1, N=%d]", maxOrder, mp.n)
	}
	total, c := 0.0, 1.0
	for s := 1; s <= maxOrder; s++ {
		c = c * float64(mp.n-s+1) / float64(s)
		total += c
	}
	if total > MaxAllTerms {
		return nil, fmt.Errorf("mapping: %g terms up to order %d for N = %d exceed MaxAllTerms = %d", total, maxOrder, mp.n, MaxAllTerms)
	}
	out := make([]Term, 0, int(total))
	for s := 1; s <= maxOrder; s++ {
		idx := make([]int, s)
		for j := range idx {
			idx[j] = j
		}
		for {
			out = append(out, Term{Sites: append([]int(nil), idx...)})
			j := s - 1
			for j >= 0 && idx[j] == mp.n-s+j {
				j--
			}
			if j < 0 {
				break
			}
			idx[j]++
			for i := j + 1; i < s; i++ {
				idx[i] = idx[i-1] + 1
			}
		}
	}
	return out, mp.fill(ctx, out)
}

// fill sets the Value of every term (sites already valid and sorted).
func (mp *Mapper) fill(ctx context.Context, terms []Term) error {
	return mp.parallel(ctx, len(terms), func(c *unitCalc, i int) error {
		t := &terms[i]
		t.Value = mp.term(c, t.Sites, make([]float64, 0, len(t.Sites)))
		if !isFinite(t.Value) {
			return fmt.Errorf("mapping: I%v = %v: the hidden CGF overflows for these weights", t.Sites, t.Value)
		}
		return nil
	})
}

// parallel runs f(i) for i in [0, total) on GOMAXPROCS workers, checking the
// context and reporting progress.
func (mp *Mapper) parallel(ctx context.Context, total int, f func(c *unitCalc, i int) error) error {
	var next, done atomic.Int64
	workers := runtime.GOMAXPROCS(0)
	if workers > total {
		workers = total
	}
	// Chunks small enough that the context is checked every few ms even
	// when each item costs O(M) unit evaluations.
	chunk := min(total/(workers*64), 1+20000/max(mp.m, 1))
	if chunk < 1 {
		chunk = 1
	}
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	var stop atomic.Bool
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := mp.calcs.Get().(*unitCalc)
			defer mp.calcs.Put(c)
			err := guard.Call(func() error {
				for !stop.Load() {
					lo := int(next.Add(int64(chunk))) - chunk
					if lo >= total {
						return nil
					}
					hi := min(lo+chunk, total)
					for i := lo; i < hi; i++ {
						if err := f(c, i); err != nil {
							return err
						}
					}
					done.Add(int64(hi - lo))
					if ctx.Err() != nil {
						stop.Store(true)
						return nil
					}
				}
				return nil
			})
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				stop.Store(true)
			}
		}()
	}
	mp.waitProgress(&wg, &stop, &done, total)
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mapping: interrupted after %d of %d items: %w", done.Load(), total, err)
	}
	return nil
}

// New returns the Mapper of the model: its visible layer must be binary
// (or spin, see the package doc) and its hidden layer any scalar kind. It
// only copies and checks the parameters (O(N·M)); the Mapper's methods that
// compute many terms take a context.
func New(m *rbm.RBM) (*Mapper, error) {
	if m == nil || m.W == nil {
		return nil, fmt.Errorf("mapping: nil model or weights")
	}
	if m.Visible == nil || m.Hidden == nil {
		return nil, fmt.Errorf("mapping: model has a nil layer")
	}
	r, c := m.W.Dims()
	if r != m.Visible.Len() || c != m.Hidden.Len() {
		return nil, fmt.Errorf("mapping: W is %d×%d, want N×M = %d×%d", r, c, m.Visible.Len(), m.Hidden.Len())
	}
	w := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		w = append(w, m.W.RawRowView(i)...)
	}
	return newMapper(m.Visible, m.Hidden, w)
}

// All returns every interaction of the model up to order maxOrder (see
// Mapper.All), stopping when ctx is cancelled.
func All(ctx context.Context, m *rbm.RBM, maxOrder int) ([]Term, error) {
	mp, err := New(m)
	if err != nil {
		return nil, err
	}
	return mp.All(ctx, maxOrder)
}

// Fields returns the first-order terms of the model (see Mapper.Fields),
// stopping when ctx is cancelled.
func Fields(ctx context.Context, m *rbm.RBM) ([]float64, error) {
	mp, err := New(m)
	if err != nil {
		return nil, err
	}
	return mp.Fields(ctx)
}

// unitValues classifies the values of a visible unit for newMapper.
type unitValues int

const (
	otherValues  unitValues = iota
	zeroOne                 // {0, 1}: the variables of the mapping
	plusMinusOne            // {−1, +1}: mapped to {0, 1} by s = 2v − 1
)

// visibleValues classifies the values of the units of a discrete
// (rbm.Discrete) scalar layer.
func visibleValues(l rbm.Layer) unitValues {
	d, ok := l.(rbm.Discrete)
	if !ok || l.States() != 1 {
		return otherValues
	}
	vals := d.UnitValues()
	if len(vals) != 2 {
		return otherValues
	}
	switch {
	case vals[0][0] == 0 && vals[1][0] == 1:
		return zeroOne
	case vals[0][0] == -1 && vals[1][0] == 1:
		return plusMinusOne
	}
	return otherValues
}
