package train

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// BatchNorm normalises the scale of dReLU hidden units during training
// (Options.BatchNorm), after the batch normalisation of the hidden units in
// Tubiana, Cocco & Monasson's reference implementation. The zero value is
// off.
//
// A dReLU unit has an exact scale symmetry: with h → a h, the weights
// w_·µ/a, the curvatures γ±/a² and the thresholds θ±/a give the same P(v).
// The likelihood cannot tell these models apart, but the penalties on the
// weights can: the λ₁² penalty R_µ (L1Squared) of the representative with
// small weights and wide hidden units is small. The reference code removes
// the freedom by keeping every unit at unit variance over the data,
//
//	v_µ = Var_data(h_µ) = E_data[Var(h_µ|v)] + Var_data(E[h_µ|v]) = 1,
//
// so that the penalty acts on the weights of that representative. With
// BatchNorm the penalty is evaluated there for any parameters: the
// normalised weights are √v_µ w_·µ, R_µ is quadratic in the weights, so the
// penalty is v_µ R_µ(w_·µ), invariant under the symmetry, and the ascent
// direction gets −R_µ ∇v_µ besides −v_µ ∇R_µ (∇ over the weights and the
// unit's γ±, θ±). After every update each unit is moved along its symmetry
// (exactly: P(v) does not change) by a = v_µ^(−Rate/2), a fraction Rate of
// the way in log-variance to v_µ = 1, which keeps the parameters at the
// scale the optimiser's steps and MinGamma refer to. v_µ and its gradient
// are estimated on each minibatch. Only the λ₁² penalty, the one of the
// reference code's lattice-protein runs, is evaluated on the normalised
// weights; L2 and L1 act on the weights as they are.
//
// As in the reference code, each unit's thresholds are also centred on
// its mean input over the training data, µ_I = Σ_i w_iµ·µ_i (µ the data
// mean): the optimiser moves θ̃± = θ± + µ_I and the weights at fixed θ̃±,
// so the weight direction gets −µ_i (g_θ₊ + g_θ₋)_µ (the chain rule of
// θ± = θ̃± − µ_I) and after the step the thresholds follow the change of
// µ_I. This is a change of coordinates only: it changes the steps, not the
// function maximised.
//
// The reference code reaches the normalised models differently: it relaxes
// γ = 2/(1/γ₊ + 1/γ₋) at fixed weights toward the value that gives unit
// variance (rate 0.25 η/η₀) and corrects the gradient for the dependence
// of that γ on the other parameters (implicit differentiation). Both
// maximise the penalised likelihood over the unit-variance
// representatives; their steps differ.
//
// BatchNorm needs a dReLU hidden layer (rbm.DReLULayer) whose parameters
// and the weights are not frozen, and excludes Options.Centred (which
// centres the same thresholds its own way). Without a weight penalty it
// only rescales and recentres the units, which changes the steps but not
// the likelihood being maximised. It keeps no state across updates
// (checkpoints are unchanged).
type BatchNorm struct {
	// Rate ∈ [0, 1] is the fraction of the way, in log-variance, by which
	// each update rescales every hidden unit toward unit variance over the
	// minibatch (0: batch normalisation off; 1: exactly unit variance on
	// each minibatch, which makes the scale follow the minibatch noise).
	Rate float64
}

// on reports whether batch normalisation is enabled.
func (b BatchNorm) on() bool { return b.Rate != 0 }

// validate checks the rate.
func (b BatchNorm) validate() error {
	if !(b.Rate >= 0 && b.Rate <= 1) {
		return fmt.Errorf("train: Options.BatchNorm.Rate = %v, want a value in [0, 1] (0: off)", b.Rate)
	}
	return nil
}

// checkModel reports whether m's hidden layer can be batch normalised
// given the frozen parameters of the run.
func (b BatchNorm) checkModel(m *rbm.RBM, isFrozen func(string) bool) error {
	d, ok := m.Hidden.(*rbm.DReLULayer)
	if !ok {
		return fmt.Errorf("train: Options.BatchNorm needs a dReLU hidden layer, not %s", m.Hidden.Kind())
	}
	names := append([]string{"weights"}, d.ParamNames()...)
	for k, name := range names {
		if k > 0 {
			name = "hidden." + name
		}
		if isFrozen(name) {
			return fmt.Errorf("train: Options.BatchNorm rescales %s, which Options.Freeze lists", name)
		}
	}
	return nil
}

// bnStats are the data variances of the hidden units on one minibatch and
// their gradients.
type bnStats struct {
	// v[µ] is v_µ = Σ_b c_b Var(h_µ|v_b) + Σ_b c_b (⟨h_µ|v_b⟩ − m̄_µ)², with
	// c_b the data weights (summing to 1) and m̄_µ = Σ_b c_b ⟨h_µ|v_b⟩.
	v []float64
	// dIn[b·M+µ] is c_b ∂v_µ/∂I_bµ, so that ∂v_µ/∂w_iµ = Σ_b dIn[b·M+µ] v_bi.
	dIn []float64
	// dXi[p][µ] is ∂v_µ/∂ξ for the hidden parameters in the order of
	// DReLULayer.Params: γ₊, γ₋, θ₊, θ₋.
	dXi [4][]float64
	// cs, mbar and pen are scratch: the cumulants per row and unit, the
	// units' weighted mean activities m̄_µ, and the λ₁² penalty's column
	// factors times v_µ (run.direction).
	cs        []dreluCumulants
	mbar, pen []float64
}

// dreluCumulants are the conditional moments of a dReLU unit at one input
// and their derivatives: the mean m = Γ′(I), the variance s2 = Γ″(I), the
// third cumulant k3 = Γ‴(I), and ∂m/∂ξ, ∂s2/∂ξ for ξ = γ₊, γ₋, θ₊, θ₋.
type dreluCumulants struct {
	m, s2, k3 float64
	dm, ds2   [4]float64
}

// cumulantsAt returns the cumulants of unit u of l at input x. The unit's
// conditional law is an exponential family whose statistics are h, h₊, h₋,
// −h₊²/2, −h₋²/2 (natural parameters I, θ₊, θ₋, γ₊, γ₋, in the convention
// U = γ₊h₊²/2 + γ₋h₋²/2 − θ₊h₊ − θ₋h₋ of DReLULayer), so every derivative
// of a conditional moment is a joint cumulant of h with one statistic
// T_ξ: ∂m/∂ξ = κ(h, T_ξ), ∂s2/∂ξ = κ(h, h, T_ξ). As h₊h₋ = 0, these need
// only the moments E[h₊ᵏ], E[h₋ᵏ], k ≤ 4, which are the branch weights
// times the moments of Gaussians truncated at 0 (E[Yᵏ] = y E[Yᵏ⁻¹] +
// (k−1) E[Yᵏ⁻²] for Y ~ N(y, 1) on Y > 0, k ≥ 2).
func cumulantsAt(l *rbm.DReLULayer, u int, x float64) dreluCumulants {
	gp, gn := l.GammaPlus[u], l.GammaMinus[u]
	sp, sn := math.Sqrt(gp), math.Sqrt(gn)
	yp, yn := (x+l.ThetaPlus[u])/sp, -(x+l.ThetaMinus[u])/sn
	rp, m1p, vp := mathx.TruncRatio(yp)
	rn, m1n, vn := mathx.TruncRatio(yn)
	var pp float64
	if z := rp/sp + rn/sn; z > 0 && z < math.Inf(1) {
		pp = rp / sp / z
	} else { // a branch far above its threshold: compare the logs
		d := mathx.LogPhiOverPhi(yp) - mathx.LogPhiOverPhi(yn) - math.Log(sp/sn)
		pp = 1 / (1 + math.Exp(-d))
	}
	pn := 1 - pp
	// Truncated-Gaussian moments of each branch's standardised |h|.
	branch := func(y, m1, v float64) [5]float64 {
		m2 := v + m1*m1
		m3 := y*m2 + 2*m1
		return [5]float64{1, m1, m2, m3, y*m3 + 3*m2}
	}
	bp, bn := branch(yp, m1p, vp), branch(yn, m1n, vn)
	// P[k] = E[h₊ᵏ], N[k] = E[h₋ᵏ] (h₋ = min(h, 0) ≤ 0).
	var P, N [5]float64
	fp, fn := pp, pn
	for k := 1; k <= 4; k++ {
		fp, fn = fp/sp, -fn/sn
		P[k], N[k] = fp*bp[k], fn*bn[k]
	}
	m := P[1] + N[1]
	e2, e3 := P[2]+N[2], P[3]+N[3]
	c := dreluCumulants{m: m, s2: e2 - m*m, k3: e3 - 3*e2*m + 2*m*m*m}
	// For each statistic T: E[T], E[h T], E[h² T].
	stat := func(S [5]float64, power int, scale float64) (t, ht, hht float64) {
		return scale * S[power], scale * S[power+1], scale * S[power+2]
	}
	for p, s := range [4]struct {
		S     [5]float64
		power int
		scale float64
	}{{P, 2, -0.5}, {N, 2, -0.5}, {P, 1, 1}, {N, 1, 1}} {
		t, ht, hht := stat(s.S, s.power, s.scale)
		c.dm[p] = ht - m*t
		c.ds2[p] = hht - e2*t - 2*ht*m + 2*m*m*t
	}
	return c
}

// compute sets the statistics of the minibatch whose hidden inputs are in
// (rows × M, row-major) with data weights coef (nil: 1/rows each).
func (s *bnStats) compute(l *rbm.DReLULayer, in []float64, rows int, coef []float64) {
	nh := l.Len()
	if len(s.v) != nh {
		s.v, s.mbar, s.pen = make([]float64, nh), make([]float64, nh), make([]float64, nh)
		for p := range s.dXi {
			s.dXi[p] = make([]float64, nh)
		}
	}
	if len(s.dIn) < rows*nh {
		s.dIn, s.cs = make([]float64, rows*nh), make([]dreluCumulants, rows*nh)
	}
	weight := func(b int) float64 {
		if coef != nil {
			return coef[b]
		}
		return 1 / float64(rows)
	}
	mbar, cs := s.mbar, s.cs
	clear(mbar)
	for b := 0; b < rows; b++ {
		for u := 0; u < nh; u++ {
			c := cumulantsAt(l, u, in[b*nh+u])
			cs[b*nh+u] = c
			mbar[u] += weight(b) * c.m
		}
	}
	clear(s.v)
	for p := range s.dXi {
		clear(s.dXi[p])
	}
	for b := 0; b < rows; b++ {
		cb := weight(b)
		for u := 0; u < nh; u++ {
			c := &cs[b*nh+u]
			d := c.m - mbar[u]
			s.v[u] += cb * (c.s2 + d*d)
			// ∂/∂I of s2 + (m − m̄)²: the Σ_b c_b (m_b − m̄) ∂m̄ terms cancel.
			s.dIn[b*nh+u] = cb * (c.k3 + 2*d*c.s2)
			for p := range s.dXi {
				s.dXi[p][u] += cb * (c.ds2[p] + 2*d*c.dm[p])
			}
		}
	}
}

// penaltyGradient subtracts from the weight direction dW (nv × M) and the
// hidden direction dHid (DReLULayer.Params order) the gradient of the
// normalised λ₁² penalty Σ_µ v_µ R_µ beyond v_µ ∇R_µ, i.e. R_µ ∇v_µ, with
// R_µ = (λ₁²/(2 nv)) (Σ_i |w_iµ|)² and colL1[µ] = (λ₁²/nv) Σ_i |w_iµ| (the
// factor of the un-normalised penalty's gradient); vis holds the
// minibatch's visible rows (rows × nv).
func (s *bnStats) penaltyGradient(dW *mat.Dense, dHid [][]float64, vis []float64, rows int, colL1 []float64, l1sq float64) {
	nv, nh := dW.Dims()
	if rows == 0 || l1sq == 0 {
		return
	}
	R := make([]float64, nh)
	for u, c := range colL1 {
		R[u] = c * c * float64(nv) / (2 * l1sq)
	}
	var g mat.Dense
	g.Mul(mat.NewDense(rows, nv, vis[:rows*nv]).T(), mat.NewDense(rows, nh, s.dIn[:rows*nh]))
	wd := dW.RawMatrix().Data
	gd := g.RawMatrix().Data
	for i := 0; i < nv; i++ {
		for u := 0; u < nh; u++ {
			wd[i*nh+u] -= R[u] * gd[i*nh+u]
		}
	}
	for p := range s.dXi {
		for u, x := range s.dXi[p] {
			dHid[p][u] -= R[u] * x
		}
	}
}

// rescale moves every unit µ of the model along its scale symmetry toward
// v_µ = 1: h → a h with a = v_µ^(−rate/2), i.e. w_·µ, θ±_µ times v_µ^(rate/2)
// and γ±_µ times v_µ^rate. P(v) does not change.
func (s *bnStats) rescale(m *rbm.RBM, rate float64) {
	l := m.Hidden.(*rbm.DReLULayer)
	nv, nh := m.W.Dims()
	w := m.W.RawMatrix().Data
	f := make([]float64, nh)
	for u, v := range s.v {
		if !(v > 0) || math.IsInf(v, 0) {
			f[u] = 1 // a degenerate unit (no spread on the minibatch): left as it is
			continue
		}
		f[u] = math.Pow(v, rate/2)
		l.GammaPlus[u] *= f[u] * f[u]
		l.GammaMinus[u] *= f[u] * f[u]
		l.ThetaPlus[u] *= f[u]
		l.ThetaMinus[u] *= f[u]
	}
	for i := 0; i < nv; i++ {
		row := w[i*nh : (i+1)*nh]
		for u := range row {
			row[u] *= f[u]
		}
	}
}

// centreDirection applies the chain rule of the centred thresholds
// θ± = θ̃± − Σ_i w_iµ µ_i to the weight direction dW (nv × M): the
// direction at fixed θ̃± is that at fixed θ± minus µ_i (g_θ₊ + g_θ₋)_µ,
// with dHid the hidden direction (γ₊, γ₋, θ₊, θ₋).
func centreDirection(dW *mat.Dense, dHid [][]float64, mu []float64) {
	nv, nh := dW.Dims()
	wd := dW.RawMatrix().Data
	for i := 0; i < nv; i++ {
		if mu[i] == 0 {
			continue
		}
		row := wd[i*nh : (i+1)*nh]
		for u := range row {
			row[u] -= mu[i] * (dHid[2][u] + dHid[3][u])
		}
	}
}

// followMeanInput moves the thresholds of every unit by the change of its
// mean input µ_I = Σ_i w_iµ µ_i from the weights old to w (nv × M, the
// step the optimiser took), so that θ̃± = θ± + µ_I keep their new values.
func followMeanInput(l *rbm.DReLULayer, w, old, mu []float64) {
	nh := l.Len()
	shift := make([]float64, nh)
	for i, m := range mu {
		if m == 0 {
			continue
		}
		for u := 0; u < nh; u++ {
			shift[u] += (w[i*nh+u] - old[i*nh+u]) * m
		}
	}
	for u, d := range shift {
		l.ThetaPlus[u] -= d
		l.ThetaMinus[u] -= d
	}
}
