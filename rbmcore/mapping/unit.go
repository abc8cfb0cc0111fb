package mapping

import (
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// family is what the mapping knows about a hidden layer beyond its CGF.
type family int

const (
	// famGeneric: Γ only through rbm.Layer.UnitCGF (e.g. dReLU).
	famGeneric family = iota
	// famGaussian: Γ(I) = (I+θ)²/(2γ) + const. Closed form (Eq. 18a, 20a).
	famGaussian
	// famReLU: Γ(I) = x²/2 + log Φ(x) + const, x = (I+θ)/√γ.
	famReLU
	// famBinary: Γ(I) = softplus(I+θ) (Step).
	famBinary
	// famPoisson: Γ(I) = e^{I+θ} (Exponential). Closed form (Eq. 18d, 20d).
	famPoisson
	// famSpin: Γ(I) = log 2cosh(I+θ) = softplus(2(I+θ)) − (I+θ), handled
	// as a binary unit with doubled weights and field.
	famSpin
)

// hiddenUnits describes the hidden layer as the mapping uses it. Every unit's
// input is off[µ] + Σ_k w_kµ v_k; for the families with closed forms the
// unit's function of that input is parametrised by x0 (the scaled field
// incl. the offset: (θ+off)/√γ for ReLU, 2(θ+off) for spin, θ+off otherwise)
// and scale (the factor applied to weights: 1/√γ for ReLU, 1/γ for Gaussian,
// 2 for spin, 1 otherwise).
type hiddenUnits struct {
	layer rbm.Layer
	fam   family
	off   []float64 // input offset per unit (spin visible layers)
	x0    []float64
	scale []float64
	jets  [][]float64 // Taylor coefficients g_n at x0 (binary, spin, ReLU)
	kappa [][]float64 // n!·g_n, the cumulants in the scaled variable
	rad   []float64   // radius of convergence of the series at x0
}

func paramByName(l rbm.Layer, name string) []float64 {
	for i, n := range l.ParamNames() {
		if n == name {
			return l.Params()[i]
		}
	}
	return nil
}

// newHiddenUnits inspects the hidden layer. off may be nil (all zero).
func newHiddenUnits(l rbm.Layer, off []float64) (*hiddenUnits, error) {
	if l.States() != 1 {
		return nil, fmt.Errorf("mapping: hidden layer kind %q has %d states per unit; only scalar hidden units are supported", l.Kind(), l.States())
	}
	m := l.Len()
	if off == nil {
		off = make([]float64, m)
	}
	h := &hiddenUnits{layer: l, off: off, x0: make([]float64, m), scale: make([]float64, m)}
	theta := paramByName(l, "theta")
	gamma := paramByName(l, "gamma")
	h.fam = familyOf(l)
	if h.fam != famGeneric && len(theta) != m {
		return nil, fmt.Errorf("mapping: hidden layer kind %q has no theta parameter of length %d", l.Kind(), m)
	}
	if (h.fam == famGaussian || h.fam == famReLU) && len(gamma) != m {
		return nil, fmt.Errorf("mapping: hidden layer kind %q has no gamma parameter of length %d", l.Kind(), m)
	}
	for u := 0; u < m; u++ {
		if !isFinite(off[u]) {
			return nil, fmt.Errorf("mapping: hidden unit %d: input offset %v is not finite", u, off[u])
		}
		switch h.fam {
		case famGaussian:
			if !(gamma[u] > 0) {
				return nil, fmt.Errorf("mapping: hidden unit %d: gamma = %v must be positive", u, gamma[u])
			}
			h.x0[u], h.scale[u] = theta[u]+off[u], 1/gamma[u]
		case famReLU:
			if !(gamma[u] > 0) {
				return nil, fmt.Errorf("mapping: hidden unit %d: gamma = %v must be positive", u, gamma[u])
			}
			s := 1 / math.Sqrt(gamma[u])
			h.x0[u], h.scale[u] = (theta[u]+off[u])*s, s
		case famSpin:
			h.x0[u], h.scale[u] = 2*(theta[u]+off[u]), 2
		case famBinary, famPoisson:
			h.x0[u], h.scale[u] = theta[u]+off[u], 1
		}
		if h.fam != famGeneric && !isFinite(h.x0[u]) {
			return nil, fmt.Errorf("mapping: hidden unit %d: theta = %v is not finite", u, theta[u])
		}
	}
	if h.fam == famBinary || h.fam == famSpin || h.fam == famReLU {
		h.jets = make([][]float64, m)
		h.kappa = make([][]float64, m)
		h.rad = make([]float64, m)
		for u := range h.jets {
			g := make([]float64, maxJet+1)
			jetInto(h.fam, h.x0[u], g)
			k := make([]float64, maxJet+1)
			for n := range k {
				k[n] = g[n] / invFact[n]
			}
			h.jets[u], h.kappa[u], h.rad[u] = g, k, radius(h.fam, h.x0[u])
		}
	}
	return h, nil
}

// familyOf maps the layer's closed form of Γ (rbm.ClosedForm) to the
// mapping's numerics; layers without one take the generic path.
func familyOf(l rbm.Layer) family {
	c, ok := l.(rbm.ClosedForm)
	if !ok {
		return famGeneric
	}
	switch c.CGFForm() {
	case rbm.FormQuadratic:
		return famGaussian
	case rbm.FormHalfQuadratic:
		return famReLU
	case rbm.FormSoftplus:
		return famBinary
	case rbm.FormExp:
		return famPoisson
	case rbm.FormLogCosh:
		return famSpin
	}
	return famGeneric
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// unitCalc evaluates the contribution of one hidden unit to I(S):
//
//	D_µ(S) = Σ_{T⊆S} (−1)^{|S|−|T|} Γ_µ(off_µ + Σ_{k∈T} w_kµ),
//
// the Möbius inversion of the unit's CGF on the Boolean lattice ([BR21]
// Eq. 14). It owns scratch space and is not safe for concurrent use.
type unitCalc struct {
	h       *hiddenUnits
	corners []float64 // 2^s corner inputs
	vals    []float64
	a       []float64 // scaled weights
	ser     []float64 // power series scratch
	fac     []float64
	rowIn   []float64 // Pairwise row buffers (length N)
	rowOut  []float64
}

func newUnitCalc(h *hiddenUnits) *unitCalc {
	return &unitCalc{h: h, ser: make([]float64, maxJet+1), fac: make([]float64, maxJet+1)}
}

// maxJet is the highest Taylor order the series path uses.
const maxJet = 80

// unit returns D_µ(S) for the weights w (w[j] = w_{k_j µ}, k_j ∈ S).
func (c *unitCalc) unit(mu int, w []float64) float64 {
	h := c.h
	s := len(w)
	switch h.fam {
	case famGaussian:
		g := h.scale[mu] // 1/γ
		switch s {
		case 1:
			return g * w[0] * (0.5*w[0] + h.x0[mu])
		case 2:
			return g * w[0] * w[1]
		}
		return 0
	case famPoisson:
		p := math.Exp(h.x0[mu])
		for _, x := range w {
			p *= math.Expm1(x)
		}
		return p
	case famGeneric:
		return c.genericMobius(mu, w)
	}
	// Binary, spin, ReLU: scaled weights, then series or direct path.
	c.a = c.a[:0]
	sum := 0.0
	for _, x := range w {
		a := x * h.scale[mu]
		c.a = append(c.a, a)
		sum += math.Abs(a)
	}
	d, ok := 0.0, false
	if n := seriesOrder(sum/h.rad[mu], s); n > 0 {
		d, ok = c.seriesUnit(h.kappa[mu], c.a, n)
	}
	if !ok {
		d = c.direct(h.x0[mu], c.a)
	}
	if h.fam == famSpin && s == 1 {
		// log 2cosh(x) = softplus(2x) − x: remove the linear part.
		d -= w[0]
	}
	return d
}

// radius is a lower bound on the radius of convergence of the Taylor series
// of the (scaled) CGF around x0: the distance to the poles of σ at ±iπ for
// softplus; for the ReLU CGF log(Φ/φ) the distance to the complex zeros of
// Φ, which all have Re ≥ 1.916 and |Im| ≥ 2.816 (the nearest pair is
// 1.916 ± 2.816i).
func radius(f family, x0 float64) float64 {
	if f == famReLU {
		if x0 < 1.916 {
			return math.Hypot(1.916-x0, 2.81)
		}
		return 2.81
	}
	return math.Hypot(x0, math.Pi)
}

// corners fills c.corners[T] = x0 + Σ_{j∈T} a_j for every subset T (bit
// mask) and returns whether all are ≥ 0 and whether all are ≤ 0.
func (c *unitCalc) fillCorners(x0 float64, a []float64) (allPos, allNeg bool) {
	n := 1 << len(a)
	if cap(c.corners) < n {
		c.corners = make([]float64, n)
		c.vals = make([]float64, n)
	}
	c.corners = c.corners[:n]
	c.vals = c.vals[:n]
	c.corners[0] = x0
	allPos, allNeg = x0 >= 0, x0 <= 0
	for t := 1; t < n; t++ {
		j := lowBit(t)
		x := c.corners[t&(t-1)] + a[j]
		c.corners[t] = x
		allPos = allPos && x >= 0
		allNeg = allNeg && x <= 0
	}
	return allPos, allNeg
}

func lowBit(t int) int {
	j := 0
	for t&1 == 0 {
		t >>= 1
		j++
	}
	return j
}

// mobiusSum returns Σ_T (−1)^{s−|T|} vals[T] with Neumaier compensation.
func mobiusSum(vals []float64, s int) float64 {
	var sum, comp float64
	for t, v := range vals {
		if (s-popcount(t))&1 == 1 {
			v = -v
		}
		u := sum + v
		if math.Abs(sum) >= math.Abs(v) {
			comp += (sum - u) + v
		} else {
			comp += (v - u) + sum
		}
		sum = u
	}
	return sum + comp
}

func popcount(t int) int {
	n := 0
	for ; t != 0; t &= t - 1 {
		n++
	}
	return n
}

// direct is the Möbius sum over the 2^s corners for the binary/spin and
// ReLU families, written so that no precision is lost to the polynomial
// (linear, quadratic) part of Γ: when all corners lie on the side where Γ is
// a polynomial plus a tiny remainder, the polynomial's finite difference is
// taken exactly and only the remainder is summed.
func (c *unitCalc) direct(x0 float64, a []float64) float64 {
	s := len(a)
	allPos, allNeg := c.fillCorners(x0, a)
	var poly float64
	switch c.h.fam {
	case famReLU:
		// Γ = x²/2 + log Φ(x) + const.
		if allPos {
			switch s {
			case 1:
				poly = a[0] * (x0 + 0.5*a[0])
			case 2:
				poly = a[0] * a[1]
			}
			for t, x := range c.corners {
				c.vals[t] = mathx.LogPhi(x)
			}
		} else {
			for t, x := range c.corners {
				c.vals[t] = mathx.LogPhiOverPhi(x)
			}
		}
	default: // binary, spin (scaled): Γ = softplus(x)
		switch {
		case allPos:
			if s == 1 {
				poly = a[0]
			}
			for t, x := range c.corners {
				c.vals[t] = math.Log1p(math.Exp(-x))
			}
		case allNeg:
			for t, x := range c.corners {
				c.vals[t] = math.Log1p(math.Exp(x))
			}
		default:
			for t, x := range c.corners {
				c.vals[t] = mathx.Softplus(x)
			}
		}
	}
	return poly + mobiusSum(c.vals, s)
}

// genericMobius evaluates the Möbius sum through the layer's UnitCGF.
func (c *unitCalc) genericMobius(mu int, w []float64) float64 {
	c.fillCorners(c.h.off[mu], w)
	c.h.layer.UnitCGF(mu, c.corners, c.vals)
	return mobiusSum(c.vals, len(w))
}
