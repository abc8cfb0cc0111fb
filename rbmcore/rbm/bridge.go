package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Bridge estimates log(Z_b/Z_a) between two models a and b of the same
// shape (e.g. successive checkpoints of one training run), much more
// cheaply than two log Z estimates from scratch when the models are close.
// It anneals along the straight line between their parameters,
// θ(s) = (1−s)θ_a + sθ_b at s = k/Steps (every layer's energy is linear in
// its parameters, so each intermediate is an RBM whose marginal
// f_s(v) = exp(−U_v^s(v) + Σ_µ Γ_µ^s(I^s(v))) is exact), with Sweeps block-
// Gibbs sweeps of the intermediate model per step: AIS from samples of a
// (forward) and, when samples of b are given, AIS from b back to a
// (reverse). The two sets of log-weights are combined by Bennett's
// acceptance ratio (Bennett 1976; for annealing work values through
// Crooks' relation, Shirts et al. 2003), the minimum-variance combination,
// with Bennett's asymptotic variance as the error.
type Bridge struct {
	// Steps is the number of annealing steps (default 50).
	Steps int
	// Sweeps is the number of Gibbs sweeps per intermediate model
	// (default 1).
	Sweeps int
	// Seed seeds the sampling.
	Seed uint64
}

// BridgeResult is the outcome of Bridge.Run.
type BridgeResult struct {
	// LogRatio estimates log Z_b − log Z_a; StdErr is its standard error.
	LogRatio, StdErr float64
	// Forward are the log-weights of the runs from a to b (each an unbiased
	// estimate of Z_b/Z_a in exp), Reverse those from b to a (of Z_a/Z_b;
	// nil without samples of b).
	Forward, Reverse []float64
	// EndForward holds the states where the forward runs ended (close to
	// samples of b when the bridge is good), EndReverse those of the
	// reverse runs.
	EndForward, EndReverse *mat.Dense
}

// Run estimates log(Z_b/Z_a) from fromA, samples of a (one run per row),
// and fromB, samples of b (nil: forward AIS only, with the delta-method
// standard error of the mean weight). ctx is checked between steps.
func (br Bridge) Run(ctx context.Context, a, b *RBM, fromA, fromB *mat.Dense) (BridgeResult, error) {
	ctx = ContextOrDefault(ctx)
	if br.Steps == 0 {
		br.Steps = 50
	}
	if br.Sweeps == 0 {
		br.Sweeps = 1
	}
	if br.Steps < 1 || br.Sweeps < 1 {
		return BridgeResult{}, fmt.Errorf("rbm: Bridge: Steps = %d, Sweeps = %d, want both ≥ 1", br.Steps, br.Sweeps)
	}
	for _, x := range []struct {
		name string
		m    *RBM
	}{{"a", a}, {"b", b}} {
		if err := x.m.Validate(); err != nil {
			return BridgeResult{}, fmt.Errorf("rbm: Bridge: model %s: %w", x.name, err)
		}
	}
	if a.Visible.Kind() != b.Visible.Kind() || a.Hidden.Kind() != b.Hidden.Kind() || Width(a.Visible) != Width(b.Visible) || Width(a.Hidden) != Width(b.Hidden) {
		return BridgeResult{}, fmt.Errorf("rbm: Bridge: models %v and %v differ in shape", a, b)
	}
	if fromA == nil {
		return BridgeResult{}, fmt.Errorf("rbm: Bridge: no samples of model a")
	}
	var res BridgeResult
	var err error
	if res.Forward, res.EndForward, err = br.anneal(ctx, a, b, fromA, br.Seed); err != nil {
		return BridgeResult{}, fmt.Errorf("rbm: Bridge a→b: %w", err)
	}
	if fromB == nil {
		est, se := logMeanExpSE(res.Forward)
		res.LogRatio, res.StdErr = est, se
		return res, nil
	}
	if res.Reverse, res.EndReverse, err = br.anneal(ctx, b, a, fromB, br.Seed^0xb1d6e); err != nil {
		return BridgeResult{}, fmt.Errorf("rbm: Bridge b→a: %w", err)
	}
	res.LogRatio, res.StdErr = BennettAcceptanceRatio(res.Forward, res.Reverse)
	return res, nil
}

// anneal runs AIS from a to b starting at the rows of start and returns
// the log-weights (log of unbiased estimates of Z_b/Z_a) and end states.
func (br Bridge) anneal(ctx context.Context, a, b *RBM, start *mat.Dense, seed uint64) ([]float64, *mat.Dense, error) {
	d, runs := rowsData(start, Width(a.Visible), "bridge start states")
	if runs == 0 {
		return nil, nil, fmt.Errorf("no start states")
	}
	v := append([]float64(nil), d...)
	path := newLinePath(a, b, runs)
	rngs := streams(seed, runs, 11)
	lw, f := make([]float64, runs), make([]float64, runs)
	for k := 1; k <= br.Steps; k++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s0, s1 := float64(k-1)/float64(br.Steps), float64(k)/float64(br.Steps)
		path.inputs(v)
		path.logF(s0, f)
		for r := range lw {
			lw[r] -= f[r]
		}
		path.logF(s1, f)
		for r := range lw {
			lw[r] += f[r]
		}
		if k == br.Steps {
			break
		}
		for sw := 0; sw < br.Sweeps; sw++ {
			if sw > 0 {
				path.inputs(v)
			}
			if err := path.sweep(s1, v, rngs); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := checkFinite(lw, "bridge log-weight"); err != nil {
		return nil, nil, err
	}
	return lw, mat.NewDense(runs, Width(a.Visible), v), nil
}

// linePath is the straight line θ(s) = (1−s)θ_a + sθ_b between the
// parameters of two models of the same shape, with buffers for a batch of
// runs. Every layer's energy is linear in its parameters, so the model at
// s has the exact marginal log f_s(v) = −(1−s)U_a(v) − sU_b(v) +
// Σ_µ Γ^s_µ((1−s)I_a(v) + sI_b(v)), and inputs computed once at v serve
// every s.
type linePath struct {
	a, b, mix      *RBM
	runs, nv, nh   int
	inA, inB, inS  []float64
	inV, h, eA, eB []float64
}

func newLinePath(a, b *RBM, runs int) *linePath {
	nv, nh := Width(a.Visible), Width(a.Hidden)
	return &linePath{
		a: a, b: b, mix: a.Clone(), runs: runs, nv: nv, nh: nh,
		inA: make([]float64, runs*nh), inB: make([]float64, runs*nh), inS: make([]float64, runs*nh),
		inV: make([]float64, runs*nv), h: make([]float64, runs*nh),
		eA: make([]float64, runs), eB: make([]float64, runs),
	}
}

// inputs computes the hidden inputs and visible energies of both models
// at the states v (runs rows). The products run per range of rows on the
// cores with single-threaded BLAS: for a few hundred rows OpenBLAS's own
// threads cost more CPU than they save (1.5× on 256 × 784 × 20).
func (p *linePath) inputs(v []float64) {
	nv, nh := p.nv, p.nh
	wa, wb := p.a.W.RawMatrix(), p.b.W.RawMatrix()
	_ = forRanges(p.runs, func(r0, r1 int) error {
		gemm(v[r0*nv:r1*nv], r1-r0, wa, false, p.inA[r0*nh:r1*nh])
		gemm(v[r0*nv:r1*nv], r1-r0, wb, false, p.inB[r0*nh:r1*nh])
		return nil
	})
	p.a.Visible.Energy(v, p.eA)
	p.b.Visible.Energy(v, p.eB)
}

// set puts θ(s) into mix.
func (p *linePath) set(s float64) {
	for _, l := range [][3]Layer{{p.mix.Visible, p.a.Visible, p.b.Visible}, {p.mix.Hidden, p.a.Hidden, p.b.Hidden}} {
		pm, pa, pb := l[0].Params(), l[1].Params(), l[2].Params()
		for i := range pm {
			for k := range pm[i] {
				pm[i][k] = (1-s)*pa[i][k] + s*pb[i][k]
			}
		}
	}
	wm, wa, wb := p.mix.W.RawMatrix().Data, p.a.W.RawMatrix().Data, p.b.W.RawMatrix().Data
	for k := range wm {
		wm[k] = (1-s)*wa[k] + s*wb[k]
	}
}

// logF sets out[r] = log f_s(v_r) for the states of the last inputs call.
func (p *linePath) logF(s float64, out []float64) {
	p.set(s)
	for k := range p.inS {
		p.inS[k] = (1-s)*p.inA[k] + s*p.inB[k]
	}
	p.mix.Hidden.CGF(p.inS, out)
	for r := range out {
		out[r] += -(1-s)*p.eA[r] - s*p.eB[r]
	}
}

// sweep makes one block-Gibbs sweep of the model at s from the states v
// (whose inputs the last inputs call computed), in place.
func (p *linePath) sweep(s float64, v []float64, rngs []*rand.Rand) error {
	p.set(s)
	for k := range p.inS {
		p.inS[k] = (1-s)*p.inA[k] + s*p.inB[k]
	}
	nv, nh := p.nv, p.nh
	if err := forBlocks(p.runs, rngs, func(r0, r1 int, rng *rand.Rand) error {
		return p.mix.Hidden.Sample(rng, p.inS[r0*nh:r1*nh], p.h[r0*nh:r1*nh], 1)
	}); err != nil {
		return fmt.Errorf("at s = %v: %w", s, err)
	}
	w := p.mix.W.RawMatrix()
	if err := forRanges(p.runs, func(r0, r1 int) error {
		gemm(p.h[r0*nh:r1*nh], r1-r0, w, true, p.inV[r0*nv:r1*nv])
		return eachBlock(r0, r1, rngs, func(b0, b1 int, rng *rand.Rand) error {
			return p.mix.Visible.Sample(rng, p.inV[b0*nv:b1*nv], v[b0*nv:b1*nv], 1)
		})
	}); err != nil {
		return fmt.Errorf("at s = %v: %w", s, err)
	}
	return nil
}

// logMeanExpSE returns log mean exp(x) and its delta-method standard error
// (the standard error of the mean weight over the mean weight).
func logMeanExpSE(x []float64) (float64, float64) {
	est, _, _ := logMeanExp(x)
	n := float64(len(x))
	s2 := 0.0
	for _, v := range x {
		w := math.Exp(v - est)
		s2 += (w - 1) * (w - 1)
	}
	if len(x) < 2 {
		return est, math.Inf(1)
	}
	return est, math.Sqrt(s2/(n-1)) / math.Sqrt(n)
}

// BennettAcceptanceRatio returns Bennett's estimate of Δ = log(Z_b/Z_a)
// from forward log-weights x (E_a[e^x] = Z_b/Z_a, e.g. log f_b(v) −
// log f_a(v) for v ~ a, or annealing weights from a to b) and reverse ones
// y (E_b[e^y] = Z_a/Z_b), and its asymptotic standard error. Δ solves
//
//	Σ_i σ(x_i − Δ − M) = Σ_j σ(y_j + Δ + M),  M = log(n_x/n_y),
//
// σ the logistic function (Bennett 1976, Eq. 12; Shirts et al. 2003), and
// the variance is Σ over both sets of (⟨σ²⟩/⟨σ⟩² − 1)/n (Bennett 1976,
// Eq. 10). With only one set it falls back to log mean exp(x) (or
// −log mean exp(y)).
func BennettAcceptanceRatio(x, y []float64) (delta, stdErr float64) {
	switch {
	case len(x) == 0 && len(y) == 0:
		return math.NaN(), math.NaN()
	case len(y) == 0:
		return logMeanExpSE(x)
	case len(x) == 0:
		d, se := logMeanExpSE(y)
		return -d, se
	}
	mShift := math.Log(float64(len(x)) / float64(len(y)))
	sig := func(t float64) float64 { return 1 / (1 + math.Exp(-t)) }
	gap := func(d float64) float64 { // decreasing in d
		l, r := 0.0, 0.0
		for _, v := range x {
			l += sig(v - d - mShift)
		}
		for _, v := range y {
			r += sig(v + d + mShift)
		}
		return l - r
	}
	// The root lies between the two one-sided estimates, widened.
	fx, _ := logMeanExpSE(x)
	fy, _ := logMeanExpSE(y)
	lo, hi := math.Min(fx, -fy)-1, math.Max(fx, -fy)+1
	for gap(lo) < 0 {
		lo -= 2 * (hi - lo)
	}
	for gap(hi) > 0 {
		hi += 2 * (hi - lo)
	}
	for it := 0; it < 100 && hi-lo > 1e-12*math.Max(1, math.Abs(lo)); it++ {
		mid := 0.5 * (lo + hi)
		if gap(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	delta = 0.5 * (lo + hi)
	rel := func(z []float64, shift float64) float64 {
		var s, s2 float64
		for _, v := range z {
			f := sig(v + shift)
			s += f
			s2 += f * f
		}
		n := float64(len(z))
		s, s2 = s/n, s2/n
		return (s2/(s*s) - 1) / n
	}
	return delta, math.Sqrt(math.Max(0, rel(x, -delta-mShift)+rel(y, delta+mShift)))
}
