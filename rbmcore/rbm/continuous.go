package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// GaussianLayer is a layer of real units with U(h) = γh²/2 - θh:
// Γ(I) = (I+θ)²/(2γ) + ½ log(2π/γ), mean = mode = (I+θ)/γ, variance 1/γ.
type GaussianLayer struct {
	Gamma, Theta []float64
}

// Gaussian returns n Gaussian units with γ = 1, θ = 0.
func Gaussian(n int) *GaussianLayer {
	return &GaussianLayer{Gamma: filled(n, 1), Theta: make([]float64, n)}
}

// Kind returns "gaussian".
func (l *GaussianLayer) Kind() string { return "gaussian" }

// Len returns the number of units.
func (l *GaussianLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *GaussianLayer) States() int { return 1 }

func (l *GaussianLayer) cgf(u int, x float64) float64 {
	g := l.Gamma[u]
	x += l.Theta[u]
	return x*x/(2*g) + 0.5*(mathx.Log2Pi-math.Log(g))
}

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *GaussianLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.cgf(u, x)
	}
}

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *GaussianLayer) CGF(in, out []float64) { scalarCGF(len(l.Theta), in, out, l.cgf) }

func (l *GaussianLayer) mean(u int, x float64) float64 { return (x + l.Theta[u]) / l.Gamma[u] }

// Mean sets out = (in + θ)/γ.
func (l *GaussianLayer) Mean(in, out []float64) { scalarMap(len(l.Theta), in, out, l.mean) }

// Var sets out = 1/γ.
func (l *GaussianLayer) Var(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return 1 / l.Gamma[u] })
}

// Mode sets out = (in + θ)/γ.
func (l *GaussianLayer) Mode(in, out []float64) { scalarMap(len(l.Theta), in, out, l.mean) }

// Sample draws out ~ N((in+θ)/γ, 1/(beta γ)).
func (l *GaussianLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		u := k % n
		out[k] = l.mean(u, x) + rng.NormFloat64()/math.Sqrt(beta*l.Gamma[u])
	}
	return nil
}

// Energy sets out[b] = Σ_u γ_u h²/2 - θ_u h.
func (l *GaussianLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 { return 0.5*l.Gamma[u]*h*h - l.Theta[u]*h })
}

// ParamNames returns ["gamma", "theta"].
func (l *GaussianLayer) ParamNames() []string { return []string{"gamma", "theta"} }

// Params returns [Gamma, Theta].
func (l *GaussianLayer) Params() [][]float64 { return [][]float64{l.Gamma, l.Theta} }

// GradCGF sets grads = batch means of ∂Γ/∂γ = -⟨h²⟩/2 and ∂Γ/∂θ = ⟨h⟩.
func (l *GaussianLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) {
		m := l.mean(u, x)
		g[0] = -0.5 * (m*m + 1/l.Gamma[u])
		g[1] = m
	})
}

// GradLogWeight sets grads = batch means of -h²/2 and h.
func (l *GaussianLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0], g[1] = -0.5*h*h, h })
}

// Validate checks finiteness and γ > 0.
func (l *GaussianLayer) Validate() error {
	if len(l.Gamma) != len(l.Theta) {
		return fmt.Errorf("rbm: gaussian layer: gamma has %d entries, theta %d", len(l.Gamma), len(l.Theta))
	}
	return validateParams(l, "gamma")
}

// Clone returns a deep copy.
func (l *GaussianLayer) Clone() Layer {
	return &GaussianLayer{Gamma: cloneSlice(l.Gamma), Theta: cloneSlice(l.Theta)}
}

// ReLULayer is a layer of non-negative real units with U(h) = γh²/2 - θh on
// h ≥ 0 (+∞ below): a Gaussian truncated to [0, ∞). With x = (I+θ)/√γ,
// Γ(I) = log(Φ(x)/φ(x)) - ½ log γ and the mode (activation) is
// max(0, (I+θ)/γ). Seed 001's ReLU unit with threshold c is γ = 1, θ = -c.
type ReLULayer struct {
	Gamma, Theta []float64
}

// ReLU returns n ReLU units with γ = 1, θ = 0.
func ReLU(n int) *ReLULayer {
	return &ReLULayer{Gamma: filled(n, 1), Theta: make([]float64, n)}
}

// Kind returns "relu".
func (l *ReLULayer) Kind() string { return "relu" }

// Len returns the number of units.
func (l *ReLULayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *ReLULayer) States() int { return 1 }

// halfGaussian describes one half-line branch: the unit's value is
// h = s*Y/√γ with Y ~ N(x, 1) truncated to Y > 0 and s = ±1.
type halfGaussian struct{ x, gamma float64 }

// logZ is log ∫_0^∞ exp(-γy²/2 + (x√γ) y) dy.
func (b halfGaussian) logZ() float64 { return mathx.LogPhiOverPhi(b.x) - 0.5*math.Log(b.gamma) }

// moments returns E[Y]/√γ and E[Y²]/γ and Var[Y]/γ of the branch's |h|.
func (b halfGaussian) moments() (m1, m2, v float64) {
	m, vy := mathx.TruncMoments(b.x)
	s := math.Sqrt(b.gamma)
	return m / s, (vy + m*m) / b.gamma, vy / b.gamma
}

// sample draws |h| at inverse temperature beta.
func (b halfGaussian) sample(rng *rand.Rand, beta float64) float64 {
	xb := b.x * math.Sqrt(beta)
	return mathx.TruncNormalExcess(rng, -xb) / math.Sqrt(beta*b.gamma)
}

func (l *ReLULayer) branch(u int, x float64) halfGaussian {
	g := l.Gamma[u]
	return halfGaussian{(x + l.Theta[u]) / math.Sqrt(g), g}
}

func (l *ReLULayer) cgf(u int, x float64) float64 { return l.branch(u, x).logZ() }

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *ReLULayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.cgf(u, x)
	}
}

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *ReLULayer) CGF(in, out []float64) { scalarCGF(len(l.Theta), in, out, l.cgf) }

// Mean sets out = Γ'(in), the mean of the truncated Gaussian.
func (l *ReLULayer) Mean(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		m, _, _ := l.branch(u, x).moments()
		return m
	})
}

// Var sets out = Γ″(in), the variance of the truncated Gaussian.
func (l *ReLULayer) Var(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		_, _, v := l.branch(u, x).moments()
		return v
	})
}

// Mode sets out = max(0, (in + θ)/γ).
func (l *ReLULayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 {
		return math.Max(0, (x+l.Theta[u])/l.Gamma[u])
	})
}

// Sample draws from the truncated Gaussian ∝ exp(beta(-γh²/2 + (I+θ)h)) on
// h ≥ 0 with a tail-safe sampler (exact for any input).
func (l *ReLULayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		out[k] = l.branch(k%n, x).sample(rng, beta)
	}
	return nil
}

// Energy sets out[b] = Σ_u γ_u h²/2 - θ_u h (+Inf if some h < 0).
func (l *ReLULayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 {
		if h < 0 {
			return math.Inf(1)
		}
		return 0.5*l.Gamma[u]*h*h - l.Theta[u]*h
	})
}

// ParamNames returns ["gamma", "theta"].
func (l *ReLULayer) ParamNames() []string { return []string{"gamma", "theta"} }

// Params returns [Gamma, Theta].
func (l *ReLULayer) Params() [][]float64 { return [][]float64{l.Gamma, l.Theta} }

// GradCGF sets grads = batch means of ∂Γ/∂γ = -⟨h²⟩/2 and ∂Γ/∂θ = ⟨h⟩.
func (l *ReLULayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) {
		m1, m2, _ := l.branch(u, x).moments()
		g[0], g[1] = -0.5*m2, m1
	})
}

// GradLogWeight sets grads = batch means of -h²/2 and h.
func (l *ReLULayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0], g[1] = -0.5*h*h, h })
}

// Validate checks finiteness and γ > 0.
func (l *ReLULayer) Validate() error {
	if len(l.Gamma) != len(l.Theta) {
		return fmt.Errorf("rbm: relu layer: gamma has %d entries, theta %d", len(l.Gamma), len(l.Theta))
	}
	return validateParams(l, "gamma")
}

// Clone returns a deep copy.
func (l *ReLULayer) Clone() Layer {
	return &ReLULayer{Gamma: cloneSlice(l.Gamma), Theta: cloneSlice(l.Theta)}
}

// DReLULayer is a layer of double-ReLU units (seed 000, Eq. 3, in the field
// convention of the model files): with h₊ = max(h,0), h₋ = min(h,0),
//
//	U(h) = γ₊h₊²/2 + γ₋h₋²/2 - θ₊h₊ - θ₋h₋.
//
// Seed 000's thresholds (Eq. 3, which we follow, with h⁻ = min(h,0) and U
// containing +θ±h±) map to ThetaPlus = -θ₊⁽⁰⁰⁰⁾, ThetaMinus = -θ₋⁽⁰⁰⁰⁾; the
// reference PGM code's θ₋ has the opposite sign to Eq. 3, so there
// ThetaMinus = +θ₋^PGM. Seed 004's symmetric double well U = h²/2 + θ|h| is
// γ± = 1, ThetaPlus = -θ, ThetaMinus = θ.
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

// dreluState is the two-branch decomposition of one unit at one input.
type dreluState struct {
	pos, neg   halfGaussian
	lp, ln     float64 // branch log-weights
	pPos, pNeg float64 // branch probabilities
}

func (l *DReLULayer) state(u int, x float64) dreluState {
	gp, gn := l.GammaPlus[u], l.GammaMinus[u]
	s := dreluState{
		pos: halfGaussian{(x + l.ThetaPlus[u]) / math.Sqrt(gp), gp},
		neg: halfGaussian{-(x + l.ThetaMinus[u]) / math.Sqrt(gn), gn},
	}
	s.lp, s.ln = s.pos.logZ(), s.neg.logZ()
	s.pPos, s.pNeg = sigmoid(s.lp-s.ln), sigmoid(s.ln-s.lp)
	return s
}

func (l *DReLULayer) cgf(u int, x float64) float64 {
	s := l.state(u, x)
	return mathx.LogAddExp(s.lp, s.ln)
}

// UnitCGF sets out[k] = Γ_u(in[k]).
func (l *DReLULayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.cgf(u, x)
	}
}

// CGF sets out[b] = Σ_u Γ_u(I_bu).
func (l *DReLULayer) CGF(in, out []float64) { scalarCGF(len(l.ThetaPlus), in, out, l.cgf) }

// moments returns mean and variance (law of total variance, no
// cancellation) and the branch moments used by the gradients.
func (s dreluState) moments() (mean, variance, m1p, m2p, m1n, m2n float64) {
	m1p, m2p, vp := s.pos.moments()
	m1n, m2n, vn := s.neg.moments()
	m1n = -m1n
	mean = s.pPos*m1p + s.pNeg*m1n
	d := m1p - m1n
	variance = s.pPos*vp + s.pNeg*vn + s.pPos*s.pNeg*d*d
	return
}

// Mean sets out = Γ'(in).
func (l *DReLULayer) Mean(in, out []float64) {
	scalarMap(len(l.ThetaPlus), in, out, func(u int, x float64) float64 {
		m, _, _, _, _, _ := l.state(u, x).moments()
		return m
	})
}

// Var sets out = Γ″(in).
func (l *DReLULayer) Var(in, out []float64) {
	scalarMap(len(l.ThetaPlus), in, out, func(u int, x float64) float64 {
		_, v, _, _, _, _ := l.state(u, x).moments()
		return v
	})
}

// Mode sets out to the argmax of -U(h) + I h: (I+θ₊)/γ₊ or (I+θ₋)/γ₋ or 0,
// whichever branch is higher (the positive one on ties).
func (l *DReLULayer) Mode(in, out []float64) {
	scalarMap(len(l.ThetaPlus), in, out, func(u int, x float64) float64 {
		gp, gn := l.GammaPlus[u], l.GammaMinus[u]
		hp := math.Max(x+l.ThetaPlus[u], 0) / gp
		hn := math.Min(x+l.ThetaMinus[u], 0) / gn
		if gp*hp*hp >= gn*hn*hn {
			return hp
		}
		return hn
	})
}

// Sample picks a branch with its probability at inverse temperature beta
// and draws the truncated Gaussian of that branch (tail-safe).
func (l *DReLULayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	n := len(l.ThetaPlus)
	out = out[:len(in)]
	sb := math.Sqrt(beta)
	for k, x := range in {
		u := k % n
		gp, gn := l.GammaPlus[u], l.GammaMinus[u]
		pos := halfGaussian{(x + l.ThetaPlus[u]) / math.Sqrt(gp), gp}
		neg := halfGaussian{-(x + l.ThetaMinus[u]) / math.Sqrt(gn), gn}
		// ℓ±(β) = LogPhiOverPhi(√β x±) - ½ log(β γ±); the β term cancels
		// in P(h > 0) = σ(ℓ₊ - ℓ₋).
		d := mathx.LogPhiOverPhi(sb*pos.x) - mathx.LogPhiOverPhi(sb*neg.x) + 0.5*math.Log(gn/gp)
		if rng.Float64() < sigmoid(d) {
			out[k] = pos.sample(rng, beta)
		} else {
			out[k] = -neg.sample(rng, beta)
		}
	}
	return nil
}

// Energy sets out[b] = Σ_u U_u(h_bu).
func (l *DReLULayer) Energy(x, out []float64) {
	scalarCGF(len(l.ThetaPlus), x, out, func(u int, h float64) float64 {
		if h >= 0 {
			return 0.5*l.GammaPlus[u]*h*h - l.ThetaPlus[u]*h
		}
		return 0.5*l.GammaMinus[u]*h*h - l.ThetaMinus[u]*h
	})
}

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
	scalarGrad(len(l.ThetaPlus), in, grads, func(u int, x float64, g []float64) {
		s := l.state(u, x)
		_, _, m1p, m2p, m1n, m2n := s.moments()
		g[0], g[1] = -0.5*s.pPos*m2p, -0.5*s.pNeg*m2n
		g[2], g[3] = s.pPos*m1p, s.pNeg*m1n
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

// PoissonLayer is a layer of count units h ∈ ℕ with U(h) = -θh + ln h!
// (seed 001's Exponential unit with threshold c is θ = -c):
// Γ(I) = λ = exp(I+θ) = mean = variance; the mode is ⌊λ⌋.
type PoissonLayer struct {
	Theta []float64
}

// Poisson returns n Poisson units with θ = 0.
func Poisson(n int) *PoissonLayer { return &PoissonLayer{Theta: make([]float64, n)} }

// Kind returns "poisson".
func (l *PoissonLayer) Kind() string { return "poisson" }

// Len returns the number of units.
func (l *PoissonLayer) Len() int { return len(l.Theta) }

// States returns 1.
func (l *PoissonLayer) States() int { return 1 }

func (l *PoissonLayer) lambda(u int, x float64) float64 { return math.Exp(x + l.Theta[u]) }

// UnitCGF sets out[k] = exp(in[k] + θ_u) (+Inf when it overflows).
func (l *PoissonLayer) UnitCGF(u int, in, out []float64) {
	for k, x := range in {
		out[k] = l.lambda(u, x)
	}
}

// CGF sets out[b] = Σ_u exp(I_bu + θ_u).
func (l *PoissonLayer) CGF(in, out []float64) { scalarCGF(len(l.Theta), in, out, l.lambda) }

// Mean sets out = exp(in + θ).
func (l *PoissonLayer) Mean(in, out []float64) { scalarMap(len(l.Theta), in, out, l.lambda) }

// Var sets out = exp(in + θ).
func (l *PoissonLayer) Var(in, out []float64) { scalarMap(len(l.Theta), in, out, l.lambda) }

// Mode sets out = ⌊exp(in + θ)⌋.
func (l *PoissonLayer) Mode(in, out []float64) {
	scalarMap(len(l.Theta), in, out, func(u int, x float64) float64 { return math.Floor(l.lambda(u, x)) })
}

// Sample draws out ~ Poisson(exp(in + θ)). Only beta = 1 is supported (the
// tempered distribution is not Poisson); a mean above mathx's limit 1e15
// (input + θ > 34.5) is reported as an error naming the unit.
func (l *PoissonLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if beta != 1 {
		return fmt.Errorf("rbm: poisson layer: sampling at beta = %v is not supported (only 1)", beta)
	}
	n := len(l.Theta)
	out = out[:len(in)]
	for k, x := range in {
		v, err := mathx.Poisson(rng, l.lambda(k%n, x))
		if err != nil {
			return fmt.Errorf("rbm: poisson unit %d (row %d): %w", k%n, k/n, err)
		}
		out[k] = v
	}
	return nil
}

// Energy sets out[b] = Σ_u -θ_u h + ln h! (+Inf for a negative or
// non-integer h).
func (l *PoissonLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 {
		if h < 0 || h != math.Floor(h) {
			return math.Inf(1)
		}
		lg, _ := math.Lgamma(h + 1)
		return -l.Theta[u]*h + lg
	})
}

// ParamNames returns ["theta"].
func (l *PoissonLayer) ParamNames() []string { return []string{"theta"} }

// Params returns [Theta].
func (l *PoissonLayer) Params() [][]float64 { return [][]float64{l.Theta} }

// GradCGF sets grads[0] = batch mean of exp(in + θ).
func (l *PoissonLayer) GradCGF(in []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), in, grads, func(u int, x float64, g []float64) { g[0] = l.lambda(u, x) })
}

// GradLogWeight sets grads[0] = batch mean of h.
func (l *PoissonLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0] = h })
}

// Validate checks that the fields are finite.
func (l *PoissonLayer) Validate() error { return validateParams(l) }

// Clone returns a deep copy.
func (l *PoissonLayer) Clone() Layer { return &PoissonLayer{Theta: cloneSlice(l.Theta)} }
