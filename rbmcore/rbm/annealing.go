package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"
)

// PopulationAnnealing samples m and estimates log Z by population annealing
// (Hukushima & Iba 2003; Machta 2010): a population of Replicas states is
// drawn from the independent-site base model (β = 0, as in AIS) and
// annealed along AIS's path f_β to β = 1. At each step from β to β' every
// replica's weight is multiplied by f_β'(v)/f_β(v) (the hidden layer summed
// out, as in AIS), then every replica makes Sweeps Gibbs sweeps at β'. When
// a population's effective sample size (Σw)²/(nΣw²) falls below
// ResampleESS (and at β = 1), its mean weight multiplies the running
// estimate of Z/Z_0 (the free-energy estimator of PA) and the population is
// resampled in proportion to the weights (systematic resampling), which
// puts the replicas where the weight is; between resamplings the replicas
// carry their weights as AIS runs do, so that a resampling never discards
// information the weights still hold. β' is chosen per step so that the
// conditional effective sample size of the incremental weights w given
// the carried ones W, (ΣWw)²/(ΣW·ΣWw²) (Zhou, Johansen & Aston 2016), is
// TargetESS (adaptive step), unless Betas is given.
//
// Populations independent populations run side by side (their sweeps are
// one batch spread over the cores); each gives an unbiased estimate Z_p,
// the result is log mean_p Z_p and its standard error comes from their
// spread. The adaptive step takes the smallest ESS over the populations,
// so the populations share their schedule (a weak dependence, ignored in
// the error bar).
type PopulationAnnealing struct {
	// Replicas is the population size per independent population
	// (default 1000).
	Replicas int
	// Populations is the number of independent populations (default 8;
	// at least 2 for an error bar).
	Populations int
	// Sweeps is the number of Gibbs sweeps after every resampling
	// (default 1).
	Sweeps int
	// TargetESS is the conditional effective sample size, as a fraction of
	// Replicas, that the adaptive step aims at (default 0.9; in (0, 1)).
	TargetESS float64
	// ResampleESS is the effective sample size fraction below which a
	// population is resampled (in (0, 1]; 0: resample at every step, the
	// classic population annealing; 0.5 is the usual choice of sequential
	// Monte Carlo and is better when steps are few).
	ResampleESS float64
	// Betas, when set, is a fixed schedule from 0 to 1 replacing the
	// adaptive step.
	Betas []float64
	// MaxSteps bounds the number of adaptive steps (default 100000).
	MaxSteps int
	// Base is the base visible layer (nil: the model's visible layer; see
	// BaseFromData, which makes the annealing much shorter).
	Base Layer
	// Seed seeds every random choice; a run is reproducible from it.
	Seed uint64
}

// PAResult is the outcome of a population-annealing run.
type PAResult struct {
	// LogZ is log mean_p exp(PopulationLogZ[p]); StdErr its standard error
	// from the spread of the populations: the larger of the delta-method
	// error of mean_p Z_p and the standard error of the mean of the
	// PopulationLogZ (the delta method saturates near 1 when one population
	// dominates, however far apart they are).
	LogZ, StdErr float64
	// LogZLow and LogZHigh are LogZ ∓ 3 StdErr.
	LogZLow, LogZHigh float64
	// PopulationLogZ are the estimates of the independent populations.
	PopulationLogZ []float64
	// LogZBase is log Z_0 of the base model.
	LogZBase float64
	// Betas is the schedule used and ESS the smallest conditional effective
	// sample size fraction over the populations at each step (ESS[k] for
	// the step to Betas[k+1]).
	Betas, ESS []float64
	// Resamplings counts the resamplings of population 0.
	Resamplings int
	// V holds the final population (Populations·Replicas rows, population
	// p in rows p·Replicas …), resampled at β = 1 so that every row has
	// the same weight: samples of the model.
	V *mat.Dense
	// Sweeps is the number of Gibbs sweeps each replica made (the cost is
	// Sweeps·Populations·Replicas sweeps of one chain).
	Sweeps int
}

// Run anneals the populations and returns the estimate. ctx is checked
// between steps; progress (if not nil) is called at most every 100 ms with
// the current β in thousandths (done out of 1000).
func (p PopulationAnnealing) Run(ctx context.Context, m *RBM, progress func(done, total int)) (PAResult, error) {
	ctx = ContextOrDefault(ctx)
	if p.Replicas == 0 {
		p.Replicas = 1000
	}
	if p.Populations == 0 {
		p.Populations = 8
	}
	if p.Sweeps == 0 {
		p.Sweeps = 1
	}
	if p.TargetESS == 0 {
		p.TargetESS = 0.9
	}
	if p.MaxSteps == 0 {
		p.MaxSteps = 100000
	}
	switch {
	case p.Replicas < 2:
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: Replicas = %d, need at least 2", p.Replicas)
	case p.Populations < 2:
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: Populations = %d, need at least 2 for an error bar", p.Populations)
	case p.Sweeps < 1:
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: Sweeps = %d, want ≥ 1", p.Sweeps)
	case !(p.TargetESS > 0 && p.TargetESS < 1):
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: TargetESS = %v, want a fraction in (0, 1)", p.TargetESS)
	case !(p.ResampleESS >= 0 && p.ResampleESS <= 1):
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: ResampleESS = %v, want a fraction in [0, 1]", p.ResampleESS)
	case p.MaxSteps < 1:
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: MaxSteps = %d, want ≥ 1", p.MaxSteps)
	}
	// AIS's setup validates the model, the base and a fixed schedule, and
	// allocates the buffers of all the replicas.
	sched := p.Betas
	if sched == nil {
		sched = []float64{0, 1}
	}
	s, _, err := AIS{Runs: p.Replicas * p.Populations, Betas: sched, Base: p.Base, Seed: p.Seed}.setup(m)
	if err != nil {
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: %w", err)
	}
	n := s.runs
	nv, nh := Width(m.Visible), Width(m.Hidden)
	zero := make([]float64, n*nv)
	if err := forBlocks(n, s.rngs, func(r0, r1 int, rng *rand.Rand) error {
		return s.base.Sample(rng, zero[r0*nv:r1*nv], s.v[r0*nv:r1*nv], 1)
	}); err != nil {
		return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: base sample: %w", err)
	}
	rngs := make([]*rand.Rand, p.Populations)
	for q := range rngs {
		rngs[q] = NewRNG(p.Seed, 0x9a<<32|uint64(q))
	}
	logZ := make([]float64, p.Populations) // log Z_p/Z_0 up to the last resampling
	cur, next := make([]float64, n), make([]float64, n)
	acc := make([]float64, n) // log-weights carried since the last resampling
	scratch := make([]float64, n*nh)
	vOld, inOld := make([]float64, n*nv), make([]float64, n*nh)
	res := PAResult{Betas: []float64{0}}
	// ess returns the smallest conditional ESS fraction over the
	// populations of the weights f_b/f_beta (next = log f_b after the call).
	ess := func(b float64) float64 {
		s.logFInto(b, next, scratch)
		worst := 1.0
		for q := 0; q < p.Populations; q++ {
			r0, r1 := q*p.Replicas, (q+1)*p.Replicas
			worst = math.Min(worst, conditionalESS(next[r0:r1], cur[r0:r1], acc[r0:r1]))
		}
		return worst
	}
	beta := 0.0
	last := time.Now()
	for step := 0; beta < 1; step++ {
		if err := ctx.Err(); err != nil {
			return PAResult{}, err
		}
		if step >= p.MaxSteps {
			return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing: β = %.6g after MaxSteps = %d steps", beta, p.MaxSteps)
		}
		s.prepare()
		s.logFInto(beta, cur, scratch)
		var nb, e float64
		if p.Betas != nil {
			nb = p.Betas[step+1]
			e = ess(nb)
		} else if nb, e = 1, ess(1); e < p.TargetESS {
			nb, e = nextStep(beta, p.TargetESS, ess)
		}
		for r := range acc {
			acc[r] += next[r] - cur[r]
		}
		if err := checkFinite(acc, "population-annealing log-weight"); err != nil {
			return PAResult{}, err
		}
		copy(vOld, s.v)
		copy(inOld, s.in)
		for q := 0; q < p.Populations; q++ {
			r0 := q * p.Replicas
			w := acc[r0 : r0+p.Replicas]
			if nb < 1 && p.ResampleESS > 0 && essOf(w) >= p.ResampleESS {
				continue
			}
			est, _, _ := logMeanExp(w)
			logZ[q] += est
			resample(rngs[q], w, est, func(dst, src int) {
				copy(s.v[(r0+dst)*nv:(r0+dst+1)*nv], vOld[(r0+src)*nv:(r0+src+1)*nv])
				copy(s.in[(r0+dst)*nh:(r0+dst+1)*nh], inOld[(r0+src)*nh:(r0+src+1)*nh])
			})
			clear(w)
			if q == 0 {
				res.Resamplings++
			}
		}
		for k := 0; k < p.Sweeps; k++ {
			if k > 0 {
				s.prepare()
			}
			if err := s.transition(nb, scratch); err != nil {
				return PAResult{}, fmt.Errorf("rbm: PopulationAnnealing at β %v: %w", nb, err)
			}
		}
		res.Sweeps += p.Sweeps
		beta = nb
		res.Betas, res.ESS = append(res.Betas, beta), append(res.ESS, e)
		if progress != nil && (beta == 1 || time.Since(last) > 100*time.Millisecond) {
			progress(int(1000*beta), 1000)
			last = time.Now()
		}
	}
	z0 := s.logZBase()
	est, se := combinePopulations(logZ)
	res.StdErr = se
	res.LogZ = z0 + est
	res.LogZLow, res.LogZHigh = res.LogZ-3*res.StdErr, res.LogZ+3*res.StdErr
	res.LogZBase = z0
	res.PopulationLogZ = make([]float64, len(logZ))
	for q, x := range logZ {
		res.PopulationLogZ[q] = z0 + x
	}
	res.V = mat.NewDense(n, nv, append([]float64(nil), s.v...))
	return res, nil
}

// nextStep finds by bisection the step end s' in (from, 1) whose weights
// have the conditional ESS target (ess is decreasing in s'), returning s'
// and its ESS.
func nextStep(from, target float64, ess func(float64) float64) (float64, float64) {
	lo, hi := from, 1.0
	for it := 0; it < 40 && hi-lo > 1e-9*math.Max(hi-from, 1e-12); it++ {
		mid := 0.5 * (lo + hi)
		if ess(mid) >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	// lo has ESS ≥ target unless no step was found (hi−from tiny): then
	// take hi so the annealing advances.
	b := lo
	if b <= from {
		b = hi
	}
	return b, ess(b)
}

// conditionalESS returns the conditional effective sample size fraction
// (ΣW_r w_r)²/(ΣW_r · ΣW_r w_r²) of the incremental weights w = exp(a − b)
// given the carried weights W = exp(acc) (Zhou, Johansen & Aston 2016,
// Eq. 3.16); with equal carried weights it is the ESS fraction of w.
func conditionalESS(a, b, acc []float64) float64 {
	mx, ma := math.Inf(-1), math.Inf(-1)
	for r := range a {
		mx = math.Max(mx, a[r]-b[r])
		ma = math.Max(ma, acc[r])
	}
	var sW, sWw, sWw2 float64
	for r := range a {
		W := math.Exp(acc[r] - ma)
		w := math.Exp(a[r] - b[r] - mx)
		sW += W
		sWw += W * w
		sWw2 += W * w * w
	}
	if !(sWw2 > 0) {
		return 0
	}
	return sWw * sWw / (sW * sWw2)
}

// essOf returns the effective sample size fraction (Σw)²/(nΣw²) of the
// weights w = exp(lw).
func essOf(lw []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range lw {
		mx = math.Max(mx, x)
	}
	var s, s2 float64
	for _, x := range lw {
		w := math.Exp(x - mx)
		s += w
		s2 += w * w
	}
	if !(s2 > 0) {
		return 0
	}
	return s * s / (float64(len(lw)) * s2)
}

// resample draws len(lw) offspring by systematic resampling with
// probabilities ∝ exp(lw), given est = log mean exp(lw), calling
// move(dst, src) for each offspring dst (the caller copies from a snapshot
// of the population, since src may be a slot already overwritten).
func resample(rng *rand.Rand, lw []float64, est float64, move func(dst, src int)) {
	n := len(lw)
	u := rng.Float64()
	cum, src := 0.0, 0
	for dst := 0; dst < n; dst++ {
		target := (float64(dst) + u) / float64(n)
		for src < n-1 && cum+math.Exp(lw[src]-est)/float64(n) <= target {
			cum += math.Exp(lw[src]-est) / float64(n)
			src++
		}
		move(dst, src)
	}
}

// logFInto sets out[r] = log f_β(v_r) for every run (after prepare).
func (s *aisState) logFInto(beta float64, out, scratch []float64) {
	clear(out)
	s.logF(beta, 1, out, scratch)
}

// combinePopulations combines independent populations' estimates x_p of
// log Z: log mean_p exp(x_p), since the mean of unbiased estimates of Z is
// unbiased, with the larger of two standard errors. The delta method
// (standard error of mean_p Z_p over mean_p Z_p) linearises the logarithm,
// which holds while the populations agree to well within a nat; when one
// population dominates it saturates near 1 however far apart they are,
// and the standard error of the mean of the x_p is then the honest scale.
// When they agree the two coincide.
func combinePopulations(x []float64) (est, stdErr float64) {
	est, se := logMeanExpSE(x)
	if len(x) < 2 {
		return est, se
	}
	n := float64(len(x))
	var mean, ss float64
	for _, v := range x {
		mean += v / n
	}
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return est, math.Max(se, math.Sqrt(ss/(n-1)/n))
}
