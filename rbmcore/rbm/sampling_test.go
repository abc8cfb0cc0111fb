package rbm

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// coverage returns the fraction of estimates est[k] ± shrink·3·se[k] that
// contain want.
func coverage(est, se []float64, want, shrink float64) float64 {
	in := 0
	for k := range est {
		if math.Abs(est[k]-want) <= shrink*3*se[k] {
			in++
		}
	}
	return float64(in) / float64(len(est))
}

// paModel is a small binary model with enough coupling that the
// annealing takes several steps.
func paModel() *RBM {
	m := New(Binary(12), Binary(8), Seed(5), WeightScale(0.6))
	randomiseFields(m, 5)
	return m
}

// TestPopulationAnnealingCoverage checks that the ±3 SE interval of
// population annealing contains the exact log Z in ≥ 95 % of seeded runs,
// and that an interval 3× too small would fail that criterion (so the
// criterion has power: it is not met by any bar whatever its size).
func TestPopulationAnnealingCoverage(t *testing.T) {
	m := paModel()
	exact, err := m.ExactLogZ(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reps := 40
	if testing.Short() {
		reps = 20
	}
	var est, se []float64
	steps := 0
	for k := 0; k < reps; k++ {
		r, err := PopulationAnnealing{Replicas: 100, Populations: 8, Seed: uint64(100 + k)}.Run(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Betas[len(r.Betas)-1] != 1 || r.LogZLow > r.LogZ || r.LogZHigh < r.LogZ {
			t.Fatalf("run %d: schedule ends at %v, interval [%v, %v] around %v", k, r.Betas[len(r.Betas)-1], r.LogZLow, r.LogZHigh, r.LogZ)
		}
		est, se = append(est, r.LogZ), append(se, r.StdErr)
		steps += len(r.Betas) - 1
	}
	cov, small := coverage(est, se, exact, 1), coverage(est, se, exact, 1.0/3)
	rms := 0.0
	for _, e := range est {
		rms += (e - exact) * (e - exact)
	}
	rms = math.Sqrt(rms / float64(reps))
	t.Logf("exact %.4f, RMS error %.4f, mean SE %.4f, coverage %.2f (bars/3: %.2f), %.1f steps per run", exact, rms, mean(se), cov, small, float64(steps)/float64(reps))
	if cov < 0.95 {
		t.Errorf("coverage of the ±3 SE interval is %.2f < 0.95", cov)
	}
	if small >= 0.95 {
		t.Errorf("bars 3× too small still cover %.2f ≥ 0.95: the coverage test has no power", small)
	}
	if rms > 0.2 {
		t.Errorf("RMS error %.3f nats is too large", rms)
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestPopulationAnnealingDetails checks reproducibility, the fixed
// schedule, samples of the model and cancellation.
func TestPopulationAnnealingDetails(t *testing.T) {
	m := paModel()
	pa := PopulationAnnealing{Replicas: 64, Populations: 4, Seed: 3, Sweeps: 2}
	lastDone := -1
	a, err := pa.Run(context.Background(), m, func(done, total int) {
		if total != 1000 || done < lastDone {
			t.Errorf("progress %d/%d after %d", done, total, lastDone)
		}
		lastDone = done
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pa.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastDone != 1000 {
		t.Errorf("last progress %d/1000", lastDone)
	}
	if a.LogZ != b.LogZ || !mat.Equal(a.V, b.V) {
		t.Errorf("same seed, different results: %v vs %v", a.LogZ, b.LogZ)
	}
	if a.Sweeps != 2*(len(a.Betas)-1) {
		t.Errorf("Sweeps = %d for %d steps of 2 sweeps", a.Sweeps, len(a.Betas)-1)
	}
	for _, e := range a.ESS {
		if e < 0.9-1e-6 && e != a.ESS[len(a.ESS)-1] {
			t.Errorf("an adaptive step has ESS %.3f below the target 0.9", e)
		}
	}
	pa.Betas = LinearSchedule(20)
	c, err := pa.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Betas) != 21 {
		t.Errorf("fixed schedule of 21 temperatures ran %d", len(c.Betas))
	}
	// The final population samples the model: its mean visible value
	// matches the exact one.
	exact := discreteMarginal(m, true)
	wantMean := make([]float64, 12)
	for s, p := range exact {
		row := make([]float64, 12)
		fillConfig(m.Visible, m.Visible.(Discrete).UnitValues(), s, row)
		for i, x := range row {
			wantMean[i] += p * x
		}
	}
	big, err := PopulationAnnealing{Replicas: 1000, Populations: 4, Seed: 9}.Run(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := big.V.Dims()
	for i := range wantMean {
		got := 0.0
		for r := 0; r < rows; r++ {
			got += big.V.At(r, i) / float64(rows)
		}
		// Resampling correlates the replicas: allow 5× the i.i.d. SE.
		if math.Abs(got-wantMean[i]) > 5*math.Sqrt(0.25/float64(rows))*3 {
			t.Errorf("unit %d: population mean %.3f, exact %.3f", i, got, wantMean[i])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pa.Run(ctx, m, nil); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, err := (PopulationAnnealing{Populations: 1}).Run(context.Background(), m, nil); err == nil {
		t.Error("Populations = 1 accepted")
	}
}

// bimodalModel has two equally likely modes at every β (all visible units
// off with the hidden unit off, all on with it on) separated by a barrier
// that grows with β: Gibbs chains at β = 1 stay in their mode.
func bimodalModel(n int) *RBM {
	v, h := Binary(n), Binary(1)
	w := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		v.Theta[i] = -2
		w.Set(i, 0, 4)
	}
	h.Theta[0] = -2 * float64(n)
	return &RBM{Visible: v, Hidden: h, W: w}
}

// TestAdaptiveLadder checks that the adapted ladder gives every pair an
// acceptance near the target on the bimodal model while a fixed ladder of
// the same ends does not, and that round trips are counted.
func TestAdaptiveLadder(t *testing.T) {
	m := bimodalModel(60)
	const target = 0.4
	fixed := []float64{0.05, 0.3, 0.65, 1}
	measure := func(tp *Tempering) []float64 {
		tp.ResetStats()
		if err := tp.Run(context.Background(), 600, nil); err != nil {
			t.Fatal(err)
		}
		return tp.SwapRates()
	}
	ft, err := NewTempering(m, fixed, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	fr := measure(ft)
	at, err := NewTempering(m, fixed, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := at.Adapt(context.Background(), AdaptiveLadder{Target: target, Rounds: 1500, Window: 150}, nil); err != nil {
		t.Fatal(err)
	}
	ar := measure(at)
	t.Logf("fixed ladder %v: rates %.2f; adapted ladder %.3f: rates %.2f, mean round trip %.0f rounds (%d trips)", fixed, fr, at.Betas, ar, at.MeanRoundTrip(), len(at.RoundTrips()))
	if at.Betas[0] != fixed[0] || at.Betas[len(at.Betas)-1] != 1 {
		t.Errorf("adapted ladder %v does not keep the ends", at.Betas)
	}
	// The number of temperatures is whole, so the adapted acceptance is
	// at least the target (within noise) and equal over the pairs.
	reaches := func(rates []float64) bool {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range rates {
			lo, hi = math.Min(lo, r), math.Max(hi, r)
		}
		return lo >= target-0.05 && hi-lo <= 0.1
	}
	if reaches(fr) {
		t.Errorf("the fixed ladder already reaches the target (rates %v): the test model is too easy", fr)
	}
	if !reaches(ar) {
		t.Errorf("adapted ladder: acceptance %.3f, target %.2f", ar, target)
	}
	if len(at.RoundTrips()) == 0 {
		t.Error("no round trip on the adapted ladder")
	}
	if err := at.Adapt(context.Background(), AdaptiveLadder{Target: 1.5}, nil); err == nil {
		t.Error("Target 1.5 accepted")
	}
}

// TestAutocorrTimeAR1 checks τ against the exact 1+2Σρ^t = (1+ρ)/(1−ρ) of
// an AR(1) series, and R̂ against its definition.
func TestAutocorrTimeAR1(t *testing.T) {
	rng := NewRNG(4, 0)
	for _, rho := range []float64{0, 0.5, 0.9} {
		chains := make([][]float64, 8)
		for b := range chains {
			x := rng.NormFloat64() / math.Sqrt(1-rho*rho)
			chains[b] = make([]float64, 50000)
			for k := range chains[b] {
				x = rho*x + rng.NormFloat64()
				chains[b][k] = x
			}
		}
		tau, w, ok, err := IntegratedAutocorrTime(chains)
		if err != nil || !ok {
			t.Fatal(err, ok)
		}
		want := (1 + rho) / (1 - rho)
		if math.Abs(tau-want) > 0.1*want {
			t.Errorf("ρ = %v: τ = %.3f (window %d), exact %.3f", rho, tau, w, want)
		}
		ess, _, _ := EffectiveSampleSize(chains)
		if math.Abs(ess-400000/want) > 0.1*400000/want {
			t.Errorf("ρ = %v: ESS %.0f, want about %.0f", rho, ess, 400000/want)
		}
		rh, err := GelmanRubin(chains)
		if err != nil || math.Abs(rh-1) > 0.02 {
			t.Errorf("ρ = %v: R̂ = %v for chains of one distribution", rho, rh)
		}
	}
	// Two chains of two points each, by hand: means 1 and 3, within
	// variances 2 and 2 (W = 2), B/T = var(1, 3) = 2, T = 2:
	// R̂ = sqrt((W/2 + 2)/W) = sqrt(1.5).
	rh, err := GelmanRubin([][]float64{{0, 2}, {2, 4}})
	if err != nil || math.Abs(rh-math.Sqrt(1.5)) > 1e-12 {
		t.Errorf("R̂ = %v, want %v", rh, math.Sqrt(1.5))
	}
	if _, err := GelmanRubin([][]float64{{1, 2}}); err == nil {
		t.Error("one chain accepted")
	}
}

// TestDiagnoseMixing checks that the diagnostics flag the bimodal model
// (chains started in both modes never meet) and pass a weakly coupled one.
func TestDiagnoseMixing(t *testing.T) {
	n := 20
	start := mat.NewDense(2, n, nil)
	for i := 0; i < n; i++ {
		start.Set(1, i, 1)
	}
	slow, err := DiagnoseMixing(context.Background(), bimodalModel(n), Mixing{Chains: 8, Sweeps: 400, Data: start, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slow model:\n%s", slow)
	if slow.Mixed || slow.Warning == "" || slow.RHat[1] < 2 {
		t.Errorf("the bimodal model passes: mixed %v, R̂ %v", slow.Mixed, slow.RHat)
	}
	fastModel := New(Binary(n), Binary(5), Seed(2), WeightScale(0.1))
	fast, err := DiagnoseMixing(context.Background(), fastModel, Mixing{Chains: 8, Sweeps: 400, Data: start, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fast model:\n%s", fast)
	if !fast.Mixed || fast.Warning != "" {
		t.Errorf("the weakly coupled model is flagged: %s", fast.Warning)
	}
	for o, tau := range fast.Tau {
		if tau > 3 {
			t.Errorf("fast model: τ(%s) = %.2f sweeps", fast.Observables[o], tau)
		}
	}
	// The last overlap of each chain, by hand: the largest of its ±1
	// overlaps with the two data rows (all off, all on) is |magnetisation|
	// of the ±1 coding.
	for b := 0; b < 8; b++ {
		s := 0.0
		for _, x := range fast.Chains.V.RawRowView(b) {
			s += 2*x - 1
		}
		if got, want := fast.Series[2][b][399], math.Abs(s)/float64(n); math.Abs(got-want) > 1e-12 {
			t.Errorf("chain %d: overlap %v, by hand %v", b, got, want)
		}
	}
	if fast.Chains.Sweeps() != 400 {
		t.Errorf("chains ran %d sweeps", fast.Chains.Sweeps())
	}
}

// TestSetStatesAndRowLikelihood checks that SetStates copies the states
// (and draws h when not given) and that the per-row log-likelihoods
// average to LogLikelihood and normalise over all states.
func TestSetStatesAndRowLikelihood(t *testing.T) {
	m := New(Binary(6), Binary(3), Seed(1), WeightScale(0.7))
	randomiseFields(m, 2)
	c, err := NewChains(m, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	v := mat.NewDense(3, 6, []float64{1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1})
	if err := c.SetStates(v, nil); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(c.V, v) {
		t.Error("SetStates did not copy v")
	}
	v.Set(0, 0, 0)
	if c.V.At(0, 0) != 1 {
		t.Error("SetStates aliases v")
	}
	h := mat.NewDense(3, 3, []float64{1, 1, 1, 0, 0, 0, 1, 0, 1})
	if err := c.SetStates(v, h); err != nil || !mat.Equal(c.H, h) {
		t.Errorf("SetStates with h: %v", err)
	}
	if err := c.SetStates(mat.NewDense(2, 6, nil), nil); err == nil {
		t.Error("wrong number of rows accepted")
	}
	lz, _ := m.ExactLogZ(context.Background())
	all := enumStates(m.Visible)
	rows, err := m.LogLikelihoodRows(all, lz)
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, x := range rows {
		total += math.Exp(x)
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("Σ_v P(v) = %v", total)
	}
	avg, _ := m.LogLikelihood(all, lz)
	if math.Abs(mean(rows)-avg) > 1e-12 {
		t.Errorf("mean of rows %v, LogLikelihood %v", mean(rows), avg)
	}
}
