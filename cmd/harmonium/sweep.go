package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harmonium-rbm/harmonium/lang"
	"github.com/harmonium-rbm/harmonium/lang/sweep"
)

func init() {
	subcommands["sweep"] = subcommand{sweepMain,
		"sweep run SCRIPT.go --grid GRID.json --out DIR [--backend local|slurm] [--jobs K] [--threads T] [--retries R] [--slurm-opt \"…\"] [--force]\n" +
			"      sweep status DIR | collect DIR [-o TABLE.csv|.json] [--mean] [--note TEXT] | cancel DIR | task DIR I\n" +
			"                                run a parameter sweep (see lang/sweep)"}
}

const sweepUsage = `usage:
  harmonium sweep run SCRIPT.go --grid GRID.json --out DIR [--backend local|slurm] [--jobs K]
                      [--threads T] [--retries R] [--slurm-opt "--partition=… --time=…"] [--force]
  harmonium sweep status DIR
  harmonium sweep collect DIR [-o TABLE.csv|TABLE.json] [--mean] [--note "how it was made"]
  harmonium sweep cancel DIR
  harmonium sweep task DIR I      (run one task; what the backends run)`

// sweepMain dispatches `harmonium sweep SUBCOMMAND`.
func sweepMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, sweepUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "run":
		return sweepRun(ctx, args[1:], stdout, stderr)
	case "status":
		return sweepStatus(args[1:], stdout, stderr)
	case "collect":
		return sweepCollect(args[1:], stdout, stderr)
	case "cancel":
		return withDir("cancel", args[1:], stderr, func(dir string) error { return sweep.Cancel(ctx, dir) })
	case "task":
		if len(args) != 3 {
			fmt.Fprintln(stderr, "usage: harmonium sweep task DIR I")
			return 2
		}
		i, err := strconv.Atoi(args[2])
		if err != nil {
			fmt.Fprintf(stderr, "harmonium sweep task: task index %q is not an integer\n", args[2])
			return 2
		}
		if err := sweep.ExecTask(ctx, args[1], i, lang.RunScript); err != nil {
			fmt.Fprintf(stderr, "harmonium sweep task: %v\n", err)
			return 1
		}
		return 0
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, sweepUsage)
		return 0
	}
	fmt.Fprintf(stderr, "harmonium sweep: unknown subcommand %q\n%s\n", args[0], sweepUsage)
	return 2
}

// parseInterleaved parses flags that may come before or after the
// positional arguments, and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func sweepRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harmonium sweep run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o sweep.Options
	gridPath := fs.String("grid", "", "the parameter grid, a JSON `file`")
	fs.StringVar(&o.Dir, "out", "", "the sweep's `directory` (manifest, results; rerun to resume)")
	fs.StringVar(&o.Backend, "backend", sweep.Local, "where tasks run: local or slurm")
	fs.IntVar(&o.Jobs, "jobs", 0, "tasks at once (local default: cores ÷ threads; slurm: the array's %K, default none)")
	fs.IntVar(&o.Threads, "threads", 1, "threads per task")
	fs.IntVar(&o.Retries, "retries", 0, "times a failed task is run again")
	slurmOpt := fs.String("slurm-opt", "", "extra sbatch `options`, space separated")
	fs.BoolVar(&o.Force, "force", false, "discard DIR's results if the script or grid changed")
	quiet := fs.Bool("q", false, "no progress line")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || *gridPath == "" || o.Dir == "" {
		fmt.Fprintln(stderr, "usage: harmonium sweep run SCRIPT.go --grid GRID.json --out DIR [flags]")
		return 2
	}
	o.Script = pos[0]
	o.SlurmOptions = strings.Fields(*slurmOpt)
	if o.Grid, err = sweep.ReadGrid(*gridPath); err != nil {
		fmt.Fprintf(stderr, "harmonium sweep run: %v\n", err)
		return 1
	}
	terminal := isTerminal(stderr)
	if !*quiet {
		o.Progress = progressLine(stderr, o.Dir, terminal)
	}
	t, err := sweep.Run(ctx, o)
	if !*quiet && terminal {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "harmonium sweep run: %v\n", err)
		var fe *sweep.FailedError
		if errors.As(err, &fe) {
			for k, ts := range fe.Tasks {
				if k == 3 {
					fmt.Fprintf(stderr, "(harmonium sweep status %s shows the others)\n", o.Dir)
					break
				}
				if ts.StderrTail != "" {
					fmt.Fprintf(stderr, "--- task %d stderr (last lines):\n%s\n", ts.Index, ts.StderrTail)
				}
			}
		}
		if ctx.Err() != nil {
			return 130
		}
		return 1
	}
	fmt.Fprintf(stdout, "%d tasks done in %s\n", len(t.Rows), o.Dir)
	return 0
}

// withDir runs f on the single DIR argument of a subcommand.
func withDir(name string, args []string, stderr io.Writer, f func(dir string) error) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "usage: harmonium sweep %s DIR\n", name)
		return 2
	}
	if err := f(args[0]); err != nil {
		fmt.Fprintf(stderr, "harmonium sweep %s: %v\n", name, err)
		return 1
	}
	return 0
}

func sweepStatus(args []string, stdout, stderr io.Writer) int {
	return withDir("status", args, stderr, func(dir string) error {
		st, err := sweep.ReadStatus(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s\n", dir, st)
		for _, ts := range st.Tasks {
			fmt.Fprintf(stdout, "task %d\t%s\tattempts %d\t%v\n", ts.Index, ts.State, ts.Attempt, ts.Params)
		}
		for _, ts := range st.Tasks {
			if ts.State == sweep.StatusFailed || ts.State == sweep.StatusInterrupted {
				fmt.Fprintf(stdout, "\n--- task %d %s: %s\n", ts.Index, ts.State, ts.Error)
				if ts.StderrTail != "" {
					fmt.Fprintln(stdout, ts.StderrTail)
				}
			}
		}
		return nil
	})
}

func sweepCollect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harmonium sweep collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the table to `file` (.csv or .json) instead of printing it")
	mean := fs.Bool("mean", false, "average over the repeated seeds (mean ± standard error)")
	note := fs.String("note", "", "where the table comes from (`text`: the command, the grid), written as comment lines before a CSV table's header (sweep.ReadCSV reads it back)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	return withDir("collect", pos, stderr, func(dir string) error {
		t, err := sweep.Collect(dir)
		if err != nil {
			return err
		}
		if *mean {
			t = t.Aggregate()
		}
		t.Note = *note
		if *out == "" {
			fmt.Fprint(stdout, t)
			return nil
		}
		return t.Save(*out)
	})
}

// progressLine reports a sweep's progress on w. On a terminal it rewrites one
// line at every poll; elsewhere (a Slurm batch log, a file, a pipe) it writes a
// line only when the task counts change, so a day-long sweep leaves a log of
// a few lines per task rather than one per poll.
func progressLine(w io.Writer, dir string, terminal bool) func(sweep.Status) {
	if terminal {
		return func(s sweep.Status) { fmt.Fprintf(w, "\rsweep %s: %s\033[K", dir, s) }
	}
	last := [4]int{-1}
	return func(s sweep.Status) {
		counts := [4]int{s.Done, s.Running, s.Failed, s.Queued}
		if counts == last {
			return
		}
		last = counts
		fmt.Fprintf(w, "sweep %s: %s (elapsed %s)\n", dir, s, s.Elapsed.Round(time.Second))
	}
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
