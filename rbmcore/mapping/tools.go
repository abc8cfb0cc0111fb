package mapping

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// ZeroFieldBias returns the visible-layer θ that makes every first-order
// term vanish, b_k = −Σ_µ K_µ(w_kµ) ([BR21] Fig. 4); for a spin visible
// layer the θ of the ±1 units (half the {0,1} field). It stops when ctx is
// cancelled.
func (mp *Mapper) ZeroFieldBias(ctx context.Context) ([]float64, error) {
	f, err := mp.Fields(ctx)
	if err != nil {
		return nil, err
	}
	for k := range f {
		f[k] = -(f[k] - mp.bias[k])
		if mp.spin {
			f[k] /= 2
		}
	}
	return f, nil
}

// LinearFromCouplings returns a Linear RBM (binary visible units, M
// Gaussian hidden units with γ = 1, θ = 0) whose interaction model has the
// pairwise couplings j (off-diagonal part of a symmetric N×N matrix; its
// diagonal is used as given in the eigendecomposition, zero is the natural
// choice) and the fields h ([BR21] Eq. 22): J = U Λ Uᵀ, λ0 = −λ_min
// (the paper says "the smallest eigenvalue"; the construction needs its
// negative), W = U_M (Λ_M + λ0)^{1/2} with the M largest eigenvalues, and
// b_i = h_i − ½(WWᵀ)_ii so the fields are exact for every M.
//
// With M = N − 1 (or more) the couplings are reproduced exactly; with fewer
// units WWᵀ is the best rank-M approximation of J + λ0 I in Frobenius norm
// (Eckart–Young), the paper's construction, which is not necessarily the best
// fit of the off-diagonal part alone.
func LinearFromCouplings(j mat.Matrix, h []float64, m int) (*rbm.RBM, error) {
	n, c := j.Dims()
	if n != c {
		return nil, fmt.Errorf("mapping: LinearFromCouplings: J is %d×%d, want square", n, c)
	}
	if len(h) != n {
		return nil, fmt.Errorf("mapping: LinearFromCouplings: %d fields for N = %d", len(h), n)
	}
	if m < 1 {
		return nil, fmt.Errorf("mapping: LinearFromCouplings: M = %d must be positive", m)
	}
	sym := mat.NewSymDense(n, nil)
	for a := 0; a < n; a++ {
		for b := a; b < n; b++ {
			x, y := j.At(a, b), j.At(b, a)
			if !isFinite(x) || math.Abs(x-y) > 1e-12*math.Max(1, math.Abs(x)) {
				return nil, fmt.Errorf("mapping: LinearFromCouplings: J[%d][%d] = %v, J[%d][%d] = %v: want finite and symmetric", a, b, x, b, a, y)
			}
			sym.SetSym(a, b, x)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, fmt.Errorf("mapping: LinearFromCouplings: eigendecomposition of J failed")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	lambda0 := -vals[0]
	// Columns with the largest λ + λ0, dropping the zero one(s).
	keep := min(m, n-1)
	if n == 1 {
		keep = 0
	}
	w := mat.NewDense(n, m, nil)
	for col := 0; col < keep; col++ {
		e := n - 1 - col
		s := math.Sqrt(math.Max(vals[e]+lambda0, 0))
		for i := 0; i < n; i++ {
			w.Set(i, col, vecs.At(i, e)*s)
		}
	}
	vis := rbm.Binary(n)
	for i := 0; i < n; i++ {
		d := mat.Dot(w.RowView(i), w.RowView(i))
		vis.Theta[i] = h[i] - 0.5*d
		if !isFinite(h[i]) {
			return nil, fmt.Errorf("mapping: LinearFromCouplings: field h[%d] = %v is not finite", i, h[i])
		}
	}
	return &rbm.RBM{Visible: vis, Hidden: rbm.Gaussian(m), W: w}, nil
}

// termKey packs a sorted site list into a map key.
func termKey(sites []int) string {
	b := make([]byte, 0, 3*len(sites))
	for _, k := range sites {
		b = append(b, byte(k>>16), byte(k>>8), byte(k))
	}
	return string(b)
}

// Probabilities returns the distribution of the interaction model over all
// 2^n states, P(v) ∝ exp(Σ_{S⊆on(v)} I(S)), indexed by the state's bits
// (v_k = bit k of the index). Sets absent from terms count as zero. For
// n ≤ 24.
func Probabilities(terms []Term, n int) ([]float64, error) {
	if n < 1 || n > 24 {
		return nil, fmt.Errorf("mapping: Probabilities: n = %d out of range [1, 24]", n)
	}
	size := 1 << n
	f := make([]float64, size)
	for _, t := range terms {
		mask := 0
		for _, k := range t.Sites {
			if k < 0 || k >= n {
				return nil, fmt.Errorf("mapping: Probabilities: term %v has a site outside [0, %d)", t.Sites, n)
			}
			mask |= 1 << k
		}
		if mask == 0 {
			return nil, fmt.Errorf("mapping: Probabilities: empty term")
		}
		f[mask] += t.Value
	}
	// Zeta transform: F(v) = Σ_{S⊆v} I(S).
	for k := 0; k < n; k++ {
		for v := 0; v < size; v++ {
			if v>>k&1 == 1 {
				f[v] += f[v^1<<k]
			}
		}
	}
	mx := math.Inf(-1)
	for _, x := range f {
		mx = math.Max(mx, x)
	}
	if !isFinite(mx) {
		return nil, fmt.Errorf("mapping: Probabilities: log-weight %v is not finite", mx)
	}
	z := 0.0
	for v, x := range f {
		f[v] = math.Exp(x - mx)
		z += f[v]
	}
	for v := range f {
		f[v] /= z
	}
	return f, nil
}

// StateFrequencies returns the empirical distribution of the rows of a
// {0,1} (or ±1: +1 counts as on) sample matrix over the 2^N states, indexed
// as in Probabilities.
func StateFrequencies(samples mat.Matrix) ([]float64, error) {
	r, n := samples.Dims()
	if n < 1 || n > 24 || r == 0 {
		return nil, fmt.Errorf("mapping: StateFrequencies: %d×%d samples: want rows and 1..24 columns", r, n)
	}
	f := make([]float64, 1<<n)
	for i := 0; i < r; i++ {
		v := 0
		for k := 0; k < n; k++ {
			switch x := samples.At(i, k); x {
			case 1:
				v |= 1 << k
			case 0, -1:
			default:
				return nil, fmt.Errorf("mapping: StateFrequencies: sample %d, unit %d = %v is not binary", i, k, x)
			}
		}
		f[v]++
	}
	for v := range f {
		f[v] /= float64(r)
	}
	return f, nil
}

// StrengthByOrder returns, for s = 1..maxOrder, the root-mean-square of the
// interactions of order s ([BR21] Fig. 11), without the visible bias at
// s = 1. When C(N, s) exceeds maxSets the mean is estimated on maxSets
// site sets drawn uniformly (without repetition within a set) with rng.
func (mp *Mapper) StrengthByOrder(ctx context.Context, maxOrder, maxSets int, rng *rand.Rand) ([]float64, error) {
	ctx = rbm.ContextOrDefault(ctx)
	if maxOrder < 1 || maxOrder > mp.n || maxOrder > 30 {
		return nil, fmt.Errorf("mapping: StrengthByOrder: maxOrder = %d must be in [1, min(N=%d, 30)]", maxOrder, mp.n)
	}
	if maxSets < 1 {
		return nil, fmt.Errorf("mapping: StrengthByOrder: maxSets = %d must be positive", maxSets)
	}
	out := make([]float64, maxOrder)
	for s := 1; s <= maxOrder; s++ {
		count := 1.0
		for i := 0; i < s; i++ {
			count = count * float64(mp.n-i) / float64(i+1)
		}
		var terms []Term
		if count <= float64(maxSets) {
			var err error
			terms, err = mp.setsOfSize(s)
			if err != nil {
				return nil, err
			}
		} else {
			if rng == nil {
				return nil, fmt.Errorf("mapping: StrengthByOrder: order %d has %g sets > maxSets = %d and rng is nil", s, count, maxSets)
			}
			terms = make([]Term, maxSets)
			for i := range terms {
				terms[i].Sites = randomSet(rng, mp.n, s)
			}
		}
		if err := mp.fill(ctx, terms); err != nil {
			return nil, err
		}
		var sum float64
		for _, t := range terms {
			v := t.Value
			if s == 1 {
				v -= mp.bias[t.Sites[0]]
			}
			sum += v * v
		}
		out[s-1] = math.Sqrt(sum / float64(len(terms)))
	}
	return out, nil
}

// setsOfSize lists every sorted set of s sites.
func (mp *Mapper) setsOfSize(s int) ([]Term, error) {
	var out []Term
	idx := make([]int, s)
	for j := range idx {
		idx[j] = j
	}
	for {
		out = append(out, Term{Sites: append([]int(nil), idx...)})
		if len(out) > MaxAllTerms {
			return nil, fmt.Errorf("mapping: more than %d sets of size %d", MaxAllTerms, s)
		}
		j := s - 1
		for j >= 0 && idx[j] == mp.n-s+j {
			j--
		}
		if j < 0 {
			return out, nil
		}
		idx[j]++
		for i := j + 1; i < s; i++ {
			idx[i] = idx[i-1] + 1
		}
	}
}

// randomSet draws s distinct sites of [0, n) uniformly, sorted.
func randomSet(rng *rand.Rand, n, s int) []int {
	set := make([]int, 0, s)
	for len(set) < s {
		k := rng.IntN(n)
		dup := false
		for _, x := range set {
			if x == k {
				dup = true
				break
			}
		}
		if !dup {
			set = append(set, k)
		}
	}
	sort.Ints(set)
	return set
}

// StrengthSlope fits log RMS_s = a + slope·s by least squares over the
// orders given (rms[s-1] for s = 1..len(rms), zeros skipped) and returns the
// slope (natural log) and the effective weight w_eff = e^slope of [BR21]
// Fig. 11 (10^slope' for a log10 fit is the same number).
func StrengthSlope(rms []float64) (slope, wEff float64, err error) {
	var sx, sy, sxx, sxy, n float64
	for i, r := range rms {
		if !(r > 0) {
			continue
		}
		x, y := float64(i+1), math.Log(r)
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
		n++
	}
	if n < 2 {
		return 0, 0, fmt.Errorf("mapping: StrengthSlope: need at least two positive RMS values, have %v", n)
	}
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return slope, math.Exp(slope), nil
}

// OrderLimit returns the largest interaction order s that a relative
// weight error δw/w still determines: ΔI^(s)/I^(s) ≈ (1+δw/w)^s − 1 < 1
// gives s < log 2 / log(1 + δw/w) ≈ 0.7·w/δw ([BR21], MNIST section; the
// paper writes "≪ 1", the log 2 needs "< 1").
func OrderLimit(relErr float64) (float64, error) {
	if !(relErr > 0) || math.IsInf(relErr, 0) {
		return 0, fmt.Errorf("mapping: OrderLimit: relative weight error %v must be positive and finite", relErr)
	}
	return math.Ln2 / math.Log1p(relErr), nil
}

// Regression is the fit of one coupling matrix against a reference over the
// pairs i < j ([BR21] Fig. 6: J_M = α_M J_ref).
type Regression struct {
	// Alpha is the least-squares slope through the origin,
	// Σ J J_ref / Σ J_ref².
	Alpha float64
	// Slope and Intercept are the ordinary least-squares line J ≈ Slope·J_ref + Intercept.
	Slope, Intercept float64
	// R2 is the coefficient of determination of the ordinary fit.
	R2 float64
}

// RegressCouplings fits j against ref over the pairs i < j.
func RegressCouplings(j, ref mat.Matrix) (Regression, error) {
	r, c := j.Dims()
	r2, c2 := ref.Dims()
	if r != c || r2 != r || c2 != c || r < 2 {
		return Regression{}, fmt.Errorf("mapping: RegressCouplings of %d×%d and %d×%d: want equal square sizes ≥ 2", r, c, r2, c2)
	}
	var n, sx, sy, sxx, sxy, syy float64
	for a := 0; a < r; a++ {
		for b := a + 1; b < r; b++ {
			x, y := ref.At(a, b), j.At(a, b)
			n++
			sx += x
			sy += y
			sxx += x * x
			sxy += x * y
			syy += y * y
		}
	}
	if sxx == 0 {
		return Regression{}, fmt.Errorf("mapping: RegressCouplings: the reference couplings are all zero")
	}
	var g Regression
	g.Alpha = sxy / sxx
	vx := sxx - sx*sx/n
	cov := sxy - sx*sy/n
	vy := syy - sy*sy/n
	if vx > 0 {
		g.Slope = cov / vx
		g.Intercept = (sy - g.Slope*sx) / n
		if vy > 0 {
			g.R2 = cov * cov / (vx * vy)
		}
	}
	return g, nil
}

// ToSpin converts {0,1} interactions into the couplings of the same
// distribution in spins s = 2v − 1: log P = Σ_{T≠∅} Ĵ(T) Π_{k∈T} s_k + const
// with Ĵ(T) = Σ_{S⊇T} I(S) / 2^{|S|} (Walsh–Fourier coefficients). It is
// exact when terms holds every non-zero I(S) (e.g. All with maxOrder = N);
// a list truncated at some order gives the Ĵ of the truncated model. The
// result is sorted like All. Sets of more than 30 sites are rejected.
func ToSpin(terms []Term) ([]Term, error) {
	return walsh(terms, func(s, t int) float64 { return math.Ldexp(1, -s) })
}

// FromSpin is the inverse of ToSpin: I(S) = Σ_{T⊇S} Ĵ(T) 2^{|S|} (−1)^{|T|−|S|}.
func FromSpin(terms []Term) ([]Term, error) {
	return walsh(terms, func(t, s int) float64 {
		f := math.Ldexp(1, s)
		if (t-s)&1 == 1 {
			f = -f
		}
		return f
	})
}

// walsh spreads each term over its non-empty subsets with weight
// f(|S|, |T|).
func walsh(terms []Term, f func(s, t int) float64) ([]Term, error) {
	acc := map[string]*Term{}
	for _, term := range terms {
		s := len(term.Sites)
		if s == 0 || s > 30 {
			return nil, fmt.Errorf("mapping: term with %d sites: want 1..30", s)
		}
		for j := 1; j < s; j++ {
			if term.Sites[j] <= term.Sites[j-1] {
				return nil, fmt.Errorf("mapping: term sites %v are not strictly increasing", term.Sites)
			}
		}
		for mask := 1; mask < 1<<s; mask++ {
			sub := make([]int, 0, s)
			for j := 0; j < s; j++ {
				if mask>>j&1 == 1 {
					sub = append(sub, term.Sites[j])
				}
			}
			key := termKey(sub)
			t, ok := acc[key]
			if !ok {
				t = &Term{Sites: sub}
				acc[key] = t
			}
			t.Value += term.Value * f(s, len(sub))
		}
	}
	out := make([]Term, 0, len(acc))
	for _, t := range acc {
		out = append(out, *t)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a].Sites, out[b].Sites
		if len(x) != len(y) {
			return len(x) < len(y)
		}
		for i := range x {
			if x[i] != y[i] {
				return x[i] < y[i]
			}
		}
		return false
	})
	return out, nil
}
