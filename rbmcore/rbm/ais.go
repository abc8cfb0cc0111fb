package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"
)

// AIS estimates log Z by annealed importance sampling (Neal 2001;
// Salakhutdinov & Murray 2008) along the path
//
//	log f_β(v) = -(1-β) U_A(v) - β U(v) + Σ_µ Γ_µ(β I_µ(v)),
//
// from the independent-site base model A (visible layer Base, same kind as
// the model's, no weights; hidden potentials unchanged, so
// log Z_0 = Σ_i Γ_A,i(0) + Σ_µ Γ_µ(0)) to the model at β = 1. Each
// transition is a Gibbs sweep leaving f_β invariant: h ~ P(h | βI(v)) with
// the model's hidden layer, then v from the visible layer with parameters
// (1-β)·base + β·model and input β·Wh. (U is linear in every layer's
// parameters, so the interpolated layer has exactly the energy above.)
type AIS struct {
	// Runs is the number of independent annealing runs (default 100).
	Runs int
	// Betas is the schedule, increasing from 0 to 1 inclusive. If nil,
	// SMSchedule(Steps) is used.
	Betas []float64
	// Steps is the number of intermediate distributions when Betas is nil
	// (default 14500, the schedule of Salakhutdinov & Murray 2008).
	Steps int
	// Base is the base visible layer; nil uses the model's visible layer
	// (the model with its weights switched off). See BaseFromData.
	Base Layer
	// Seed seeds the per-block random streams.
	Seed uint64
	// BurnIn is the number of Gibbs sweeps at β = 1 that Reverse runs to
	// produce its starting states when none are given (default 1000).
	BurnIn int
}

// AISResult is the outcome of an AIS or reverse-AIS run.
type AISResult struct {
	// LogZ is the estimate log Z_0 + log mean_r exp(LogWeights[r]) (forward)
	// or log Z_0 - log mean_r exp(LogWeights[r]) (reverse).
	LogZ float64
	// LogZLow and LogZHigh are the bounds from ± 3 standard errors of the
	// mean importance weight (LogZLow = -Inf when mean - 3 SE ≤ 0, forward;
	// LogZHigh = +Inf in the reverse case).
	LogZLow, LogZHigh float64
	// LogZBase is log Z_0 of the base model.
	LogZBase float64
	// LogWeights are the per-run log importance weights.
	LogWeights []float64
	// Reverse is true for a reverse-AIS result.
	Reverse bool
}

// LinearSchedule returns n+1 equally spaced inverse temperatures 0..1.
func LinearSchedule(n int) []float64 {
	b := make([]float64, n+1)
	for k := range b {
		b[k] = float64(k) / float64(n)
	}
	return b
}

// SMSchedule returns about n+1 inverse temperatures from 0 to 1, spaced like
// Salakhutdinov & Murray (2008): 500/14500 of them uniform on [0, 0.5),
// 4000/14500 on [0.5, 0.9) and the rest on [0.9, 1].
func SMSchedule(n int) []float64 {
	n1 := max(1, n*500/14500)
	n2 := max(1, n*4000/14500)
	n3 := max(1, n-n1-n2)
	var b []float64
	for k := 0; k < n1; k++ {
		b = append(b, 0.5*float64(k)/float64(n1))
	}
	for k := 0; k < n2; k++ {
		b = append(b, 0.5+0.4*float64(k)/float64(n2))
	}
	for k := 0; k <= n3; k++ {
		b = append(b, 0.9+0.1*float64(k)/float64(n3))
	}
	return b
}

// BaseFromData returns a base visible layer for AIS: a copy of visible
// fitted to the column sums and sums of squares of data through its
// DataFitter (binary: θ = logit, spin: θ = atanh, Potts: θ = log
// frequency; gaussian: γ = 1/variance, θ = mean/variance). Frequencies are
// smoothed as (count + eps)/(rows + 2 eps) (Potts: + q eps) so that all-off
// columns give large finite fields; layers that are not DataFitters keep
// the model's parameters.
func BaseFromData(visible Layer, data *mat.Dense, eps float64) (Layer, error) {
	d, rows := rowsData(data, Width(visible), "data")
	if rows == 0 {
		return nil, fmt.Errorf("rbm: BaseFromData: no data rows")
	}
	if !(eps > 0) {
		return nil, fmt.Errorf("rbm: BaseFromData: eps = %v must be positive", eps)
	}
	base := visible.Clone()
	w := Width(visible)
	mean := make([]float64, w)
	sq := make([]float64, w)
	for r := 0; r < rows; r++ {
		for j, x := range d[r*w : (r+1)*w] {
			mean[j] += x
			sq[j] += x * x
		}
	}
	if f, ok := base.(DataFitter); ok {
		err := f.FitData(DataStats{Sum: mean, SumSq: sq, Rows: float64(rows), Eps: eps})
		if err != nil {
			return nil, fmt.Errorf("rbm: BaseFromData: %w", err)
		}
	}
	return base, base.Validate()
}

// logMeanExp returns log mean exp(x) and the ± 3 SE bounds on the mean
// weight, in the form of S&M 2008 (weights scaled by their maximum).
func logMeanExp(x []float64) (est, lo, hi float64) {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	n := float64(len(x))
	var s, s2 float64
	for _, v := range x {
		w := math.Exp(v - m)
		s += w
		s2 += w * w
	}
	mean := s / n
	sd := 0.0
	if len(x) > 1 {
		sd = math.Sqrt(math.Max(0, (s2-n*mean*mean)/(n-1)))
	}
	se := sd / math.Sqrt(n)
	lo = math.Inf(-1)
	if mean-3*se > 0 {
		lo = m + math.Log(mean-3*se)
	}
	return m + math.Log(mean), lo, m + math.Log(mean+3*se)
}

// aisState holds the buffers of one annealing over all runs.
type aisState struct {
	m          *RBM
	base, mix  Layer
	v, h       []float64
	in, inV, g []float64
	eA, eM     []float64
	rngs       []*rand.Rand
	runs       int
}

func (a AIS) setup(m *RBM) (*aisState, []float64, error) {
	if err := m.Validate(); err != nil {
		return nil, nil, fmt.Errorf("rbm: AIS: %w", err)
	}
	runs := a.Runs
	if runs == 0 {
		runs = 100
	}
	if runs < 2 {
		return nil, nil, fmt.Errorf("rbm: AIS: Runs = %d, need at least 2", runs)
	}
	betas := a.Betas
	if betas == nil {
		steps := a.Steps
		if steps == 0 {
			steps = 14500
		}
		betas = SMSchedule(steps)
	}
	if len(betas) < 2 || betas[0] != 0 || betas[len(betas)-1] != 1 {
		return nil, nil, fmt.Errorf("rbm: AIS: Betas must run from 0 to 1 (got %d values)", len(betas))
	}
	for k := 1; k < len(betas); k++ {
		if !(betas[k] >= betas[k-1]) {
			return nil, nil, fmt.Errorf("rbm: AIS: Betas[%d] = %v is below Betas[%d] = %v", k, betas[k], k-1, betas[k-1])
		}
	}
	base := a.Base
	if base == nil {
		base = m.Visible
	}
	if base.Kind() != m.Visible.Kind() || Width(base) != Width(m.Visible) {
		return nil, nil, fmt.Errorf("rbm: AIS: base layer %s(%d) does not match the visible layer %s(%d)", base.Kind(), Width(base), m.Visible.Kind(), Width(m.Visible))
	}
	if err := base.Validate(); err != nil {
		return nil, nil, fmt.Errorf("rbm: AIS: base: %w", err)
	}
	nv, nh := Width(m.Visible), Width(m.Hidden)
	s := &aisState{
		m: m, base: base, mix: m.Visible.Clone(), runs: runs,
		v: make([]float64, runs*nv), h: make([]float64, runs*nh),
		in: make([]float64, runs*nh), inV: make([]float64, runs*nv),
		g: make([]float64, runs), eA: make([]float64, runs), eM: make([]float64, runs),
		rngs: streams(a.Seed, runs, 7),
	}
	return s, betas, nil
}

// logZBase returns log Z_0 = Σ Γ_A(0) + Σ Γ_h(0).
func (s *aisState) logZBase() float64 {
	z := []float64{0}
	s.base.CGF(make([]float64, Width(s.base)), z)
	zh := []float64{0}
	s.m.Hidden.CGF(make([]float64, Width(s.m.Hidden)), zh)
	return z[0] + zh[0]
}

// prepare computes I = vW and the two visible energies for the current v.
func (s *aisState) prepare() {
	gemm(s.v, s.runs, s.m.W.RawMatrix(), false, s.in)
	s.base.Energy(s.v, s.eA)
	s.m.Visible.Energy(s.v, s.eM)
}

// logF adds sign*log f_β(v) to lw for every run (after prepare).
func (s *aisState) logF(beta, sign float64, lw []float64, scratch []float64) {
	for k, x := range s.in {
		scratch[k] = beta * x
	}
	s.m.Hidden.CGF(scratch, s.g)
	for r := range lw {
		lw[r] += sign * (-(1-beta)*s.eA[r] - beta*s.eM[r] + s.g[r])
	}
}

// transition performs one Gibbs sweep leaving f_β invariant (after prepare).
func (s *aisState) transition(beta float64, scratch []float64) error {
	for k, x := range s.in {
		scratch[k] = beta * x
	}
	nv, nh := Width(s.m.Visible), Width(s.m.Hidden)
	if err := forBlocks(s.runs, s.rngs, func(r0, r1 int, rng *rand.Rand) error {
		return s.m.Hidden.Sample(rng, scratch[r0*nh:r1*nh], s.h[r0*nh:r1*nh], 1)
	}); err != nil {
		return err
	}
	pm, pa, px := s.m.Visible.Params(), s.base.Params(), s.mix.Params()
	for p := range px {
		for k := range px[p] {
			px[p][k] = (1-beta)*pa[p][k] + beta*pm[p][k]
		}
	}
	gemm(s.h, s.runs, s.m.W.RawMatrix(), true, s.inV)
	for k := range s.inV {
		s.inV[k] *= beta
	}
	return forBlocks(s.runs, s.rngs, func(r0, r1 int, rng *rand.Rand) error {
		return s.mix.Sample(rng, s.inV[r0*nv:r1*nv], s.v[r0*nv:r1*nv], 1)
	})
}

// Run performs forward AIS on m. ctx is checked and progress (if not nil)
// called at most every 100 ms.
func (a AIS) Run(ctx context.Context, m *RBM, progress func(done, total int)) (AISResult, error) {
	ctx = ContextOrDefault(ctx)
	s, betas, err := a.setup(m)
	if err != nil {
		return AISResult{}, err
	}
	nv := Width(m.Visible)
	zero := make([]float64, s.runs*nv)
	if err := forBlocks(s.runs, s.rngs, func(r0, r1 int, rng *rand.Rand) error {
		return s.base.Sample(rng, zero[r0*nv:r1*nv], s.v[r0*nv:r1*nv], 1)
	}); err != nil {
		return AISResult{}, fmt.Errorf("rbm: AIS: base sample: %w", err)
	}
	lw := make([]float64, s.runs)
	scratch := make([]float64, len(s.in))
	last := time.Now()
	for k := 1; k < len(betas); k++ {
		if err := ctx.Err(); err != nil {
			return AISResult{}, err
		}
		s.prepare()
		s.logF(betas[k], 1, lw, scratch)
		s.logF(betas[k-1], -1, lw, scratch)
		if k < len(betas)-1 {
			if err := s.transition(betas[k], scratch); err != nil {
				return AISResult{}, fmt.Errorf("rbm: AIS at beta %v: %w", betas[k], err)
			}
		}
		if progress != nil && (k == len(betas)-1 || time.Since(last) > 100*time.Millisecond) {
			progress(k, len(betas)-1)
			last = time.Now()
		}
	}
	if err := checkFinite(lw, "AIS log-weight"); err != nil {
		return AISResult{}, err
	}
	z0 := s.logZBase()
	est, lo, hi := logMeanExp(lw)
	return AISResult{LogZ: z0 + est, LogZLow: z0 + lo, LogZHigh: z0 + hi, LogZBase: z0, LogWeights: lw}, nil
}

// Reverse performs reverse AIS from β = 1 down to 0, starting from the
// visible states start (Runs rows, ideally exact samples of the model;
// nil runs BurnIn Gibbs sweeps of Runs fresh chains instead). Its weights
// estimate Z_0/Z, so LogZ = log Z_0 - log mean exp(LogWeights) tends to
// overestimate log Z (a stochastic upper bound, complementing forward AIS)
// when the start states are model samples.
func (a AIS) Reverse(ctx context.Context, m *RBM, start *mat.Dense, progress func(done, total int)) (AISResult, error) {
	ctx = ContextOrDefault(ctx)
	s, betas, err := a.setup(m)
	if err != nil {
		return AISResult{}, err
	}
	if start == nil {
		burn := a.BurnIn
		if burn == 0 {
			burn = 1000
		}
		c, err := NewChains(m, s.runs, a.Seed^0x5eed)
		if err != nil {
			return AISResult{}, err
		}
		if err := c.Run(ctx, burn, nil); err != nil {
			return AISResult{}, fmt.Errorf("rbm: reverse AIS burn-in: %w", err)
		}
		start = c.V
	}
	d, rows := rowsData(start, Width(m.Visible), "reverse AIS start states")
	if rows != s.runs {
		return AISResult{}, fmt.Errorf("rbm: reverse AIS: %d start states for %d runs", rows, s.runs)
	}
	copy(s.v, d)
	lw := make([]float64, s.runs)
	scratch := make([]float64, len(s.in))
	last := time.Now()
	total := len(betas) - 1
	for k := len(betas) - 1; k >= 1; k-- {
		if err := ctx.Err(); err != nil {
			return AISResult{}, err
		}
		s.prepare()
		s.logF(betas[k-1], 1, lw, scratch)
		s.logF(betas[k], -1, lw, scratch)
		if k > 1 {
			if err := s.transition(betas[k-1], scratch); err != nil {
				return AISResult{}, fmt.Errorf("rbm: reverse AIS at beta %v: %w", betas[k-1], err)
			}
		}
		if progress != nil && (k == 1 || time.Since(last) > 100*time.Millisecond) {
			progress(total-k+1, total)
			last = time.Now()
		}
	}
	if err := checkFinite(lw, "reverse AIS log-weight"); err != nil {
		return AISResult{}, err
	}
	z0 := s.logZBase()
	est, lo, hi := logMeanExp(lw)
	return AISResult{LogZ: z0 - est, LogZLow: z0 - hi, LogZHigh: z0 - lo, LogZBase: z0, LogWeights: lw, Reverse: true}, nil
}

// WithoutOutliers returns the result recomputed without the runs whose
// log-weight lies more than 3 scaled median absolute deviations
// (1.4826·MAD, MATLAB's rmoutliers default) from the median, and the number
// removed. This is the rule Bulso & Roudi 2021 apply, but use it with care: the log-weights
// of forward AIS are skewed to the right, and the rare large ones are the
// runs that reached modes the annealing seldom finds. Removing them lowers
// log Z, and so raises a log-likelihood, by many nats when those modes
// matter: about 50 nats for a Linear RBM on MNIST at M = 50 with 1000
// temperatures (activation-functions notebook). Compare with r before
// relying on it.
func (r AISResult) WithoutOutliers() (AISResult, int) {
	x := append([]float64(nil), r.LogWeights...)
	sort.Float64s(x)
	med := median(x)
	dev := make([]float64, len(x))
	for k, v := range x {
		dev[k] = math.Abs(v - med)
	}
	sort.Float64s(dev)
	mad := 1.4826 * median(dev)
	var keep []float64
	for _, v := range r.LogWeights {
		if math.Abs(v-med) <= 3*mad {
			keep = append(keep, v)
		}
	}
	out := r
	out.LogWeights = keep
	est, lo, hi := logMeanExp(keep)
	if r.Reverse {
		out.LogZ, out.LogZLow, out.LogZHigh = r.LogZBase-est, r.LogZBase-hi, r.LogZBase-lo
	} else {
		out.LogZ, out.LogZLow, out.LogZHigh = r.LogZBase+est, r.LogZBase+lo, r.LogZBase+hi
	}
	return out, len(r.LogWeights) - len(keep)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return 0.5 * (sorted[n/2-1] + sorted[n/2])
}
