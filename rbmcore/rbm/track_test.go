package rbm

import (
	"context"
	"math"
	"testing"
)

// trajectory returns n+1 models from a weakly coupled start to a strongly
// coupled end (paModel's), each a small noisy step from the last, like the
// updates of a training run: the last one's log Z differs from the first
// one's by several nats.
func trajectory(n int, seed uint64) []*RBM {
	end := paModel()
	cur := end.Clone()
	w, we := cur.W.RawMatrix().Data, end.W.RawMatrix().Data
	for i := range w {
		w[i] = 0.1 * we[i]
	}
	rng := NewRNG(seed, 3)
	out := []*RBM{cur.Clone()}
	for k := 1; k <= n; k++ {
		for i := range w {
			w[i] += (we[i]-w[i])/float64(n-k+1) + 0.02*rng.NormFloat64()
		}
		out = append(out, cur.Clone())
	}
	return out
}

// TestLogZTrackerCoverage follows log Z along trajectories of small models
// and compares the estimates at three checkpoints with ExactLogZ: the ±3 SE
// intervals must contain the exact value in ≥ 95 % of the (seed,
// checkpoint) cases, intervals 3× too small must not, and the estimates
// must be close. Half the runs move through every model, half jump
// between the checkpoints (the tracker then takes as many steps as it
// needs); half resample only when the weights degenerate, half at almost
// every step.
func TestLogZTrackerCoverage(t *testing.T) {
	ctx := context.Background()
	seeds := 24
	if testing.Short() {
		seeds = 12
	}
	var errs, ses []float64
	moved := 0.0
	jumpSteps := 0
	for s := 0; s < seeds; s++ {
		models := trajectory(60, uint64(s))
		tk := &LogZTracker{Seed: uint64(s)}
		if s/2%2 == 1 { // resample at almost every step
			tk.ResampleESS = 0.99
		}
		if err := tk.Start(ctx, models[0], nil); err != nil {
			t.Fatal(err)
		}
		jump := s%2 == 1
		for k := 1; k < len(models); k++ {
			if jump && k%20 != 0 {
				continue
			}
			before := tk.Steps()
			z, se, err := tk.Next(ctx, models[k])
			if err != nil {
				t.Fatal(err)
			}
			if jump {
				jumpSteps += tk.Steps() - before
			}
			if k%20 == 0 {
				exact, err := models[k].ExactLogZ(ctx)
				if err != nil {
					t.Fatal(err)
				}
				errs, ses = append(errs, z-exact), append(ses, se)
			}
		}
		z0, _ := models[0].ExactLogZ(ctx)
		z1, _ := models[len(models)-1].ExactLogZ(ctx)
		moved += math.Abs(z1 - z0)
	}
	cov, small := coverage(errs, ses, 0, 1), coverage(errs, ses, 0, 1.0/3)
	t.Logf("%d estimates: RMS error %.4f, mean error %.4f, mean SE %.4f, coverage %.2f (bars/3: %.2f); log Z moved %.2f nats; %.1f steps per jump of 20 models",
		len(errs), rms(errs), mean(errs), mean(ses), cov, small, moved/float64(seeds), float64(jumpSteps)/float64(3*seeds/2))
	if cov < 0.95 {
		t.Errorf("coverage of the ±3 SE intervals is %.2f < 0.95", cov)
	}
	if small >= 0.95 {
		t.Errorf("bars 3× too small still cover %.2f ≥ 0.95: the coverage test has no power", small)
	}
	if r := rms(errs); r > 0.15 {
		t.Errorf("RMS error %.3f nats is too large", r)
	}
	if moved/float64(seeds) < 2 {
		t.Errorf("log Z moved only %.2f nats: the test does not exercise tracking", moved/float64(seeds))
	}
	if jumpSteps <= 3*seeds/2 {
		t.Errorf("%d steps for %d jumps: the step size does not adapt", jumpSteps, 3*seeds/2)
	}
}

func rms(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

// TestLogZTrackerDetails checks reproducibility, the cost count, samples,
// cancellation and bad use.
func TestLogZTrackerDetails(t *testing.T) {
	ctx := context.Background()
	models := trajectory(5, 1)
	run := func() (*LogZTracker, float64) {
		tk := &LogZTracker{Populations: 2, Chains: 8, Seed: 4}
		if err := tk.Start(ctx, models[0], nil); err != nil {
			t.Fatal(err)
		}
		var z float64
		for _, m := range models[1:] {
			var err error
			if z, _, err = tk.Next(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		return tk, z
	}
	a, za := run()
	_, zb := run()
	if za != zb {
		t.Errorf("same seed, different estimates %v and %v", za, zb)
	}
	if a.Steps() < 5 || a.ChainSweeps() < int64(16*a.Steps()) {
		t.Errorf("%d steps, %d chain sweeps for 16 chains", a.Steps(), a.ChainSweeps())
	}
	v, w := a.Samples()
	if r, c := v.Dims(); r != 16 || c != 12 || len(w) != 16 {
		t.Errorf("samples %d×%d with %d weights", r, c, len(w))
	}
	if s := w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + w[7]; math.Abs(s-1) > 1e-12 {
		t.Errorf("weights of population 0 sum to %v", s)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := a.Next(cctx, models[0]); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, _, err := (&LogZTracker{}).Next(ctx, models[0]); err == nil {
		t.Error("Next before Start: no error")
	}
	if _, _, err := a.Next(ctx, New(Binary(12), Binary(3))); err == nil {
		t.Error("a model of another shape accepted")
	}
	if err := (&LogZTracker{Populations: 1}).Start(ctx, models[0], nil); err == nil {
		t.Error("Populations = 1 accepted")
	}
	if err := (&LogZTracker{ResampleESS: 1.5}).Start(ctx, models[0], nil); err == nil {
		t.Error("ResampleESS = 1.5 accepted")
	}
	if err := (&LogZTracker{TemperDepth: -0.5}).Start(ctx, models[0], nil); err == nil {
		t.Error("TemperDepth = −0.5 accepted")
	}
}

// TestPopulationAnnealingWithoutResamplingIsAIS checks the incremental
// weights: on a fixed schedule with no resampling before β = 1, each
// population is a set of AIS runs on AIS's random streams, so the estimate
// is AIS's to rounding.
func TestPopulationAnnealingWithoutResamplingIsAIS(t *testing.T) {
	m := paModel()
	betas := LinearSchedule(30)
	pa, err := PopulationAnnealing{Replicas: 20, Populations: 4, Betas: betas, ResampleESS: 1e-300, Seed: 6}.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	ais, err := AIS{Runs: 80, Betas: betas, Seed: 6}.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(pa.LogZ-ais.LogZ) > 1e-9 || pa.Resamplings != 1 {
		t.Errorf("PA without resampling: log Z %v with %d resamplings; AIS %v", pa.LogZ, pa.Resamplings, ais.LogZ)
	}
	every, err := PopulationAnnealing{Replicas: 20, Populations: 4, Betas: betas, Seed: 6}.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if every.Resamplings != 30 || every.LogZ == pa.LogZ {
		t.Errorf("PA resampling at every step: %d resamplings, log Z %v", every.Resamplings, every.LogZ)
	}
}

// TestBridgeAgainstExact checks Bridge's log-ratio between two nearby
// models (Bennett's acceptance ratio from both directions, and forward AIS
// alone) against ExactLogZ of both.
func TestBridgeAgainstExact(t *testing.T) {
	ctx := context.Background()
	models := trajectory(10, 2)
	a, b := models[7], models[10]
	za, _ := a.ExactLogZ(ctx)
	zb, _ := b.ExactLogZ(ctx)
	want := zb - za
	samples := func(m *RBM, seed uint64) *Chains {
		c, err := NewChains(m, 200, seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx, 200, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	var both, fwd, seBoth []float64
	for s := uint64(0); s < 10; s++ {
		ca, cb := samples(a, 10+s), samples(b, 20+s)
		r, err := Bridge{Steps: 10, Seed: s}.Run(ctx, a, b, ca.V, cb.V)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Bridge{Steps: 10, Seed: s}.Run(ctx, a, b, ca.V, nil)
		if err != nil {
			t.Fatal(err)
		}
		both, seBoth, fwd = append(both, r.LogRatio-want), append(seBoth, r.StdErr), append(fwd, f.LogRatio-want)
	}
	t.Logf("log Z_b − log Z_a = %.4f: BAR RMS error %.4f (mean SE %.4f), forward AIS RMS error %.4f", want, rms(both), mean(seBoth), rms(fwd))
	if math.Abs(want) < 0.5 {
		t.Fatalf("the models differ by %.3f nats only: the test has no power", want)
	}
	if rms(both) > 0.05 || rms(fwd) > 0.1 || coverage(both, seBoth, 0, 1) < 0.9 {
		t.Errorf("BAR errors %v (SE %v), forward errors %v", both, seBoth, fwd)
	}
}

// bimodalSequence returns n+1 models of 12 spins coupled through one
// hidden spin, p(s) ∝ e^{b·Σs} 2cosh(w Σs): two modes, all up and all
// down, that Gibbs sampling cannot cross (leaving one takes a flip of the
// hidden spin against a field of about w·12 = 18), while the visible field
// b moves from +0.6 to −0.3, so that the mass passes from the up mode
// (e^{14.4} times heavier at the start) to the down mode (e^{7.2} times
// heavier at the end). Exact log Z is
// log Σ_{h=±1} (2cosh(b + wh))^12.
func bimodalSequence(n int) (models []*RBM, exact []float64) {
	const nv, w = 12, 1.5
	for k := 0; k <= n; k++ {
		b := 0.6 - 0.9*float64(k)/float64(n)
		m := New(Spin(nv), Spin(1))
		for i := 0; i < nv; i++ {
			m.Visible.(*SpinLayer).Theta[i] = b
			m.W.Set(i, 0, w)
		}
		up, down := nv*math.Log(2*math.Cosh(b+w)), nv*math.Log(2*math.Cosh(b-w))
		mx := math.Max(up, down)
		models = append(models, m)
		exact = append(exact, mx+math.Log(math.Exp(up-mx)+math.Exp(down-mx)))
	}
	return models, exact
}

// TestLogZTrackerTempering follows log Z along bimodalSequence: without
// tempering every replica stays in the up mode, so the tracked log Z
// misses the down mode's mass (low by about 6.5 nats at the end); with
// TemperDepth 1 the populations move between the models by way of the
// base, where the spins are independent, and the ±3 SE intervals contain
// the exact log Z in ≥ 95 % of the (seed, model) cases (and would not if
// they were 3× too small).
func TestLogZTrackerTempering(t *testing.T) {
	ctx := context.Background()
	models, exact := bimodalSequence(4)
	if got, err := models[4].ExactLogZ(ctx); err != nil || math.Abs(got-exact[4]) > 1e-9 {
		t.Fatalf("exact log Z by enumeration %v (%v), closed form %v", got, err, exact[4])
	}
	seeds := 12
	if testing.Short() {
		seeds = 6
	}
	var errs, ses, plainEnd []float64
	for s := 0; s < seeds; s++ {
		for _, depth := range []float64{0, 1} {
			tk := &LogZTracker{Populations: 8, Chains: 100, TemperDepth: depth, Seed: uint64(s)}
			if err := tk.Start(ctx, models[0], nil); err != nil {
				t.Fatal(err)
			}
			for k := 1; k < len(models); k++ {
				z, se, err := tk.Next(ctx, models[k])
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case depth > 0:
					errs, ses = append(errs, z-exact[k]), append(ses, se)
				case depth == 0 && k == len(models)-1:
					plainEnd = append(plainEnd, z-exact[k])
				}
			}
		}
	}
	cov := coverage(errs, ses, 0, 1)
	t.Logf("tempered: %d estimates, RMS error %.4f, mean SE %.4f, coverage %.2f (bars/3: %.2f); plain tracker's errors at the end: %.3v",
		len(errs), rms(errs), mean(ses), cov, coverage(errs, ses, 0, 1.0/3), plainEnd)
	for _, e := range plainEnd {
		if e > -3 {
			t.Errorf("the plain tracker's error at the end is %.3f > −3 nats: the model does not trap its replicas and the test has no power", e)
		}
	}
	if cov < 0.95 {
		t.Errorf("coverage of the tempered tracker's ±3 SE intervals is %.2f < 0.95", cov)
	}
	if small := coverage(errs, ses, 0, 1.0/3); small >= 0.95 {
		t.Errorf("bars 3× too small still cover %.2f ≥ 0.95: the coverage test has no power", small)
	}
	if r := rms(errs); r > 0.2 {
		t.Errorf("the tempered tracker's RMS error %.3f nats is too large", r)
	}
}

// TestCombinePopulations checks the combined error of independent
// populations against its two regimes: populations that agree get the
// delta-method error, which equals the standard error of their logs to
// first order; populations 10 nats apart get the standard error of the
// logs (5 nats), where the delta method saturates near 1.
func TestCombinePopulations(t *testing.T) {
	agree := []float64{3.00, 3.01, 2.99, 3.02, 2.98, 3.00}
	est, se := combinePopulations(agree)
	if math.Abs(est-3) > 0.01 {
		t.Errorf("agreeing populations: log Z %v, want ≈ 3", est)
	}
	// Standard error of the mean of the logs: sd 0.01414 / √6.
	if want := 0.014142 / math.Sqrt(6); math.Abs(se-want) > 0.05*want {
		t.Errorf("agreeing populations: standard error %v, want %v", se, want)
	}
	apart := []float64{0, 10}
	est, se = combinePopulations(apart)
	if want := 10 - math.Log(2) + math.Log1p(math.Exp(-10)); math.Abs(est-want) > 1e-12 {
		t.Errorf("populations apart: log Z %v, want %v", est, want)
	}
	if _, delta := logMeanExpSE(apart); delta > 1.01 || math.Abs(se-5) > 1e-12 {
		t.Errorf("populations apart: standard error %v (delta method %v), want 5", se, delta)
	}
	if _, se := combinePopulations([]float64{1}); !math.IsInf(se, 1) {
		t.Errorf("one population: standard error %v, want +Inf", se)
	}
}
