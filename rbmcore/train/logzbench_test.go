package train_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"github.com/harmonium-rbm/harmonium/rbmcore/train"
)

// The log Z benchmark (tests/bench_sampling.sh) runs only when
// HARMONIUM_LOGZ_BENCH=1. Sizes: LOGZ_BENCH_IMAGES (part 1's training
// images, default 2000), LOGZ_BENCH_SEEDS (repetitions, default 10),
// LOGZ_BENCH_EPOCHS (tracked run, default 50), LOGZ_BENCH_HIDDEN (default
// 20); part 2's knobs are listed at benchTracking. The MNIST training
// images are found by data.MNIST, as a notebook finds them.
func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

func loadMNIST(t *testing.T, limit int) *data.Set {
	set, err := data.MNIST(context.Background(), "train", data.CatalogueOptions{Binarize: true, Limit: limit})
	var missing *data.NotFoundError
	if errors.As(err, &missing) {
		t.Skipf("the benchmark needs the MNIST training images: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// exactSampler returns a function drawing n exact samples of a binary ×
// binary model by enumerating the hidden layer (once): h from
// P(h) ∝ exp(−U_h(h) + Σ_i Γ_i((Wh)_i)), then v | h.
func exactSampler(t *testing.T, m *rbm.RBM) func(n int, seed uint64) *mat.Dense {
	nh := m.Hidden.Len()
	total := 1 << nh
	lw := make([]float64, total)
	const chunk = 4096
	for s0 := 0; s0 < total; s0 += chunk {
		rows := min(chunk, total-s0)
		h := mat.NewDense(rows, nh, nil)
		for r := 0; r < rows; r++ {
			for j := 0; j < nh; j++ {
				h.Set(r, j, float64((s0+r)>>j&1))
			}
		}
		in := m.VisibleInput(h)
		g, e := make([]float64, rows), make([]float64, rows)
		m.Visible.CGF(in.RawMatrix().Data, g)
		m.Hidden.Energy(h.RawMatrix().Data, e)
		for r := 0; r < rows; r++ {
			lw[s0+r] = g[r] - e[r]
		}
	}
	mx := math.Inf(-1)
	for _, x := range lw {
		mx = math.Max(mx, x)
	}
	cum := make([]float64, total)
	s := 0.0
	for k, x := range lw {
		s += math.Exp(x - mx)
		cum[k] = s
	}
	return func(n int, seed uint64) *mat.Dense {
		rng := rbm.NewRNG(seed, 77)
		h := mat.NewDense(n, nh, nil)
		for r := 0; r < n; r++ {
			u := rng.Float64() * s
			lo, hi := 0, total-1
			for lo < hi {
				mid := (lo + hi) / 2
				if cum[mid] < u {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			for j := 0; j < nh; j++ {
				h.Set(r, j, float64(lo>>j&1))
			}
		}
		v, err := m.SampleVisible(rng, h)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestLogZBenchmark compares AIS, reverse AIS (from exact samples) and
// population annealing at equal numbers of Gibbs sweeps on a binary RBM
// trained on MNIST with an enumerable hidden layer, and log Z tracking
// along a training run against AIS from scratch every 5th epoch.
func TestLogZBenchmark(t *testing.T) {
	if os.Getenv("HARMONIUM_LOGZ_BENCH") == "" {
		t.Skip("set HARMONIUM_LOGZ_BENCH=1 (tests/bench_sampling.sh)")
	}
	images := benchEnv("LOGZ_BENCH_IMAGES", 2000)
	seeds := benchEnv("LOGZ_BENCH_SEEDS", 10)
	epochs := benchEnv("LOGZ_BENCH_EPOCHS", 50)
	nh := benchEnv("LOGZ_BENCH_HIDDEN", 20)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("log Z benchmark: MNIST binarised at 128, binary RBM 784 × %d, %d seeds; load average %s", nh, seeds, load)

	part := os.Getenv("LOGZ_BENCH_PART") // "1" or "2": only that part
	if part != "2" {
		benchEstimators(t, loadMNIST(t, images), nh, seeds)
	}
	if part != "1" {
		full := loadMNIST(t, benchEnv("LOGZ_BENCH_TRACK_IMAGES", 0))
		for _, final := range benchList(t, "LOGZ_BENCH_DECAY", "0.01,1") {
			benchTracking(t, full, nh, epochs, seeds, final)
		}
	}
}

// benchEstimators is part 1: the three estimators at equal sweep budgets
// on one model.
func benchEstimators(t *testing.T, set *data.Set, nh, seeds int) {
	ctx := context.Background()
	m := rbm.New(rbm.Binary(784), rbm.Binary(nh), rbm.Seed(1))
	o := train.Options{Epochs: 10, Batch: 100, LR: 0.05, Init: train.InitCentred{}, Seed: 1,
		Monitor: train.Monitor{PLEvery: -1, ReconEvery: -1}}
	if _, err := train.Fit(ctx, m, set, train.PCD{}, train.SGD{}, o); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	exact, err := m.ExactLogZ(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("model trained 10 epochs (PCD) on %d images; exact log Z = %.4f (%.1f s)\n", set.Len(), exact, time.Since(t0).Seconds())
	base, err := rbm.BaseFromData(m.Visible, set.X, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	exactSamples := exactSampler(t, m)
	fmt.Printf("%-12s %10s %8s %8s %10s %10s %10s\n", "estimator", "sweeps", "runs", "temps", "RMS err", "mean err", "cpu s/run")
	for _, budget := range []int{10000, 50000, 250000} {
		type est struct {
			name        string
			runs, temps int
			run         func(seed uint64, start *mat.Dense) (float64, error)
		}
		// PA: LOGZ_BENCH_PA_POPS independent populations (default 4) sharing
		// AIS's 100 replicas, so that replicas × temperatures equals AIS's
		// runs × temperatures; a population is resampled when its effective
		// sample size falls below half.
		aisRuns, paPop := 100, benchEnv("LOGZ_BENCH_PA_POPS", 4)
		paRep := aisRuns / paPop
		ests := []est{
			{"AIS", aisRuns, budget / aisRuns, func(seed uint64, _ *mat.Dense) (float64, error) {
				r, err := rbm.AIS{Runs: aisRuns, Betas: rbm.SMSchedule(budget / aisRuns), Base: base, Seed: seed}.Run(ctx, m, nil)
				return r.LogZ, err
			}},
			{"reverse AIS", aisRuns, budget / aisRuns, func(seed uint64, start *mat.Dense) (float64, error) {
				r, err := rbm.AIS{Runs: aisRuns, Betas: rbm.SMSchedule(budget / aisRuns), Base: base, Seed: seed}.Reverse(ctx, m, start, nil)
				return r.LogZ, err
			}},
			{"PA", paPop * paRep, budget / (paPop * paRep), func(seed uint64, _ *mat.Dense) (float64, error) {
				r, err := rbm.PopulationAnnealing{Replicas: paRep, Populations: paPop, ResampleESS: 0.5, Betas: rbm.SMSchedule(budget / (paPop * paRep)), Base: base, Seed: seed}.Run(ctx, m, nil)
				return r.LogZ, err
			}},
		}
		for _, e := range ests {
			var sq, sum, cpu float64
			for s := 0; s < seeds; s++ {
				var start *mat.Dense
				if e.name == "reverse AIS" { // exact samples: not part of the budget
					start = exactSamples(aisRuns, uint64(s))
				}
				c0 := cpuSeconds()
				z, err := e.run(uint64(1000*budget+s), start)
				cpu += cpuSeconds() - c0
				if err != nil {
					t.Fatal(err)
				}
				sq += (z - exact) * (z - exact)
				sum += z - exact
			}
			fmt.Printf("%-12s %10d %8d %8d %10.4f %10.4f %10.2f\n", e.name, budget, e.runs, e.temps, math.Sqrt(sq/float64(seeds)), sum/float64(seeds), cpu/float64(seeds))
		}
	}

}

// benchTracking is part 2: log Z tracked along a PCD run on
// LOGZ_BENCH_TRACK_IMAGES training images (default: all 60 000) whose
// learning rate 0.05 is held for the first quarter of the epochs and then
// decays geometrically to final × 0.05 (train.GeometricDecay; final = 1:
// constant), by rbm's LogZTracker moved from one checkpoint to the next
// (or every LOGZ_BENCH_TRACK_EVERY updates) with LOGZ_BENCH_TRACK_POPS
// populations of LOGZ_BENCH_TRACK_CHAINS replicas making
// LOGZ_BENCH_TRACK_SWEEPS sweeps per step, one tracker per seed for each
// TemperDepth in the list LOGZ_BENCH_TRACK_TEMPER (default "0"), against
// estimates from scratch at every 5th epoch: AIS on Salakhutdinov &
// Murray's schedule with the numbers of temperatures in the list
// LOGZ_BENCH_AIS_BETAS (default "30,100,300,1000"), and adaptive
// population annealing with the trackers' populations. The goal is met
// when AIS needs at least 5× a tracker's CPU time to reach the tracker's
// RMS error.
func benchTracking(t *testing.T, set *data.Set, nh, epochs, seeds int, final float64) {
	ctx := context.Background()
	m2 := rbm.New(rbm.Binary(784), rbm.Binary(nh), rbm.Seed(2))
	var models []*rbm.RBM // every 5th epoch
	perEpoch := (set.Len() + 99) / 100
	every := benchEnv("LOGZ_BENCH_TRACK_EVERY", 5*perEpoch)
	pops, chains := benchEnv("LOGZ_BENCH_TRACK_POPS", 8), benchEnv("LOGZ_BENCH_TRACK_CHAINS", 32)
	sweeps := benchEnv("LOGZ_BENCH_TRACK_SWEEPS", 1)
	var decay train.Schedule // nil: constant
	if final != 1 {
		decay = train.GeometricDecay(epochs, 0.25, final)
	}
	depths := benchList(t, "LOGZ_BENCH_TRACK_TEMPER", "0")
	aisBetas := benchList(t, "LOGZ_BENCH_AIS_BETAS", "30,100,300,1000")
	base, err := rbm.BaseFromData(m2.Visible, set.X, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	// trackers[d][s] is seed s's tracker with TemperDepth depths[d];
	// tracked and tse its estimates and standard errors at the checkpoints.
	type variant struct {
		trackers     []*rbm.LogZTracker
		tracked, tse [][]float64
		cpu          float64
	}
	variants := make([]*variant, len(depths))
	for d := range variants {
		variants[d] = &variant{trackers: make([]*rbm.LogZTracker, seeds), tracked: make([][]float64, seeds), tse: make([][]float64, seeds)}
	}
	var failed error
	// move starts the trackers (at the model after the first update) or
	// moves them to the current model.
	move := func() {
		for d, vr := range variants {
			c0 := cpuSeconds()
			for s := range vr.trackers {
				if vr.trackers[s] == nil {
					vr.trackers[s] = &rbm.LogZTracker{Populations: pops, Chains: chains, Sweeps: sweeps, TemperDepth: depths[d], Seed: uint64(100 + s)}
					failed = vr.trackers[s].Start(ctx, m2, base)
				} else {
					_, _, failed = vr.trackers[s].Next(ctx, m2)
				}
				if failed != nil {
					return
				}
			}
			vr.cpu += cpuSeconds() - c0
		}
	}
	o := train.Options{Epochs: epochs, Batch: 100, LR: 0.05, Init: train.InitCentred{}, Seed: 2,
		Monitor:  train.Monitor{PLEvery: -1, ReconEvery: -1},
		Schedule: decay,
		OnUpdate: func(u train.Update) {
			if failed == nil && (u.Update == 1 || u.Update%every == 0 && u.Update%(5*perEpoch) != 0) {
				move()
			}
		},
		OnEpoch: func(r train.Record) bool {
			if r.Epoch%5 == 0 && failed == nil {
				move()
				models = append(models, m2.Clone())
				for _, vr := range variants {
					for s, tk := range vr.trackers {
						z, se, err := tk.LogZ()
						if err != nil {
							failed = err
						}
						vr.tracked[s], vr.tse[s] = append(vr.tracked[s], z), append(vr.tse[s], se)
					}
				}
			}
			return failed == nil
		}}
	if _, err := train.Fit(ctx, m2, set, train.PCD{}, train.SGD{}, o); err != nil {
		t.Fatal(err)
	}
	if failed != nil {
		t.Fatal(failed)
	}
	exacts := make([]float64, len(models))
	for k, mk := range models {
		var err error
		if exacts[k], err = mk.ExactLogZ(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// fromScratch estimates every checkpoint for every seed and returns the
	// RMS error and the CPU seconds per seed; the base is the trackers'
	// one, fitted once outside the timing as a user would.
	fromScratch := func(est func(s, k int, b rbm.Layer) (float64, error)) (float64, float64) {
		c0 := cpuSeconds()
		var sq float64
		for s := 0; s < seeds; s++ {
			for k := range models {
				z, err := est(s, k, base)
				if err != nil {
					t.Fatal(err)
				}
				sq += (z - exacts[k]) * (z - exacts[k])
			}
		}
		return math.Sqrt(sq / float64(seeds*len(models))), (cpuSeconds() - c0) / float64(seeds)
	}
	const runs = 100
	aisRMS, aisCPU := make([]float64, len(aisBetas)), make([]float64, len(aisBetas))
	for i, b := range aisBetas {
		betas := rbm.SMSchedule(int(b))
		aisRMS[i], aisCPU[i] = fromScratch(func(s, k int, base rbm.Layer) (float64, error) {
			r, err := rbm.AIS{Runs: runs, Betas: betas, Base: base, Seed: uint64(1000*s + k + 1)}.Run(ctx, models[k], nil)
			return r.LogZ, err
		})
	}
	paRMS, paCPU := fromScratch(func(s, k int, base rbm.Layer) (float64, error) {
		r, err := rbm.PopulationAnnealing{Replicas: chains, Populations: pops, ResampleESS: 0.5, Base: base, Seed: uint64(1000*s + k + 1)}.Run(ctx, models[k], nil)
		return r.LogZ, err
	})

	lr := "constant learning rate 0.05"
	if decay != nil {
		lr = fmt.Sprintf("learning rate 0.05 for %d epochs, then decaying geometrically to %g", epochs/4, 0.05*final)
	}
	fmt.Printf("\nlog Z along a %d-epoch PCD run on %d images (%d updates of 100 images per epoch, %s), at every 5th epoch (%d checkpoints); RMS error over %d independent trackers / seeds × %d checkpoints; cpu s per tracker / seed (all checkpoints)\n",
		epochs, set.Len(), perEpoch, lr, len(models), seeds, len(models))
	fmt.Printf("%-52s %12s %10s %10s %10s %16s\n", "method", "chain sweeps", "cpu s", "RMS err", "±3SE cover", "AIS cpu at RMS")
	var summary []string
	row := func(name string, sweeps int64, cpu, rms float64, cover string) {
		need, how := aisCPUAt(aisRMS, aisCPU, rms)
		fmt.Printf("%-52s %12d %10.2f %10.4f %10s %10.2f (%.1f×)\n", name, sweeps, cpu, rms, cover, need, need/cpu)
		summary = append(summary, fmt.Sprintf("%s: AIS needs %.2f cpu s (%s) to reach its RMS %.3f, %.1f× its %.2f s: %s", name, need, how, rms, need/cpu, cpu,
			map[bool]string{true: "≥ 5×, goal met", false: "< 5×, goal NOT met"}[need >= 5*cpu]))
	}
	for d, vr := range variants {
		var sq float64
		var inside, n int
		var sweeps int64
		for s, tk := range vr.trackers {
			sweeps += tk.ChainSweeps()
			for k := range models {
				e := vr.tracked[s][k] - exacts[k]
				sq += e * e
				n++
				if math.Abs(e) <= 3*vr.tse[s][k] {
					inside++
				}
			}
		}
		row(fmt.Sprintf("tracking every %d updates, TemperDepth %g (%d×%d)", min(every, 5*perEpoch), depths[d], pops, chains),
			sweeps/int64(seeds), vr.cpu/float64(seeds), math.Sqrt(sq/float64(n)), fmt.Sprintf("%.2f", float64(inside)/float64(n)))
	}
	row(fmt.Sprintf("PA from scratch, adaptive (%d×%d)", pops, chains), 0, paCPU, paRMS, "")
	for i, b := range aisBetas {
		fmt.Printf("%-52s %12d %10.2f %10.4f\n", fmt.Sprintf("AIS from scratch (%d runs, %g betas)", runs, b), int64(runs)*int64(b)*int64(len(models)), aisCPU[i], aisRMS[i])
	}
	fmt.Printf("\n%6s %12s", "epoch", "exact")
	for _, d := range depths {
		fmt.Printf(" %24s", fmt.Sprintf("depth %g, seed 0 ± SE", d))
	}
	fmt.Println()
	for k := range models {
		fmt.Printf("%6d %12.4f", 5*(k+1), exacts[k])
		for _, vr := range variants {
			fmt.Printf(" %14.4f ± %7.4f", vr.tracked[0][k], vr.tse[0][k])
		}
		fmt.Println()
	}
	fmt.Println("\ngoal: tracking ≥ 5× cheaper than AIS from scratch at the same accuracy (AIS's cpu at a given RMS from a power law fitted to its rows)")
	for _, l := range summary {
		fmt.Println("  " + l)
	}
}

// benchList reads a comma-separated list of numbers from the environment.
func benchList(t *testing.T, name, def string) []float64 {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	var out []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		out = append(out, x)
	}
	return out
}

// aisCPUAt returns the CPU time at which AIS's RMS error is rms, from the
// power law err = a·cpu^(−b) fitted by least squares to the measured
// budgets in log-log (interpolated inside their range of errors,
// extrapolated outside it, as the second result says).
func aisCPUAt(errs, cpu []float64, rms float64) (float64, string) {
	var sx, sy, sxx, sxy float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range errs {
		x, y := math.Log(cpu[i]), math.Log(errs[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		lo, hi = math.Min(lo, errs[i]), math.Max(hi, errs[i])
	}
	n := float64(len(errs))
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	icpt := (sy - slope*sx) / n
	if !(slope < 0) {
		return math.NaN(), "AIS's error does not fall with its budget here"
	}
	how := "interpolated"
	if rms < lo || rms > hi {
		how = "extrapolated"
	}
	return math.Exp((math.Log(rms) - icpt) / slope), how
}
