package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Backends.
const (
	Local = "local" // processes on this machine
	Slurm = "slurm" // one Slurm job array, resubmitted for failed tasks
)

// Options describe a sweep to run. The zero value of every field but Dir,
// Grid and Script or Source has a meaning given beside it.
type Options struct {
	// Dir is the sweep's directory: manifest, script copy, per-task
	// results. Running again on the same Dir resumes.
	Dir string
	// Script is the path of the script (notebook Go dialect, cells split at
	// `// %%` lines). Source, if set, is the script's text instead, and
	// Script, if set, only names it in messages.
	Script string
	Source string
	// Grid is the parameter grid (see Grid, ParseGrid, ReadGrid).
	Grid *Grid
	// Backend is Local ("" means Local) or Slurm.
	Backend string
	// Jobs is the number of tasks run at once: locally 0 means the number
	// of cores ÷ Threads (at least 1); under Slurm the job array's %K
	// throttle, 0 meaning no throttle.
	Jobs int
	// Threads is each task's number of threads (GOMAXPROCS and
	// OPENBLAS_NUM_THREADS; Slurm's --cpus-per-task); 0 means 1.
	Threads int
	// Retries is how many times a failed task is run again in this run; 0
	// means failed tasks are reported and left for the next run.
	Retries int
	// Force discards the results in Dir when the script or grid changed
	// (otherwise an error).
	Force bool
	// SlurmOptions are extra sbatch arguments ("--partition=short",
	// "--time=1:00:00").
	SlurmOptions []string
	// Poll is how often the Slurm backend asks squeue (0 means 2 s).
	Poll time.Duration
	// Command is the task command: Command, DIR and the task index are run
	// for each task. Nil means this executable with "sweep", "task"
	// (harmonium sweep task DIR I).
	Command []string
	// Progress, if set, is called with the sweep's state whenever it
	// changes and at least every few seconds. In a notebook a live
	// progress display is shown as well.
	Progress func(Status)
}

// Status is the state of a sweep.
type Status struct {
	Dir                                  string
	Total, Done, Running, Failed, Queued int
	// Elapsed is the time since this run started; ETA the estimated time
	// to the end, negative when unknown.
	Elapsed, ETA time.Duration
	// Tasks are the per-task states (Status and Collect fill it; the
	// progress callback's Status leaves it nil).
	Tasks []TaskStatus
}

// TaskStatus is one task's state.
type TaskStatus struct {
	Index int
	// State is "done", "failed", "interrupted", "running" or "pending".
	State  string
	Params Params
	// Attempt is the number of runs started; Error the last failure.
	Attempt int
	Error   string
	// StderrTail holds the last lines of the task's stderr when it failed.
	StderrTail string
}

// String is a one-line summary, e.g. "12/16 done, 2 running, 1 failed, 1
// queued, ETA 1m20s".
func (s Status) String() string {
	t := fmt.Sprintf("%d/%d done, %d running, %d failed, %d queued", s.Done, s.Total, s.Running, s.Failed, s.Queued)
	if s.ETA >= 0 && s.Done < s.Total {
		t += ", ETA " + s.ETA.Round(time.Second).String()
	}
	return t
}

// FailedError reports the tasks that failed for good in a run.
type FailedError struct {
	Dir   string
	Tasks []TaskStatus
}

func (e *FailedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep: %s: %d task(s) failed:", e.Dir, len(e.Tasks))
	for _, t := range e.Tasks {
		fmt.Fprintf(&b, "\n  task %d %s: %s", t.Index, formatParams(t.Params), firstLine(t.Error))
	}
	return b.String()
}

func formatParams(p Params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + formatParam(p[k])
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// phase is where a launched task is.
type phase int

const (
	queued phase = iota
	active
	ended
)

// fate is what a backend knows of a launched task.
type fate struct {
	phase phase
	// detail says how an ended task ended by the backend's account (exit
	// status, Slurm state), for when its own result file does not.
	detail string
}

// backend runs task processes.
type backend interface {
	// adopt returns the tasks a previous driver launched that are still
	// queued or running, which this driver then follows instead of
	// launching them again.
	adopt(ctx context.Context) ([]int, error)
	// launch starts (or queues) the tasks.
	launch(ctx context.Context, tasks []int) error
	// poll returns the fate of every launched task not yet reported ended;
	// each ended task is reported once.
	poll(ctx context.Context) (map[int]fate, error)
	// stop ends the driver's part when ctx was cancelled: the local backend
	// interrupts its tasks; Slurm's jobs keep running (sweep cancel stops
	// them). It returns what the user can do next.
	stop() string
	// interval is the time between polls.
	interval() time.Duration
}

// Run plans the sweep into opts.Dir (or checks the plan there), runs every
// task not yet done on the chosen backend, and returns the collected table.
// The error is a *FailedError when tasks failed for good, ctx's error when
// the run was interrupted (Dir stays resumable: run again to go on).
func Run(ctx context.Context, opts Options) (*Table, error) {
	if opts.Dir == "" {
		return nil, errors.New("sweep: Options.Dir is empty")
	}
	if opts.Grid == nil {
		return nil, errors.New("sweep: Options.Grid is nil")
	}
	src := []byte(opts.Source)
	name := opts.Script
	if opts.Source == "" {
		if opts.Script == "" {
			return nil, errors.New("sweep: give Options.Script (a file) or Options.Source (a script's text)")
		}
		var err error
		if src, err = os.ReadFile(opts.Script); err != nil {
			return nil, fmt.Errorf("sweep: reading the script: %w", err)
		}
	} else if name == "" {
		name = "(source)"
	}
	if opts.Backend != "" && opts.Backend != Local && opts.Backend != Slurm {
		return nil, fmt.Errorf("sweep: unknown backend %q (want %q or %q)", opts.Backend, Local, Slurm)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	unlock, err := lockDriver(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, err := writePlan(ctx, plan{dir: dir, scriptName: name, src: src, grid: opts.Grid, threads: opts.Threads, force: opts.Force})
	if err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(dir, cancelFile))
	command := opts.Command
	if command == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sweep: finding the harmonium executable: %w", err)
		}
		command = []string{exe, "sweep", "task"}
	}
	var b backend
	switch opts.Backend {
	case "", Local:
		jobs := opts.Jobs
		if jobs <= 0 {
			jobs = max(runtime.NumCPU()/m.Threads, 1)
		}
		b = newLocal(dir, command, jobs, m.Threads)
	default:
		b = &slurm{dir: dir, command: command, jobs: opts.Jobs, threads: m.Threads, extra: opts.SlurmOptions, every: opts.Poll}
	}
	d := &driver{dir: dir, m: m, b: b, retries: opts.Retries, report: newReporter(dir, opts.Progress)}
	runErr := d.run(ctx)
	t, err := Collect(dir)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	return t, runErr
}

// lockWait is how long lockDriver keeps trying a held lock before it
// refuses. A driver that was just killed can leave its lock held for a few
// milliseconds more: a task it was starting still shares the lock file's
// description between fork and exec. A second driver, by contrast, holds
// the lock for the whole sweep, so a second is enough to tell them apart.
const lockWait = time.Second

// lockDriver makes sure one driver at a time runs a sweep directory.
func lockDriver(ctx context.Context, dir string) (func(), error) {
	path := filepath.Join(dir, driverLock)
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	f, err := lockFileWait(wctx, path)
	if err != nil {
		owner, _ := os.ReadFile(path)
		return nil, fmt.Errorf("sweep: %s is being run by another driver (%s): %w", dir, strings.TrimSpace(string(owner)), err)
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+" on "+host+"\n"), 0)
	return func() { f.Close() }, nil
}

// driver follows one run of a sweep.
type driver struct {
	dir     string
	m       *Manifest
	b       backend
	retries int
	report  *reporter
}

func (d *driver) run(ctx context.Context) error {
	n := len(d.m.Tasks)
	st := Status{Dir: d.dir, Total: n}
	adopted, err := d.b.adopt(ctx)
	if err != nil {
		return err
	}
	following := map[int]bool{}
	for _, i := range adopted {
		following[i] = true
	}
	var todo []int
	for i := range n {
		if r, err := readResult(d.dir, i); err == nil && r.Status == StatusDone {
			st.Done++
			continue
		}
		if !following[i] {
			todo = append(todo, i)
		}
	}
	doneBefore := st.Done
	start := time.Now()
	if err := d.b.launch(ctx, todo); err != nil {
		return err
	}
	for _, i := range todo {
		following[i] = true
	}
	tries := map[int]int{}
	var failed []TaskStatus
	ticker := time.NewTicker(d.b.interval())
	defer ticker.Stop()
	pollErrors := 0
	for len(following) > 0 {
		select {
		case <-ctx.Done():
			next := d.b.stop()
			return fmt.Errorf("sweep: %s interrupted (%s): %w", d.dir, next, ctx.Err())
		case <-ticker.C:
		}
		if _, err := os.Stat(filepath.Join(d.dir, cancelFile)); err == nil {
			d.b.stop()
			return fmt.Errorf("sweep: %s was cancelled (run it again to resume)", d.dir)
		}
		fates, err := d.b.poll(ctx)
		if err != nil {
			// The controller may be briefly unreachable; give up after a minute or so.
			if pollErrors++; pollErrors*int(d.b.interval()) > int(time.Minute) {
				return fmt.Errorf("sweep: %s: following the tasks: %w", d.dir, err)
			}
			continue
		}
		pollErrors = 0
		st.Running, st.Queued = 0, 0
		var again []int
		for i, f := range fates {
			switch f.phase {
			case queued:
				st.Queued++
				continue
			case active:
				st.Running++
				continue
			}
			delete(following, i)
			r, rerr := readResult(d.dir, i)
			if rerr == nil && r.Status == StatusDone {
				st.Done++
				continue
			}
			ts := TaskStatus{Index: i, State: StatusFailed, Params: d.m.Tasks[i], Error: f.detail}
			if rerr == nil && r.Error != "" {
				ts.Error = r.Error + " (" + f.detail + ")"
			}
			if tries[i] < d.retries {
				tries[i]++
				again = append(again, i)
				continue
			}
			ts.StderrTail = tail(filepath.Join(taskDir(d.dir, i), stderrFile), 10)
			failed = append(failed, ts)
		}
		if len(again) > 0 {
			sort.Ints(again)
			if err := d.b.launch(ctx, again); err != nil {
				return err
			}
			for _, i := range again {
				following[i] = true
			}
			st.Queued += len(again)
		}
		st.Failed = len(failed)
		st.Elapsed = time.Since(start)
		st.ETA = -1
		if k := st.Done - doneBefore; k > 0 {
			left := n - st.Done - st.Failed
			st.ETA = time.Duration(float64(st.Elapsed) / float64(k) * float64(left))
		}
		d.report.update(st)
	}
	d.report.finish(st)
	if len(failed) > 0 {
		sort.Slice(failed, func(a, b int) bool { return failed[a].Index < failed[b].Index })
		return &FailedError{Dir: d.dir, Tasks: failed}
	}
	return nil
}

// readResult reads task i's result file.
func readResult(dir string, i int) (*Result, error) {
	var r Result
	if err := readJSON(filepath.Join(taskDir(dir, i), resultFile), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// tail returns the last n lines of a file ("" if unreadable).
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const limit = 64 << 10
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-limit, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
