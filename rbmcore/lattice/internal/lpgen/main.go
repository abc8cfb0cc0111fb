// Command lpgen writes a lattice-protein alignment: sequences sampled by
// lattice.Sample that fold in a target structure with P_nat above a
// threshold, in FASTA format. `go generate` in rbmcore/lattice runs it to
// make testdata/example.fasta; with -n 36000 it makes the alignment of
// Tubiana, Cocco & Monasson 2019, §III.A.
//
//	go run ./rbmcore/lattice/internal/lpgen -n 36000 -seed 1 -o lp.fasta
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/lattice"
)

func main() {
	out := flag.String("o", "", "output FASTA file (required)")
	n := flag.Int("n", 36000, "number of sequences")
	seed := flag.Uint64("seed", 1, "random seed")
	target := flag.Int("target", lattice.DefaultTarget, "target structure S_A")
	beta := flag.Float64("beta", 0, "selection strength β (SampleOptions.Beta)")
	interval := flag.Int("interval", 0, "Monte Carlo steps between records (0: lattice.DefaultInterval)")
	chains := flag.Int("chains", 0, "independent chains (0: 64)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "lpgen: -o FILE is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *target, lattice.SampleOptions{Sequences: *n, Seed: *seed, Beta: *beta, Interval: *interval, Chains: *chains}); err != nil {
		fmt.Fprintln(os.Stderr, "lpgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, target int, opts lattice.SampleOptions) error {
	t0 := time.Now()
	st, err := lattice.Enumerate(ctx, lattice.EnumerateOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "lpgen: %d structures in %v\n", st.Len(), time.Since(t0).Round(time.Millisecond))
	m, err := lattice.NewModel(st, lattice.ModelOptions{})
	if err != nil {
		return err
	}
	t1 := time.Now()
	last := time.Time{}
	opts.Progress = func(p lattice.Progress) {
		if time.Since(last) > 10*time.Second || p.Done == p.Total {
			fmt.Fprintf(os.Stderr, "lpgen: %v\n", p)
			last = time.Now()
		}
	}
	s, err := lattice.Sample(ctx, m, target, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "lpgen: %d sequences in %v\n", len(s.Sequences), time.Since(t1).Round(time.Millisecond))
	return s.SaveFASTA(out)
}
