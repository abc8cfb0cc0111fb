package lattice

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/guard"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// DefaultTarget is our best reconstruction of the structure S_A of
// Tubiana, Cocco & Monasson 2019, who do not give its walk. Ten of the
// 103 346 structures have every contact they describe for S_A in §III.B:
// (3,26), (5,22), (11,22), (1,18), (1,20) in their 1-based numbering, that
// is (2,25), (4,21), (10,21), (0,17), (0,19) here. DefaultTarget is the
// only one of the ten in which their sites 2, 16, 18, 23 and 25 form a
// connected patch of contacts, as their weight 4 (the "upper side")
// requires. Its sites 1 and 26 are not in contact, as in their S_A. The
// alignment the authors distribute with their reference code agrees: of
// its first 80 sequences, 74 have their lowest energy in DefaultTarget
// (the other six in the one structure that shares 22 of its 28 contacts).
const DefaultTarget = 20706

// SampleOptions controls Sample. The zero value samples the alignment of
// Tubiana, Cocco & Monasson 2019, §III.A: 36 000 sequences with
// P_nat > 0.995, uniform over that set, 64 chains, random stream 0.
type SampleOptions struct {
	// Sequences is the number of sequences; 0 means 36 000.
	Sequences int
	// Threshold is the lowest P_nat(v;S_A) allowed; 0 means 0.995.
	Threshold float64
	// Beta is the selection strength β of the stationary distribution
	// p(v) ∝ P_nat(v;S_A)^β restricted to P_nat(v;S_A) > Threshold; 0
	// means uniform over the sequences above the threshold.
	Beta float64
	// Interval is the number of Monte Carlo steps (proposed single-site
	// mutations) between recorded sequences of a chain; 0 means
	// DefaultInterval.
	Interval int
	// BurnIn is the number of steps a chain makes above the threshold
	// before its first record; 0 means 10·Interval.
	BurnIn int
	// Chains is the number of independent chains, each recording an equal
	// share of the sequences; 0 means 64. A chain explores the sequences
	// near the one it first designed (for DefaultTarget, records 10
	// intervals apart differ at ~6.5 of 27 sites), while sequences of
	// different chains differ at ~20 sites, so the chains make the
	// alignment's diversity, and its clusters (the subfamilies of Fig. 4g
	// of Tubiana, Cocco & Monasson 2019). Each chain records an equal share
	// whatever the size of the region it explores: a chain whose climb ends
	// on a sequence none of whose single mutants is above the threshold
	// never moves, and records that one sequence again and again. The
	// result depends on Seed and Chains, not on Workers.
	Chains int
	// Seed seeds the chains' random streams.
	Seed uint64
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called from the calling goroutine about ten
	// times a second and once at the end, counting recorded sequences.
	Progress func(Progress)
}

// DefaultInterval is the default number of Monte Carlo steps between two
// recorded sequences of a chain: 10 proposals per site. Above the
// threshold only a few per cent of the proposals are accepted (for
// DefaultTarget, consecutive records differ at ~5 sites).
const DefaultInterval = 10 * Length

// designSteps bounds the steps a chain may take to reach the threshold
// from its random initial sequence.
const designSteps = 200_000

// climbBeta is the inverse temperature of the k-th step of the climb to the
// threshold: it anneals geometrically from 10 to 10⁴ over 12 000 steps and
// starts again (a reheat, to leave a local maximum of P_nat). At 10⁴ a step
// that lowers log P_nat by 10⁻³ is accepted with probability e⁻¹⁰ (P_nat
// near 1 is 1 + log P_nat): a nearly greedy search.
func climbBeta(k int) float64 { return 10 * math.Pow(1000, float64(k%12000)/12000) }

// Samples is an alignment of sequences sampled by Sample.
type Samples struct {
	// Sequences holds the sampled sequences, chain after chain.
	Sequences []Sequence
	// PNat holds P_nat(v;S_A) of each sequence.
	PNat []float64
	// Target is the structure S_A.
	Target int
}

// Sample generates sequences that fold specifically in the structure S_A =
// target (Tubiana, Cocco & Monasson 2019, §III.A, after Jacquin et
// al. 2016): Metropolis Monte Carlo in sequence space whose stationary
// distribution is p(v) ∝ P_nat(v;S_A)^β on the sequences with
// P_nat(v;S_A) > Threshold and 0 elsewhere.
//
// Each chain starts from a uniformly random sequence and first climbs to
// the threshold (annealed Metropolis on log P_nat, see climbBeta); it then
// makes BurnIn steps and records a sequence every Interval steps. A step
// picks a site uniformly and a different amino acid uniformly (a symmetric
// proposal), rejects it when P_nat would fall to the threshold or below,
// and otherwise accepts it with probability min(1, (P_nat'/P_nat)^β). P_nat
// is evaluated at the model's temperature (1 for Eq. 20) through a Tracker.
//
// The chains run on opts.Workers goroutines; chain c uses the PCG stream
// (Seed, c), so the result is reproducible. A chain checks ctx every 16
// steps, so Sample returns ctx's error well within a second of a
// cancellation.
func Sample(ctx context.Context, m *Model, target int, opts SampleOptions) (*Samples, error) {
	ctx = rbm.ContextOrDefault(ctx)
	o, err := opts.withDefaults(m, target)
	if err != nil {
		return nil, fmt.Errorf("lattice: Sample: %w", err)
	}
	out := &Samples{Sequences: make([]Sequence, o.Sequences), PNat: make([]float64, o.Sequences), Target: target}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, o.Workers)
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = guard.Call(func() error {
				for {
					c := int(next.Add(1) - 1)
					if c >= o.Chains || ctx.Err() != nil {
						return nil
					}
					lo, hi := c*o.Sequences/o.Chains, (c+1)*o.Sequences/o.Chains
					if err := runChain(ctx, m, target, &o, c, out.Sequences[lo:hi], out.PNat[lo:hi], &done); err != nil {
						return err
					}
				}
			})
		}()
	}
	waitWithProgress(ctx, &wg, o.Progress, func() (int, int) { return int(done.Load()), o.Sequences })
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("lattice: Sample: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lattice: Sample: interrupted after %d of %d sequences: %w", done.Load(), o.Sequences, err)
	}
	return out, nil
}

// withDefaults checks the options and fills in the defaults.
func (o SampleOptions) withDefaults(m *Model, target int) (SampleOptions, error) {
	switch {
	case m == nil:
		return o, fmt.Errorf("nil model")
	case target < 0 || target >= m.st.Len():
		return o, fmt.Errorf("target structure %d, want a structure in [0, %d)", target, m.st.Len())
	case o.Sequences < 0:
		return o, fmt.Errorf("option Sequences = %d, want ≥ 0", o.Sequences)
	case !(o.Threshold >= 0 && o.Threshold < 1):
		return o, fmt.Errorf("option Threshold = %v, want a value in [0, 1)", o.Threshold)
	case !(o.Beta >= 0) || math.IsInf(o.Beta, 0):
		return o, fmt.Errorf("option Beta = %v, want a finite value ≥ 0", o.Beta)
	case o.Interval < 0 || o.BurnIn < 0 || o.Chains < 0 || o.Workers < 0:
		return o, fmt.Errorf("options Interval = %d, BurnIn = %d, Chains = %d, Workers = %d: want values ≥ 0",
			o.Interval, o.BurnIn, o.Chains, o.Workers)
	}
	if o.Sequences == 0 {
		o.Sequences = 36000
	}
	if o.Threshold == 0 {
		o.Threshold = 0.995
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.BurnIn == 0 {
		o.BurnIn = 10 * o.Interval
	}
	if o.Chains == 0 {
		o.Chains = 64
	}
	o.Chains = min(o.Chains, o.Sequences)
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	o.Workers = min(o.Workers, o.Chains)
	return o, nil
}

// runChain runs chain c, filling seqs and pnat and adding each record to
// done.
func runChain(ctx context.Context, m *Model, target int, o *SampleOptions, c int, seqs []Sequence, pnat []float64, done *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(o.Seed, uint64(c)))
	var v Sequence
	for i := range v {
		v[i] = uint8(rng.IntN(Q))
	}
	t, err := NewTracker(m, v, target)
	if err != nil {
		return err
	}
	logTh := math.Log(o.Threshold)
	lp := t.LogPNat()
	steps := 0
	// step makes one Metropolis step at inverse temperature beta; above
	// the threshold it never leaves it.
	step := func(beta float64, constrained bool) error {
		steps++
		if steps%16 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i := rng.IntN(Length)
		a := uint8(rng.IntN(Q - 1))
		if a >= t.v[i] {
			a++
		}
		// Accept when log P_nat' > floor: above the threshold, and (for
		// β > 0) the Metropolis test u < (P_nat'/P_nat)^β with u drawn
		// first, so that the Tracker can stop summing Z early.
		floor := math.Inf(-1)
		if constrained {
			floor = logTh
		}
		if beta > 0 {
			floor = max(floor, lp+math.Log(1-rng.Float64())/beta)
		}
		nlp, above, err := t.ProposeAbove(i, a, floor)
		if err != nil || !above {
			return err
		}
		lp = nlp
		return t.Accept()
	}
	for lp <= logTh {
		if steps >= designSteps {
			return fmt.Errorf("chain %d: P_nat(S_%d) reached only %.4g after %d steps (threshold %v): the structure may not be designable",
				c, target, math.Exp(lp), steps, o.Threshold)
		}
		if err := step(climbBeta(steps), false); err != nil {
			return err
		}
	}
	for k := 0; k < o.BurnIn; k++ {
		if err := step(o.Beta, true); err != nil {
			return err
		}
	}
	for r := range seqs {
		for k := 0; k < o.Interval; k++ {
			if err := step(o.Beta, true); err != nil {
				return err
			}
		}
		seqs[r], pnat[r] = t.Sequence(), math.Exp(lp)
		done.Add(1)
	}
	return nil
}

// WriteFASTA writes the sequences in FASTA format, one line each, with
// headers "seqK pnat=P target=S" (K from 1). data.LoadAlignment reads it
// with AlignmentOptions{Alphabet: lattice.Alphabet}.
func (s *Samples) WriteFASTA(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for k, v := range s.Sequences {
		if _, err := fmt.Fprintf(bw, ">seq%d pnat=%.6f target=%d\n%s\n", k+1, s.PNat[k], s.Target, v); err != nil {
			return fmt.Errorf("lattice: WriteFASTA: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lattice: WriteFASTA: %w", err)
	}
	return nil
}

// SaveFASTA writes the sequences to the file path (see WriteFASTA)
// atomically (package atomicfile): a reader sees the old file or the whole
// new one.
func (s *Samples) SaveFASTA(path string) error {
	if err := atomicfile.Write(path, s.WriteFASTA); err != nil {
		return fmt.Errorf("lattice: SaveFASTA %s: %w", path, err)
	}
	return nil
}
