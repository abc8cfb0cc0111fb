package train

import (
	"context"
	"math"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestLogZTrackingCoverage trains small models with Monitor.Track and
// compares the tracked log Z at every measured epoch with ExactLogZ of the
// model at that epoch: the ±3 SE intervals must contain the exact value in
// ≥ 95 % of the (seed, epoch) cases, and intervals 3× too small must not.
func TestLogZTrackingCoverage(t *testing.T) {
	set, err := data.BarsAndStripes(4)
	if err != nil {
		t.Fatal(err)
	}
	seeds := 24
	if testing.Short() {
		seeds = 8
	}
	var est, se []float64
	var sweeps int64
	moved := 0.0
	for s := 0; s < seeds; s++ {
		m := rbm.New(rbm.Binary(16), rbm.Binary(8), rbm.Seed(uint64(s+1)), rbm.WeightScale(0.1))
		var exact []float64
		tr := setup{method: PCD{}, Options: Options{Batch: 10, Epochs: 20, LR: 0.3, Seed: uint64(s), Monitor: Monitor{LogLikEvery: 4, PLEvery: -1, ReconEvery: -1, Track: &rbm.LogZTracker{Seed: uint64(s)}}, OnEpoch: func(r Record) bool {
			if !math.IsNaN(r.LogLik) {
				z, err := m.ExactLogZ(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				exact = append(exact, z)
			}
			return true
		}}}
		z0, _ := m.ExactLogZ(context.Background())
		hist, err := tr.fit(context.Background(), m, set)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, r := range hist.Records {
			if math.IsNaN(r.LogZ) {
				continue
			}
			est, se = append(est, r.LogZ-exact[k]), append(se, r.LogZStdErr)
			if r.LogLikHigh-r.LogLik != 3*r.LogZStdErr && math.Abs(r.LogLikHigh-r.LogLik-3*r.LogZStdErr) > 1e-9 {
				t.Errorf("log-likelihood bounds %v, %v around %v for SE %v", r.LogLikLow, r.LogLikHigh, r.LogLik, r.LogZStdErr)
			}
			k++
		}
		if k != 5 {
			t.Fatalf("seed %d: %d tracked epochs, want 5", s, k)
		}
		moved += math.Abs(exact[len(exact)-1] - z0)
		sweeps = tr.Monitor.Track.ChainSweeps()
	}
	cov, small := coverage(est, se, 1), coverage(est, se, 1.0/3)
	rms := 0.0
	for _, e := range est {
		rms += e * e
	}
	rms = math.Sqrt(rms / float64(len(est)))
	t.Logf("%d estimates: RMS error %.4f nats, mean SE %.4f, coverage %.2f (bars/3: %.2f); log Z moved %.2f nats on average; %d chain sweeps per run",
		len(est), rms, meanOf(se), cov, small, moved/float64(seeds), sweeps)
	if cov < 0.95 {
		t.Errorf("coverage of the ±3 SE intervals is %.2f < 0.95", cov)
	}
	if small >= 0.95 {
		t.Errorf("intervals 3× too small still cover %.2f: the criterion has no power", small)
	}
	if moved/float64(seeds) < 1 {
		t.Errorf("log Z moved only %.2f nats: the test does not exercise tracking", moved/float64(seeds))
	}
}

// coverage returns the fraction of errors err[k] within shrink·3·se[k].
func coverage(err, se []float64, shrink float64) float64 {
	in := 0
	for k := range err {
		if math.Abs(err[k]) <= shrink*3*se[k] {
			in++
		}
	}
	return float64(in) / float64(len(err))
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestBennettAcceptanceRatio checks rbm's BAR against an exactly known
// ratio of two distributions over 10 states sampled exactly, and its
// limit of identical models.
func TestBennettAcceptanceRatio(t *testing.T) {
	rng := rbm.NewRNG(1, 2)
	la, lb := make([]float64, 10), make([]float64, 10)
	for i := range la {
		la[i], lb[i] = rng.NormFloat64(), 2*rng.NormFloat64()
	}
	logSum := func(x []float64) float64 {
		mx := math.Inf(-1)
		for _, v := range x {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range x {
			s += math.Exp(v - mx)
		}
		return mx + math.Log(s)
	}
	want := logSum(lb) - logSum(la)
	draw := func(l []float64) int {
		u, z := rng.Float64(), logSum(l)
		for i, v := range l {
			if u -= math.Exp(v - z); u <= 0 {
				return i
			}
		}
		return len(l) - 1
	}
	var errs, ses []float64
	for rep := 0; rep < 200; rep++ {
		var x, y []float64
		for k := 0; k < 50; k++ {
			i := draw(la)
			x = append(x, lb[i]-la[i])
		}
		for k := 0; k < 80; k++ {
			j := draw(lb)
			y = append(y, la[j]-lb[j])
		}
		d, se := rbm.BennettAcceptanceRatio(x, y)
		errs, ses = append(errs, d-want), append(ses, se)
	}
	cov := coverage(errs, ses, 1)
	t.Logf("BAR: coverage %.2f, mean SE %.3f", cov, meanOf(ses))
	if cov < 0.95 || coverage(errs, ses, 1.0/3) > 0.9 {
		t.Errorf("BAR coverage %.2f (bars/3: %.2f)", cov, coverage(errs, ses, 1.0/3))
	}
	if d, se := rbm.BennettAcceptanceRatio([]float64{0.3, 0.3}, []float64{-0.3, -0.3, -0.3}); math.Abs(d-0.3) > 1e-9 || se > 1e-9 {
		t.Errorf("constant work 0.3: Δ = %v ± %v", d, se)
	}
}
