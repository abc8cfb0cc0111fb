package rbm

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
)

// sokalC is the window constant of Sokal's automatic windowing: the sum of
// the autocorrelations stops at the first lag W ≥ sokalC·τ(W) (Sokal 1997,
// "Monte Carlo methods in statistical mechanics", §3; c = 5 for roughly
// exponential decay).
const sokalC = 5

// IntegratedAutocorrTime returns the integrated autocorrelation time
// τ = 1 + 2 Σ_{t=1}^{W} ρ(t) of the series chains[b][t] (B chains of equal
// length T; one chain is allowed) and the window W chosen by Sokal's
// automatic windowing (the first W ≥ 5 τ(W)). The autocovariance at lag t
// is averaged over the chains, each centred on its own mean. τ = 1 for
// independent draws; a series too short for its window (W reaching T/2)
// returns ok = false with the τ reached so far, a lower bound.
func IntegratedAutocorrTime(chains [][]float64) (tau float64, window int, ok bool, err error) {
	if len(chains) == 0 || len(chains[0]) < 4 {
		return 0, 0, false, fmt.Errorf("rbm: IntegratedAutocorrTime: need at least one chain of length ≥ 4")
	}
	n := len(chains[0])
	centred := make([][]float64, len(chains))
	for b, x := range chains {
		if len(x) != n {
			return 0, 0, false, fmt.Errorf("rbm: IntegratedAutocorrTime: chain %d has length %d, chain 0 has %d", b, len(x), n)
		}
		mu := 0.0
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, false, fmt.Errorf("rbm: IntegratedAutocorrTime: chain %d holds %v", b, v)
			}
			mu += v
		}
		mu /= float64(n)
		c := make([]float64, n)
		for t, v := range x {
			c[t] = v - mu
		}
		centred[b] = c
	}
	acov := func(lag int) float64 {
		s := 0.0
		for _, c := range centred {
			for t := 0; t+lag < n; t++ {
				s += c[t] * c[t+lag]
			}
		}
		return s / float64(len(centred)*n)
	}
	c0 := acov(0)
	if c0 == 0 { // a constant series: no fluctuation to correlate
		return 1, 0, true, nil
	}
	tau = 1
	for w := 1; w < n/2; w++ {
		tau += 2 * acov(w) / c0
		if float64(w) >= sokalC*tau {
			return tau, w, true, nil
		}
	}
	return tau, n / 2, false, nil
}

// EffectiveSampleSize returns B·T/τ for the series of IntegratedAutocorrTime
// (the number of independent draws the chains are worth), and whether the
// windowing converged (see IntegratedAutocorrTime).
func EffectiveSampleSize(chains [][]float64) (float64, bool, error) {
	tau, _, ok, err := IntegratedAutocorrTime(chains)
	if err != nil {
		return 0, false, err
	}
	return float64(len(chains)*len(chains[0])) / math.Max(tau, 1e-300), ok, nil
}

// GelmanRubin returns the potential scale reduction factor R̂ of B ≥ 2
// chains of equal length T (Gelman & Rubin 1992, in the form of Gelman et
// al. 2013, §11.4): sqrt(((T-1)/T·W + B_var/T)/W), with W the mean
// within-chain variance and B_var/T the variance of the chain means. It is
// near 1 when the chains sample the same distribution and above 1.1 when
// they disagree (started in different modes and not yet mixed). Chains that
// are all constant and equal give 1; constant and unequal give +Inf.
func GelmanRubin(chains [][]float64) (float64, error) {
	if len(chains) < 2 || len(chains[0]) < 2 {
		return 0, fmt.Errorf("rbm: GelmanRubin: need at least 2 chains of length ≥ 2, got %d", len(chains))
	}
	n := len(chains[0])
	means := make([]float64, len(chains))
	w := 0.0
	for b, x := range chains {
		if len(x) != n {
			return 0, fmt.Errorf("rbm: GelmanRubin: chain %d has length %d, chain 0 has %d", b, len(x), n)
		}
		for _, v := range x {
			means[b] += v
		}
		means[b] /= float64(n)
		for _, v := range x {
			w += (v - means[b]) * (v - means[b])
		}
	}
	w /= float64(len(chains) * (n - 1))
	grand := 0.0
	for _, mu := range means {
		grand += mu
	}
	grand /= float64(len(means))
	bn := 0.0 // B/T: the variance of the chain means
	for _, mu := range means {
		bn += (mu - grand) * (mu - grand)
	}
	bn /= float64(len(means) - 1)
	switch {
	case w == 0 && bn == 0:
		return 1, nil
	case w == 0:
		return math.Inf(1), nil
	}
	return math.Sqrt((float64(n-1)/float64(n)*w + bn) / w), nil
}

// Mixing configures DiagnoseMixing. The zero value of every field is a
// usable default.
type Mixing struct {
	// Chains is the number of chains (default 16; at least 2).
	Chains int
	// Sweeps is the number of recorded Gibbs sweeps per chain (default 1000).
	Sweeps int
	// BurnIn is the number of sweeps run before recording (default 0: the
	// diagnostics are meant to see the approach to equilibrium too).
	BurnIn int
	// Start holds the initial visible states, one row per chain (rows are
	// reused cyclically when there are fewer). Nil starts from Data's rows
	// when Data is set, else from independent draws of each visible unit
	// (NewChains). R̂ can only see unmixed chains if they start spread over
	// the modes, so prefer diverse data rows.
	Start *mat.Dense
	// Data, when set, defines the overlap observable: the largest overlap
	// of a chain's state with the rows of Data (use up to a few hundred
	// rows: the cost per sweep is chains × rows × units).
	Data *mat.Dense
	// MaxRHat is the largest acceptable R̂ (default 1.1).
	MaxRHat float64
	// MinESS is the smallest acceptable effective sample size per
	// observable (default 100).
	MinESS float64
	// Seed seeds the chains.
	Seed uint64
}

// MixingReport holds the diagnostics of DiagnoseMixing, one entry per
// observable: "energy" (the free energy F(v) of each chain's visible
// state), "magnetisation" (the mean visible value of the state) and, when
// Mixing.Data is set, "overlap" (max_d (1/N) Σ_i s_i(v) s_i(d) over the
// rows d of Data, with s = 2v−1 for binary units and the value itself
// otherwise: how close the chain is to the nearest data point). All three
// have the same distribution in every chain at equilibrium, as R̂ needs.
type MixingReport struct {
	Observables []string
	// Tau is the integrated autocorrelation time (in sweeps), ESS the
	// effective sample size over all chains, RHat the Gelman–Rubin R̂.
	Tau, ESS, RHat []float64
	// Converged is false for an observable whose autocorrelation window did
	// not fit in the series (τ is then a lower bound).
	Converged []bool
	// Mixed is true when every observable has R̂ ≤ MaxRHat, ESS ≥ MinESS
	// and a converged window. It is a flag, not an error: a run that looks
	// unmixed still returns its chains.
	Mixed bool
	// Warning explains why the chains look unmixed ("" when Mixed).
	Warning string
	// Series are the recorded observables: Series[o][b][t].
	Series [][][]float64
	// Chains are the chains at the end of the run (continue them with Run).
	Chains *Chains
}

// String formats the report as a table followed by the warning.
func (r MixingReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %10s %10s %8s\n", "observable", "tau", "ESS", "R-hat")
	for o, name := range r.Observables {
		lb := ""
		if !r.Converged[o] {
			lb = "≥"
		}
		fmt.Fprintf(&b, "%-14s %10s %10.1f %8.3f\n", name, lb+fmt.Sprintf("%.1f", r.Tau[o]), r.ESS[o], r.RHat[o])
	}
	if r.Mixed {
		b.WriteString("chains look mixed\n")
	} else {
		b.WriteString("WARNING: " + r.Warning + "\n")
	}
	return b.String()
}

// DiagnoseMixing runs opts.Chains Gibbs chains of m for BurnIn + Sweeps
// sweeps, records the observables of MixingReport after every recorded
// sweep and computes their autocorrelation times, effective sample sizes
// and R̂. ctx is checked between sweeps; progress (if not nil) is called at
// most every 100 ms.
func DiagnoseMixing(ctx context.Context, m *RBM, opts Mixing, progress func(done, total int)) (MixingReport, error) {
	ctx = ContextOrDefault(ctx)
	if opts.Chains == 0 {
		opts.Chains = 16
	}
	if opts.Sweeps == 0 {
		opts.Sweeps = 1000
	}
	if opts.MaxRHat == 0 {
		opts.MaxRHat = 1.1
	}
	if opts.MinESS == 0 {
		opts.MinESS = 100
	}
	switch {
	case opts.Chains < 2:
		return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: Chains = %d, need at least 2", opts.Chains)
	case opts.Sweeps < 4:
		return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: Sweeps = %d, need at least 4", opts.Sweeps)
	case opts.BurnIn < 0:
		return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: BurnIn = %d is negative", opts.BurnIn)
	}
	nv := Width(m.Visible)
	for _, x := range []struct {
		name string
		d    *mat.Dense
	}{{"Start", opts.Start}, {"Data", opts.Data}} {
		if x.d != nil {
			if r, c := x.d.Dims(); c != nv || r == 0 {
				return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: %s is %d×%d, want rows of width %d", x.name, r, c, nv)
			}
		}
	}
	c, err := NewChains(m, opts.Chains, opts.Seed)
	if err != nil {
		return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: %w", err)
	}
	start := opts.Start
	if start == nil {
		start = opts.Data
	}
	if start != nil {
		if err := c.SetStates(cycleRows(start, opts.Chains), nil); err != nil {
			return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: %w", err)
		}
	}
	names := []string{"energy", "magnetisation"}
	var ref *mat.Dense
	if opts.Data != nil {
		names = append(names, "overlap")
		ref = spinRows(m.Visible, opts.Data)
	}
	series := make([][][]float64, len(names))
	for o := range series {
		series[o] = make([][]float64, opts.Chains)
		for b := range series[o] {
			series[o][b] = make([]float64, opts.Sweeps)
		}
	}
	total := opts.BurnIn + opts.Sweeps
	last := time.Now()
	for k := 0; k < total; k++ {
		if err := ctx.Err(); err != nil {
			return MixingReport{}, err
		}
		if err := c.Sweep(); err != nil {
			return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: %w", err)
		}
		if t := k - opts.BurnIn; t >= 0 {
			f := m.FreeEnergy(c.V)
			if err := checkFinite(f, "free energy of a chain"); err != nil {
				return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: sweep %d: %w", k+1, err)
			}
			var q mat.Dense
			if ref != nil {
				q.Mul(spinRows(m.Visible, c.V), ref.T())
			}
			for b := 0; b < opts.Chains; b++ {
				series[0][b][t] = f[b]
				row := c.V.RawRowView(b)
				mag := 0.0
				for _, x := range row {
					mag += x
				}
				series[1][b][t] = mag / float64(m.Visible.Len())
				if ref != nil {
					best := math.Inf(-1)
					for _, x := range q.RawRowView(b) {
						best = math.Max(best, x)
					}
					series[2][b][t] = best / float64(m.Visible.Len())
				}
			}
		}
		if progress != nil && (k == total-1 || time.Since(last) > 100*time.Millisecond) {
			progress(k+1, total)
			last = time.Now()
		}
	}
	rep := MixingReport{Observables: names, Series: series, Chains: c, Mixed: true}
	var why []string
	for o, name := range names {
		tau, _, ok, err := IntegratedAutocorrTime(series[o])
		if err != nil {
			return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: %s: %w", name, err)
		}
		rh, err := GelmanRubin(series[o])
		if err != nil {
			return MixingReport{}, fmt.Errorf("rbm: DiagnoseMixing: %s: %w", name, err)
		}
		ess := float64(opts.Chains*opts.Sweeps) / tau
		rep.Tau, rep.ESS, rep.RHat, rep.Converged = append(rep.Tau, tau), append(rep.ESS, ess), append(rep.RHat, rh), append(rep.Converged, ok)
		switch {
		case !(rh <= opts.MaxRHat):
			why = append(why, fmt.Sprintf("%s: R-hat %.3g > %.3g (the chains disagree)", name, rh, opts.MaxRHat))
		case !ok:
			why = append(why, fmt.Sprintf("%s: autocorrelation time ≥ %.0f sweeps does not fit in %d sweeps", name, tau, opts.Sweeps))
		case ess < opts.MinESS:
			why = append(why, fmt.Sprintf("%s: effective sample size %.0f < %.0f", name, ess, opts.MinESS))
		}
	}
	if len(why) > 0 {
		rep.Mixed = false
		rep.Warning = "the chains look unmixed: " + strings.Join(why, "; ") + ". Run more sweeps, use parallel tempering or population annealing, and do not trust averages over these chains."
	}
	return rep, nil
}

// cycleRows returns n rows taken cyclically from x.
func cycleRows(x *mat.Dense, n int) *mat.Dense {
	r, c := x.Dims()
	out := mat.NewDense(n, c, nil)
	for b := 0; b < n; b++ {
		copy(out.RawRowView(b), x.RawRowView(b%r))
	}
	return out
}

// spinRows returns a copy of x in the coding of the overlap: 2v−1 for a
// layer of {0,1} units, the values themselves otherwise.
func spinRows(l Layer, x *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(x)
	if d, ok := l.(Discrete); ok && isZeroOne(d.UnitValues()) {
		raw := out.RawMatrix().Data
		for i, v := range raw {
			raw[i] = 2*v - 1
		}
	}
	return out
}

// SetStates sets the chains' visible states to the rows of v (B rows) and
// their hidden states to the rows of h, or, when h is nil, to a draw from
// P(h | v) at the chains' Beta. It is the way to start chains from chosen
// states (data rows, the end of another run); the values are copied and
// checked to be finite with the right shape.
func (c *Chains) SetStates(v, h *mat.Dense) error {
	b := c.Len()
	nv, nh := Width(c.Model.Visible), Width(c.Model.Hidden)
	if r, k := v.Dims(); r != b || k != nv {
		return fmt.Errorf("rbm: Chains.SetStates: visible states are %d×%d, want %d×%d", r, k, b, nv)
	}
	if h != nil {
		if r, k := h.Dims(); r != b || k != nh {
			return fmt.Errorf("rbm: Chains.SetStates: hidden states are %d×%d, want %d×%d", r, k, b, nh)
		}
	}
	for r := 0; r < b; r++ {
		if err := checkFinite(v.RawRowView(r), fmt.Sprintf("Chains.SetStates: visible row %d", r)); err != nil {
			return err
		}
		if h != nil {
			if err := checkFinite(h.RawRowView(r), fmt.Sprintf("Chains.SetStates: hidden row %d", r)); err != nil {
				return err
			}
		}
	}
	if err := c.checkShapes(); err != nil {
		return fmt.Errorf("rbm: Chains.SetStates: %w", err)
	}
	c.V.Copy(v)
	if h != nil {
		c.H.Copy(h)
		return nil
	}
	hid, _, err := c.halves()
	if err != nil {
		return fmt.Errorf("rbm: Chains.SetStates: %w", err)
	}
	if err := forRanges(b, func(r0, r1 int) error { return c.step(hid, r0, r1) }); err != nil {
		return fmt.Errorf("rbm: Chains.SetStates: hidden states: %w", err)
	}
	return nil
}

// LogLikelihoodRows returns the log-likelihood -F(v) - log Z of every row
// of v (nats), given log Z (from ExactLogZ or an estimate); LogLikelihood
// is their mean.
func (m *RBM) LogLikelihoodRows(v *mat.Dense, logZ float64) ([]float64, error) {
	f := m.FreeEnergy(v)
	if err := checkFinite(f, "free energy"); err != nil {
		return nil, fmt.Errorf("rbm: LogLikelihoodRows: %w", err)
	}
	for r := range f {
		f[r] = -f[r] - logZ
	}
	return f, nil
}

// isZeroOne reports whether the unit values are exactly {0} and {1}.
func isZeroOne(vals [][]float64) bool {
	return len(vals) == 2 && len(vals[0]) == 1 && vals[0][0] == 0 && vals[1][0] == 1
}
