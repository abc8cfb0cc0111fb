package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// DReLULayer is a layer of double-ReLU units (Tubiana, Cocco & Monasson
// 2019, Eq. 3, in the field convention of the model files): with
// h₊ = max(h,0), h₋ = min(h,0),
//
//	U(h) = γ₊h₊²/2 + γ₋h₋²/2 - θ₊h₊ - θ₋h₋.
//
// The paper's thresholds (Eq. 3, which we follow, with h⁻ = min(h,0) and U
// containing +θ±h±) map to ThetaPlus = -θ₊, ThetaMinus = -θ₋; the
// paper's reference PGM code has θ₋ of the opposite sign to Eq. 3, so
// there ThetaMinus = +θ₋^PGM. The symmetric double well U = h²/2 + θ|h| of
// Harsh, Tubiana, Cocco & Monasson 2020 is γ± = 1, ThetaPlus = -θ,
// ThetaMinus = θ; DoubleWellLayer trains it with one θ per unit.
//
// Γ(I) = logaddexp(ℓ₊, ℓ₋) with ℓ± = log(Φ(x±)/φ(x±)) - ½ log γ±,
// x₊ = (I+θ₊)/√γ₊, x₋ = -(I+θ₋)/√γ₋.
type DReLULayer struct {
	GammaPlus, GammaMinus, ThetaPlus, ThetaMinus []float64
}

// DReLU returns n dReLU units with γ± = 1, θ± = 0 (a standard Gaussian).
func DReLU(n int) *DReLULayer {
	return &DReLULayer{GammaPlus: filled(n, 1), GammaMinus: filled(n, 1),
		ThetaPlus: make([]float64, n), ThetaMinus: make([]float64, n)}
}

// Kind returns "drelu".
func (l *DReLULayer) Kind() string { return "drelu" }

// Len returns the number of units.
func (l *DReLULayer) Len() int { return len(l.ThetaPlus) }

// States returns 1.
func (l *DReLULayer) States() int { return 1 }

// unit returns the kernel form of unit u's parameters.
func (l *DReLULayer) unit(u int) dreluUnit {
	return newDReLUUnit(l.GammaPlus[u], l.GammaMinus[u], l.ThetaPlus[u], l.ThetaMinus[u])
}

// units returns the kernel form of every unit's parameters.
func (l *DReLULayer) units() []dreluUnit {
	us := make([]dreluUnit, len(l.ThetaPlus))
	for u := range us {
		us[u] = l.unit(u)
	}
	return us
}

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *DReLULayer) UnitCGF(u int, in, out []float64) { l.unit(u).unitCGF(in, out) }

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *DReLULayer) CGF(in, out []float64) { dreluCGF(l.units(), in, out) }

// Mean sets out = Γ'(in).
func (l *DReLULayer) Mean(in, out []float64) {
	dreluEval(l.units(), in, out[:len(in)], nil, dreluGrads, nil)
}

// Var sets out = Γ″(in).
func (l *DReLULayer) Var(in, out []float64) {
	dreluEval(l.units(), in, nil, out[:len(in)], dreluGrads, nil)
}

// MeanGrad sets out = Γ'(in) and terms to the per-value ∂Γ/∂ξ of GradCGF
// (-h₊²/2, -h₋²/2, h₊, h₋ averaged over P(h | in)), from one evaluation of
// the branch moments per value.
func (l *DReLULayer) MeanGrad(in, out []float64, terms [][]float64) {
	dreluEval(l.units(), in, out[:len(in)], nil, dreluGrads, terms)
}

// Mode sets out to the argmax of -U(h) + I h: (I+θ₊)/γ₊ or (I+θ₋)/γ₋ or 0,
// whichever branch is higher (the positive one on ties).
func (l *DReLULayer) Mode(in, out []float64) { dreluMode(l.units(), in, out) }

// Sample picks a branch with its probability at inverse temperature beta
// and draws the truncated Gaussian of that branch (tail-safe).
func (l *DReLULayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	return dreluSample(l.units(), rng, in, out, beta)
}

// Energy sets out[b] = Σ_u U_u(h_bu).
func (l *DReLULayer) Energy(x, out []float64) { dreluEnergy(l.units(), x, out) }

// ParamNames returns ["gamma_plus", "gamma_minus", "theta_plus", "theta_minus"].
func (l *DReLULayer) ParamNames() []string {
	return []string{"gamma_plus", "gamma_minus", "theta_plus", "theta_minus"}
}

// Params returns [GammaPlus, GammaMinus, ThetaPlus, ThetaMinus].
func (l *DReLULayer) Params() [][]float64 {
	return [][]float64{l.GammaPlus, l.GammaMinus, l.ThetaPlus, l.ThetaMinus}
}

// GradCGF sets grads to the batch means of ∂Γ/∂γ₊ = -⟨h₊²⟩/2,
// ∂Γ/∂γ₋ = -⟨h₋²⟩/2, ∂Γ/∂θ₊ = ⟨h₊⟩, ∂Γ/∂θ₋ = ⟨h₋⟩.
func (l *DReLULayer) GradCGF(in []float64, grads [][]float64) {
	us := l.units()
	scalarGrad(len(us), in, grads, func(u int, x float64, g []float64) {
		s := us[u].moments(x)
		s.grads(dreluGrads, g)
	})
}

// GradLogWeight sets grads to the batch means of -h₊²/2, -h₋²/2, h₊, h₋.
func (l *DReLULayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.ThetaPlus), x, grads, func(u int, h float64, g []float64) {
		hp, hn := math.Max(h, 0), math.Min(h, 0)
		g[0], g[1], g[2], g[3] = -0.5*hp*hp, -0.5*hn*hn, hp, hn
	})
}

// Validate checks lengths, finiteness and γ± > 0.
func (l *DReLULayer) Validate() error {
	n := len(l.ThetaPlus)
	if len(l.GammaPlus) != n || len(l.GammaMinus) != n || len(l.ThetaMinus) != n {
		return fmt.Errorf("rbm: drelu layer: parameter lengths differ (gamma_plus %d, gamma_minus %d, theta_plus %d, theta_minus %d)",
			len(l.GammaPlus), len(l.GammaMinus), n, len(l.ThetaMinus))
	}
	return validateParams(l, "gamma_plus", "gamma_minus")
}

// Clone returns a deep copy.
func (l *DReLULayer) Clone() Layer {
	return &DReLULayer{GammaPlus: cloneSlice(l.GammaPlus), GammaMinus: cloneSlice(l.GammaMinus),
		ThetaPlus: cloneSlice(l.ThetaPlus), ThetaMinus: cloneSlice(l.ThetaMinus)}
}

func init() {
	mustRegister(LayerKind{Name: "drelu", New: func(n, _ int) (Layer, error) { return DReLU(n), nil }})
}

// dreluUnit holds one dReLU unit's parameters in the form of the per-value
// kernels: the curvatures and fields, and the reciprocals 1/√γ± and 1/γ±,
// so that the loops over a batch multiply where they would divide. Both
// DReLULayer and DoubleWellLayer evaluate their units through it.
type dreluUnit struct {
	gammaP, gammaN, thetaP, thetaN, rsP, rsN, rgP, rgN float64
}

// newDReLUUnit returns the kernel form of the unit with curvatures gp, gn
// and fields tp, tn.
func newDReLUUnit(gp, gn, tp, tn float64) dreluUnit {
	return dreluUnit{gammaP: gp, gammaN: gn, thetaP: tp, thetaN: tn,
		rsP: 1 / math.Sqrt(gp), rsN: 1 / math.Sqrt(gn), rgP: 1 / gp, rgN: 1 / gn}
}

// branches returns the unit's positive and negative half-line branches at
// input x.
func (c dreluUnit) branches(x float64) (pos, neg halfGaussian) {
	return halfGaussian{(x + c.thetaP) * c.rsP, c.gammaP}, halfGaussian{-(x + c.thetaN) * c.rsN, c.gammaN}
}

// cgf returns Γ(x) = log(Z₊ + Z₋), Z± = Φ(x±)/φ(x±)/√γ± the branch
// partition functions (no logarithm per branch); where a Z overflows
// (x± ≳ 37.6) it adds the branches' logs instead.
func (c dreluUnit) cgf(x float64) float64 {
	pos, neg := c.branches(x)
	if z := mathx.PhiRatio(pos.x)*c.rsP + mathx.PhiRatio(neg.x)*c.rsN; z > 0 && z < math.Inf(1) {
		return math.Log(z)
	}
	return mathx.LogAddExp(pos.logZ(), neg.logZ())
}

// unitCGF sets out[k] = Γ(in[k]).
func (c dreluUnit) unitCGF(in, out []float64) {
	for k, x := range in {
		out[k] = c.cgf(x)
	}
}

// energy returns U(h).
func (c dreluUnit) energy(h float64) float64 {
	if h >= 0 {
		return 0.5*c.gammaP*h*h - c.thetaP*h
	}
	return 0.5*c.gammaN*h*h - c.thetaN*h
}

// dreluMoments are the moments of one unit at one input: the branch
// probabilities, the branch moments used by the gradients (m1n ≤ 0: the
// negative branch's mean of h itself) and the unit's mean and variance (law
// of total variance, no cancellation).
type dreluMoments struct {
	pPos, pNeg         float64
	m1p, m2p, m1n, m2n float64
	mean, variance     float64
}

// moments returns the branch weights and moments at input x from one
// mathx.TruncRatio per branch: the branch partition functions
// Z± = Φ(x±)/φ(x±)/√γ± give P(h > 0) = Z₊/(Z₊ + Z₋) with no logarithm or
// exponential beyond the two erfcx. Where a Z overflows (x± ≳ 37.6, a
// branch far above its threshold) it works with the logs (momentsLog).
func (c *dreluUnit) moments(x float64) dreluMoments {
	rp, mp, vp := mathx.TruncRatio((x + c.thetaP) * c.rsP)
	rn, mn, vn := mathx.TruncRatio(-(x + c.thetaN) * c.rsN)
	zp, zn := rp*c.rsP, rn*c.rsN
	z := zp + zn
	if !(z > 0 && z < math.Inf(1)) {
		return c.momentsLog(x)
	}
	iz := 1 / z
	return newDReLUMoments(zp*iz, zn*iz, mp*c.rsP, (vp+mp*mp)*c.rgP, vp*c.rgP, -mn*c.rsN, (vn+mn*mn)*c.rgN, vn*c.rgN)
}

// momentsLog is moments with the branch weights from the logs of the
// branch partition functions (halfGaussian.stats), finite for any input.
func (c *dreluUnit) momentsLog(x float64) dreluMoments {
	pos, neg := c.branches(x)
	lp, m1p, m2p, vp := pos.stats()
	ln, m1n, m2n, vn := neg.stats()
	return newDReLUMoments(sigmoid(lp-ln), sigmoid(ln-lp), m1p, m2p, vp, -m1n, m2n, vn)
}

// newDReLUMoments combines the branch probabilities and the branch
// moments of h (m1n ≤ 0 on the negative branch; vp, vn the branch
// variances) into the unit's moments.
func newDReLUMoments(pPos, pNeg, m1p, m2p, vp, m1n, m2n, vn float64) dreluMoments {
	s := dreluMoments{pPos: pPos, pNeg: pNeg, m1p: m1p, m2p: m2p, m1n: m1n, m2n: m2n}
	s.mean = pPos*m1p + pNeg*m1n
	d := m1p - m1n
	s.variance = pPos*vp + pNeg*vn + pPos*pNeg*d*d
	return s
}

// dreluCGF sets out[b] = Σ_u Γ_u(I_bu) for the units us.
func dreluCGF(us []dreluUnit, in, out []float64) {
	scalarCGF(len(us), in, out, func(u int, x float64) float64 { return us[u].cgf(x) })
}

// gradLayout names the parameters whose per-value ∂Γ/∂ξ dreluEval writes:
// the dReLU unit's four or the double well's two.
type gradLayout int

const (
	// dreluGrads: -⟨h₊²⟩/2, -⟨h₋²⟩/2, ⟨h₊⟩, ⟨h₋⟩ (γ₊, γ₋, θ₊, θ₋).
	dreluGrads gradLayout = iota
	// doubleWellGrads: ⟨h⟩, -⟨|h|⟩ (θ, t).
	doubleWellGrads
)

// grads sets g (one entry per parameter of layout) to the derivatives of
// Γ with respect to the parameters of layout: with ⟨h₊⟩ = pPos·m1p and
// ⟨h₋⟩ = pNeg·m1n, the dReLU's -⟨h₊²⟩/2, -⟨h₋²⟩/2, ⟨h₊⟩, ⟨h₋⟩ or the
// double well's ⟨h⟩ and -⟨|h|⟩ = ⟨h₋⟩ - ⟨h₊⟩.
func (s *dreluMoments) grads(layout gradLayout, g []float64) {
	hp, hn := s.pPos*s.m1p, s.pNeg*s.m1n
	if layout == doubleWellGrads {
		g[0], g[1] = s.mean, hn-hp
		return
	}
	g[0], g[1], g[2], g[3] = -0.5*s.pPos*s.m2p, -0.5*s.pNeg*s.m2n, hp, hn
}

// dreluEval sets, for each value of the batch in, whichever of mean (Γ′),
// variance (Γ″) and terms (the per-value ∂Γ/∂ξ of MeanGrad, in layout) are
// not nil, from one evaluation of moments per value.
func dreluEval(us []dreluUnit, in, mean, variance []float64, layout gradLayout, terms [][]float64) {
	n := len(us)
	rowsOf(len(in), n)
	var g [4]float64
	for r0 := 0; r0 < len(in); r0 += n {
		for u, x := range in[r0 : r0+n] {
			s := us[u].moments(x)
			k := r0 + u
			if mean != nil {
				mean[k] = s.mean
			}
			if variance != nil {
				variance[k] = s.variance
			}
			if terms != nil {
				s.grads(layout, g[:])
				for p, t := range terms {
					t[k] = g[p]
				}
			}
		}
	}
}

// dreluMode sets out to the argmax of -U(h) + I h: (I+θ₊)/γ₊ or (I+θ₋)/γ₋
// or 0, whichever branch is higher (the positive one on ties).
func dreluMode(us []dreluUnit, in, out []float64) {
	scalarMap(len(us), in, out, func(u int, x float64) float64 {
		c := &us[u]
		hp := math.Max(x+c.thetaP, 0) * c.rgP
		hn := math.Min(x+c.thetaN, 0) * c.rgN
		if c.gammaP*hp*hp >= c.gammaN*hn*hn {
			return hp
		}
		return hn
	})
}

// dreluSample picks a branch with its probability at inverse temperature
// beta and draws the truncated Gaussian of that branch (tail-safe).
func dreluSample(us []dreluUnit, rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(us)
	out = out[:len(in)]
	sb := math.Sqrt(beta)
	for k, x := range in {
		c := &us[k%n]
		// With y± = √β x± (x₊ = (I+θ₊)/√γ₊, x₋ = -(I+θ₋)/√γ₋), the
		// branch weights at β are Z±(β) = Φ(y±)/φ(y±)/√(β γ±); the factor
		// √β cancels in P(h > 0) = Z₊/(Z₊ + Z₋). Where a Z overflows,
		// P(h > 0) = σ(ℓ₊ - ℓ₋) from the logs ℓ± of the Z±. A branch's
		// |h| is Y/√(β γ±), Y ~ N(y±, 1) truncated to Y > 0, which is
		// the excess over -y± of a standard normal drawn above -y±.
		yp, yn := sb*(x+c.thetaP)*c.rsP, -sb*(x+c.thetaN)*c.rsN
		zp, zn := mathx.PhiRatio(yp)*c.rsP, mathx.PhiRatio(yn)*c.rsN
		p := zp / (zp + zn)
		if z := zp + zn; !(z > 0 && z < math.Inf(1)) {
			p = sigmoid(mathx.LogPhiOverPhi(yp) - mathx.LogPhiOverPhi(yn) + 0.5*math.Log(c.rgP/c.rgN))
		}
		if rng.Float64() < p {
			out[k] = mathx.TruncNormalExcess(rng, -yp) * c.rsP / sb
		} else {
			out[k] = -mathx.TruncNormalExcess(rng, -yn) * c.rsN / sb
		}
	}
	return nil
}

// dreluEnergy sets out[b] = Σ_u U_u(h_bu).
func dreluEnergy(us []dreluUnit, x, out []float64) {
	scalarCGF(len(us), x, out, func(u int, h float64) float64 { return us[u].energy(h) })
}
