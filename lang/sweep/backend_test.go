package sweep_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/lang/sweep"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// backendCase is one backend under test, with its ways of disturbing a
// running task.
type backendCase struct {
	name string
	// setup checks the backend can run (starting the Slurm cluster).
	setup func(t *testing.T)
	opts  func(o *sweep.Options)
	// kill ends task i's attempt for good (SIGKILL; scancel).
	kill func(t *testing.T, dir string, i int)
	// interrupt stops task i's attempt the way preemption does (SIGTERM;
	// scontrol requeue).
	interrupt func(t *testing.T, dir string, i int)
	// retriesForInterrupt is what Options.Retries must be for an
	// interrupted task to run again in the same run (Slurm requeues it by
	// itself).
	retriesForInterrupt int
}

var localCase = backendCase{
	name:  "local",
	setup: func(*testing.T) {},
	opts:  func(o *sweep.Options) { o.Backend = sweep.Local },
	kill: func(t *testing.T, dir string, i int) {
		signalTask(t, dir, i, syscall.SIGKILL)
	},
	interrupt: func(t *testing.T, dir string, i int) {
		signalTask(t, dir, i, syscall.SIGTERM)
	},
	retriesForInterrupt: 1,
}

var slurmCase = backendCase{
	name:  "slurm",
	setup: needSlurm,
	opts: func(o *sweep.Options) {
		o.Backend, o.Poll = sweep.Slurm, 300*time.Millisecond
	},
	kill: func(t *testing.T, dir string, i int) {
		slurmCmd(t, "scancel", taskState(t, dir, i).Job)
	},
	interrupt: func(t *testing.T, dir string, i int) {
		st := taskState(t, dir, i)
		slurmCmd(t, "scontrol", "requeue", st.Job)
		// A requeued task waits ~2 minutes (its begin time) unless told.
		// Telling it before the old attempt's batch step has reported its
		// end lets that report end the new attempt (Slurm 22.05), so wait
		// for the old process to exit, and a moment for the report.
		waitFor(t, "the requeued task to be pending", 60*time.Second, func() bool {
			out, _ := exec.Command("squeue", "-h", "-j", st.Job, "-o", "%T").Output()
			return strings.TrimSpace(string(out)) == "PENDING"
		})
		waitFor(t, "the interrupted attempt to exit", 60*time.Second, func() bool { return syscall.Kill(st.PID, 0) != nil })
		time.Sleep(time.Second)
		slurmCmd(t, "scontrol", "update", "JobId="+st.Job, "StartTime=now")
	},
}

// The helpers below also run on goroutines of their tests, so they report
// with t.Errorf (t.Fatalf must be called from the test's own goroutine).

func slurmCmd(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// state is the part of a task's state.json the tests read.
type state struct {
	Attempt int    `json:"attempt"`
	PID     int    `json:"pid"`
	Job     string `json:"job"`
}

func taskState(t *testing.T, dir string, i int) state {
	t.Helper()
	var s state
	b, err := os.ReadFile(filepath.Join(dir, "tasks", strconv.Itoa(i), "state.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		t.Errorf("task %d's state: %v", i, err)
	}
	return s
}

func signalTask(t *testing.T, dir string, i int, sig syscall.Signal) {
	t.Helper()
	if pid := taskState(t, dir, i).PID; pid <= 0 {
		t.Errorf("task %d has no pid", i)
	} else if err := syscall.Kill(pid, sig); err != nil {
		t.Errorf("signalling task %d: %v", i, err)
	}
}

// fileExists reports whether a path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runSweep runs a sweep of script over grid in dir on b and returns its
// table and error.
func runSweep(t *testing.T, ctx context.Context, b backendCase, dir, script, grid string, mod func(*sweep.Options)) (*sweep.Table, error) {
	t.Helper()
	g, err := sweep.ParseGrid([]byte(grid))
	if err != nil {
		t.Fatal(err)
	}
	o := sweep.Options{Dir: dir, Source: script, Script: "test.go", Grid: g, Command: taskCommand()}
	b.opts(&o)
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	return sweep.Run(ctx, o)
}

// resultOf reads task i's result file.
func resultOf(t *testing.T, dir string, i int) sweep.Result {
	t.Helper()
	var r sweep.Result
	b, err := os.ReadFile(filepath.Join(dir, "tasks", strconv.Itoa(i), "result.json"))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		t.Fatalf("task %d's result: %v", i, err)
	}
	return r
}

const completeScript = `import "math"

x := sweep.Float("x")
seed := sweep.Int("seed")
m := rbm.New(rbm.Binary(9), rbm.ReLU(4), rbm.Seed(uint64(seed)))
sweep.Record("y", x*float64(seed))
sweep.Record("w00", m.W.At(0, 0))
// %%
set, _ := data.BarsAndStripes(3)
o := train.Options{Batch: 7, Epochs: 3, LR: 0.05, Seed: uint64(seed), Monitor: train.Monitor{ReconEvery: -1}}
if _, err := train.Fit(ctx, m, set, train.PCD{Chains: 8}, train.SGD{}, o); err != nil {
	panic(err)
}
sweep.Record("sumW", math.Abs(mat.Sum(m.W)))
`

const completeGrid = `{"axes": [{"name": "x", "linspace": {"from": 0, "to": 1.5, "num": 4}}], "seeds": {"count": 2}}`

// testComplete runs an 8-task sweep and checks its table.
func testComplete(t *testing.T, b backendCase) *sweep.Table {
	dir := t.TempDir()
	start := time.Now()
	var last sweep.Status
	calls := 0
	tab, err := runSweep(t, context.Background(), b, dir, strings.Replace(completeScript, `import "math"`, `import (
	"math"
	"gonum.org/v1/gonum/mat"
)`, 1), completeGrid, func(o *sweep.Options) {
		o.Progress = func(s sweep.Status) { last, calls = s, calls+1 }
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last.Done != 8 || last.Total != 8 || last.Running+last.Queued+last.Failed != 0 {
		t.Errorf("progress: %d calls, last %v", calls, last)
	}
	t.Logf("%s: 8 tasks in %v", b.name, time.Since(start))
	if len(tab.Rows) != 8 || strings.Join(tab.Params, ",") != "x,seed" || strings.Join(tab.Results, ",") != "y,w00,sumW" {
		t.Fatalf("table %v rows, params %v, results %v", len(tab.Rows), tab.Params, tab.Results)
	}
	for k, r := range tab.Rows {
		x, seed := 0.5*float64(k/2), float64(k%2+1)
		if r.State != sweep.StatusDone || r.Params["x"] != x || r.Params["seed"] != int64(seed) {
			t.Errorf("row %d: %+v", k, r)
		}
		if r.Values["y"] != x*seed {
			t.Errorf("row %d: y = %v, want %v", k, r.Values["y"], x*seed)
		}
		// The task's model is the one rbm.New makes here from the same seed.
		m := rbm.New(rbm.Binary(9), rbm.ReLU(4), rbm.Seed(uint64(seed)))
		if r.Values["w00"] != m.W.At(0, 0) {
			t.Errorf("row %d: w00 = %v, want %v", k, r.Values["w00"], m.W.At(0, 0))
		}
		if v := r.Values["sumW"]; !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("row %d: sumW = %v", k, v)
		}
	}
	agg := tab.Aggregate()
	if len(agg.Rows) != 4 || agg.Rows[1].N != 2 || agg.Rows[1].Values["y"] != 0.75 || agg.Rows[1].Values["y_se"] != 0.25 {
		t.Errorf("aggregate %+v", agg.Rows)
	}
	// Attaching to the finished sweep gives the same table.
	if w, err := sweep.Watch(context.Background(), dir, 0, nil); err != nil || len(w.Done().Rows) != 8 || w.Rows[5].Values["sumW"] != tab.Rows[5].Values["sumW"] {
		t.Errorf("Watch: %v\n%v", err, w)
	}
	// A second run finds everything done and runs nothing.
	again, err := runSweep(t, context.Background(), b, dir, strings.Replace(completeScript, `import "math"`, `import (
	"math"
	"gonum.org/v1/gonum/mat"
)`, 1), completeGrid, nil)
	if err != nil || resultOf(t, dir, 3).Attempt != 1 || len(again.Rows) != 8 {
		t.Errorf("rerun of a finished sweep: %v, task 3 attempt %d", err, resultOf(t, dir, 3).Attempt)
	}
	return tab
}

const failScript = `import "os"

n := sweep.Int("n")
switch {
case n == 1:
	os.Exit(1)
case n == 2:
	panic("boom in task 2")
case n == 3 && sweep.Attempt() == 1:
	panic("only the first attempt fails")
}
sweep.Record("n2", float64(n*n))
`

// testFailures: exit 1 and a panic are reported by index after the
// retries; a task failing once succeeds on its retry.
func testFailures(t *testing.T, b backendCase) {
	dir := t.TempDir()
	_, err := runSweep(t, context.Background(), b, dir, failScript, `{"axes": [{"name": "n", "range": {"from": 0, "to": 4}}]}`,
		func(o *sweep.Options) { o.Retries = 1 })
	var fe *sweep.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a *FailedError", err)
	}
	if len(fe.Tasks) != 2 || fe.Tasks[0].Index != 1 || fe.Tasks[1].Index != 2 {
		t.Fatalf("failed tasks %+v, want 1 and 2", fe.Tasks)
	}
	if !strings.Contains(fe.Tasks[1].Error, "boom in task 2") || !strings.Contains(fe.Tasks[1].StderrTail, "boom in task 2") {
		t.Errorf("task 2's failure: %q, stderr %q", fe.Tasks[1].Error, fe.Tasks[1].StderrTail)
	}
	if !strings.Contains(fe.Tasks[0].Error, "exit status 1") && !strings.Contains(fe.Tasks[0].Error, "ExitCode=1:0") {
		t.Errorf("task 1's failure: %q", fe.Tasks[0].Error)
	}
	if !strings.Contains(err.Error(), "task 1 (n=1)") || !strings.Contains(err.Error(), "task 2 (n=2)") {
		t.Errorf("error text %q", err)
	}
	for _, i := range []int{1, 2, 3} {
		if a := taskState(t, dir, i).Attempt; a != 2 {
			t.Errorf("task %d ran %d times, want 2 (one retry)", i, a)
		}
	}
	if r := resultOf(t, dir, 3); r.Status != sweep.StatusDone || r.Values[0].Value != 9 {
		t.Errorf("task 3 after its retry: %+v", r)
	}
	st, err := sweep.ReadStatus(dir)
	if err != nil || st.Done != 3 || st.Failed != 2 {
		t.Errorf("status %v, %v", st, err)
	}
}

const slowScript = `import "time"

if sweep.Int("n") == 0 && sweep.Attempt() == 1 {
	select {
	case <-ctx.Done():
		panic(ctx.Err())
	case <-time.After(2 * time.Minute):
	}
}
sweep.Record("m", float64(sweep.Int("n")))
`

// testKillTask: a task killed for good (SIGKILL, scancel) fails the run;
// running the sweep again completes it and reruns nothing else.
func testKillTask(t *testing.T, b backendCase) {
	dir := t.TempDir()
	grid := `{"axes": [{"name": "n", "values": [0, 1, 2]}]}`
	script := slowScript
	go func() {
		waitFor(t, "task 0 to start", 2*time.Minute, func() bool { return fileExists(filepath.Join(dir, "tasks", "0", "state.json")) })
		time.Sleep(time.Second) // let it reach its script
		b.kill(t, dir, 0)
	}()
	_, err := runSweep(t, context.Background(), b, dir, script, grid, nil)
	var fe *sweep.FailedError
	if !errors.As(err, &fe) || len(fe.Tasks) != 1 || fe.Tasks[0].Index != 0 {
		t.Fatalf("error %v, want task 0 failed", err)
	}
	t.Logf("%s: killed task reported as: %s", b.name, fe.Tasks[0].Error)
	tab, err := runSweep(t, context.Background(), b, dir, script, grid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Done().Rows) != 3 || resultOf(t, dir, 0).Attempt != 2 || resultOf(t, dir, 1).Attempt != 1 || resultOf(t, dir, 2).Attempt != 1 {
		t.Errorf("after the rerun: %v; attempts %d %d %d", tab, resultOf(t, dir, 0).Attempt, resultOf(t, dir, 1).Attempt, resultOf(t, dir, 2).Attempt)
	}
}

// trainScript trains for 30 epochs, slowly, checkpointing every epoch,
// and resumes from its checkpoint when it has one. It records the first
// epoch it trained, how many it trained, and a checksum of the weights.
const trainScript = `import (
	"os"
	"time"
	"gonum.org/v1/gonum/mat"
)

ck := sweep.Checkpoint("train.ckpt")
set, _ := data.BarsAndStripes(3)
m := rbm.New(rbm.Binary(9), rbm.Binary(6), rbm.Seed(3), rbm.WeightScale(0.1))
first, trained := 0, 0
o := train.Options{Batch: 7, Epochs: 30, LR: 0.05, Seed: 5, Checkpoint: ck,
	Monitor: train.Monitor{ReconEvery: -1},
	OnEpoch: func(r train.Record) bool {
		if first == 0 {
			first = r.Epoch
		}
		trained++
		time.Sleep(100 * time.Millisecond)
		return true
	}}
var err error
if _, statErr := os.Stat(ck); statErr == nil {
	_, err = train.Resume(ctx, m, set, train.PCD{Chains: 16}, train.SGD{}, o)
} else {
	_, err = train.Fit(ctx, m, set, train.PCD{Chains: 16}, train.SGD{}, o)
}
if err != nil {
	panic(err)
}
sweep.Record("first_epoch", float64(first))
sweep.Record("epochs_trained", float64(trained))
sweep.Record("sumW", mat.Sum(m.W))
`

// testResume: a training task interrupted (requeued, preempted) after a
// few epochs resumes from its checkpoint: it does not redo the epochs
// done, and ends with the weights of an uninterrupted run (task 1, same
// seeds).
func testResume(t *testing.T, b backendCase) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "tasks", "0", "train.ckpt")
	go func() {
		waitFor(t, "task 0's first checkpoint", 2*time.Minute, func() bool { return fileExists(ck) })
		time.Sleep(300 * time.Millisecond)
		b.interrupt(t, dir, 0)
	}()
	tab, err := runSweep(t, context.Background(), b, dir, trainScript, `{"axes": [{"name": "copy", "values": [0, 1]}]}`,
		func(o *sweep.Options) { o.Retries = b.retriesForInterrupt })
	if err != nil {
		t.Fatal(err)
	}
	r0, r1 := resultOf(t, dir, 0), resultOf(t, dir, 1)
	vals := func(r sweep.Result) map[string]float64 {
		m := map[string]float64{}
		for _, v := range r.Values {
			m[v.Name] = v.Value
		}
		return m
	}
	v0, v1 := vals(r0), vals(r1)
	t.Logf("%s: interrupted task resumed at epoch %v, trained %v epochs in its last attempt (attempt %d)", b.name, v0["first_epoch"], v0["epochs_trained"], r0.Attempt)
	if r0.Attempt < 2 {
		t.Fatalf("task 0 ran once (attempt %d): the interrupt came too late", r0.Attempt)
	}
	if v0["first_epoch"] <= 1 || v0["first_epoch"]+v0["epochs_trained"]-1 != 30 {
		t.Errorf("task 0's last attempt trained epochs %v to %v: it did not resume from its checkpoint", v0["first_epoch"], v0["first_epoch"]+v0["epochs_trained"]-1)
	}
	if v1["first_epoch"] != 1 || v1["epochs_trained"] != 30 || r1.Attempt != 1 {
		t.Errorf("task 1 (uninterrupted): %v, attempt %d", v1, r1.Attempt)
	}
	if v0["sumW"] != v1["sumW"] {
		t.Errorf("resumed run's Σw = %v, uninterrupted %v", v0["sumW"], v1["sumW"])
	}
	if len(tab.Done().Rows) != 2 {
		t.Errorf("table %v", tab)
	}
}

func TestLocalComplete(t *testing.T) { testComplete(t, localCase) }
func TestLocalFailures(t *testing.T) { testFailures(t, localCase) }
func TestLocalKillTask(t *testing.T) { testKillTask(t, localCase) }
func TestLocalResume(t *testing.T)   { testResume(t, localCase) }

func TestSlurmFailures(t *testing.T) { slurmCase.setup(t); testFailures(t, slurmCase) }
func TestSlurmKillTask(t *testing.T) { slurmCase.setup(t); testKillTask(t, slurmCase) }
func TestSlurmResume(t *testing.T)   { slurmCase.setup(t); testResume(t, slurmCase) }

// The same sweep on Slurm completes and gives the local backend's numbers
// exactly.
func TestSlurmCompleteSameAsLocal(t *testing.T) {
	slurmCase.setup(t)
	start := time.Now()
	s := testComplete(t, slurmCase)
	t.Logf("cluster started in %v; the sweep took %v", cluster.started, time.Since(start))
	l := testComplete(t, localCase)
	for k := range s.Rows {
		for _, name := range s.Results {
			if s.Rows[k].Values[name] != l.Rows[k].Values[name] {
				t.Errorf("row %d %s: Slurm %v, local %v", k, name, s.Rows[k].Values[name], l.Rows[k].Values[name])
			}
		}
	}
}

// kill -9 of the driver mid-sweep, then a resume: no finished task is lost
// or run again.
func TestLocalKillDriver(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "s.go")
	os.WriteFile(script, []byte(`import "time"

time.Sleep(300 * time.Millisecond)
sweep.Record("sq", float64(sweep.Int("n")*sweep.Int("n")))
`), 0o644)
	grid := `{"axes": [{"name": "n", "range": {"from": 0, "to": 7}}]}`
	drv := exec.Command(taskCommand()[0], "sweep-drive", dir, script, grid)
	drv.Stderr = os.Stderr
	if err := drv.Start(); err != nil {
		t.Fatal(err)
	}
	finished := func() map[int][]byte {
		out := map[int][]byte{}
		for i := range 8 {
			if b, err := os.ReadFile(filepath.Join(dir, "tasks", strconv.Itoa(i), "result.json")); err == nil && strings.Contains(string(b), `"done"`) {
				out[i] = b
			}
		}
		return out
	}
	if !waitFor(t, "two finished tasks", 2*time.Minute, func() bool { return len(finished()) >= 2 }) {
		drv.Process.Kill()
		return
	}
	drv.Process.Kill()
	drv.Wait()
	before := finished()
	if len(before) == 8 {
		t.Fatal("the sweep finished before the driver was killed")
	}
	g, _ := sweep.ParseGrid([]byte(grid))
	tab, err := sweep.Run(context.Background(), sweep.Options{Dir: dir, Script: script, Grid: g, Command: taskCommand()})
	if err != nil {
		t.Fatal(err)
	}
	after := finished()
	for i, b := range before {
		if string(after[i]) != string(b) {
			t.Errorf("task %d, done before the kill, changed:\n%s\n%s", i, b, after[i])
		}
	}
	for k, r := range tab.Rows {
		if r.Values["sq"] != float64(k*k) {
			t.Errorf("row %d: %+v", k, r)
		}
	}
	t.Logf("%d of 8 tasks were done when the driver was killed", len(before))
}

// Cancelling the context (Ctrl-C, the notebook's interrupt) stops a local
// sweep promptly and leaves it resumable.
func TestLocalInterrupt(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, "task 0 to start", 2*time.Minute, func() bool { return fileExists(filepath.Join(dir, "tasks", "0", "state.json")) })
		time.Sleep(time.Second)
		cancel()
	}()
	grid := `{"axes": [{"name": "n", "values": [0, 1]}]}`
	_, err := runSweep(t, ctx, localCase, dir, slowScript, grid, func(o *sweep.Options) { o.Jobs = 1 })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if r := resultOf(t, dir, 0); r.Status != sweep.StatusInterrupted {
		t.Errorf("task 0: %s, want interrupted", r.Status)
	}
	tab, err := runSweep(t, context.Background(), localCase, dir, slowScript, grid, nil)
	if err != nil || len(tab.Done().Rows) != 2 {
		t.Fatalf("resume: %v\n%v", err, tab)
	}
}

// A changed script or grid is refused unless forced.
func TestChangedPlan(t *testing.T) {
	dir := t.TempDir()
	grid := `{"axes": [{"name": "n", "values": [5]}]}`
	script := `sweep.Record("m", float64(sweep.Int("n")))`
	if _, err := runSweep(t, context.Background(), localCase, dir, script, grid, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := runSweep(t, context.Background(), localCase, dir, script+"\n", grid, nil); err == nil || !strings.Contains(err.Error(), "different script") {
		t.Errorf("changed script: %v", err)
	}
	grid2 := `{"axes": [{"name": "n", "values": [5, 6]}]}`
	if _, err := runSweep(t, context.Background(), localCase, dir, script, grid2, nil); err == nil || !strings.Contains(err.Error(), "different grid") {
		t.Errorf("changed grid: %v", err)
	}
	tab, err := runSweep(t, context.Background(), localCase, dir, script, grid2, func(o *sweep.Options) { o.Force = true })
	if err != nil || len(tab.Done().Rows) != 2 || tab.Rows[1].Values["m"] != 6 {
		t.Errorf("forced: %v\n%v", err, tab)
	}
}

// sweep.Cancel (harmonium sweep cancel DIR), from another process, stops a
// running local sweep; it resumes afterwards.
func TestLocalCancel(t *testing.T) {
	dir := t.TempDir()
	go func() {
		waitFor(t, "task 0 to start", 2*time.Minute, func() bool { return fileExists(filepath.Join(dir, "tasks", "0", "state.json")) })
		time.Sleep(time.Second)
		if err := sweep.Cancel(context.Background(), dir); err != nil {
			t.Error(err)
		}
	}()
	grid := `{"axes": [{"name": "n", "values": [0, 1]}]}`
	_, err := runSweep(t, context.Background(), localCase, dir, slowScript, grid, func(o *sweep.Options) { o.Jobs = 1 })
	if err == nil || !strings.Contains(err.Error(), "was cancelled") {
		t.Fatalf("error %v, want a cancellation", err)
	}
	tab, err := runSweep(t, context.Background(), localCase, dir, slowScript, grid, nil)
	if err != nil || len(tab.Done().Rows) != 2 {
		t.Fatalf("resume: %v\n%v", err, tab)
	}
}

// A notebook attaches to a sweep that another process (the command line)
// runs: Watch follows it to the end and returns its table.
func TestWatchAnotherDriver(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "s.go")
	os.WriteFile(script, []byte(`import "time"

time.Sleep(200 * time.Millisecond)
sweep.Record("sq", float64(sweep.Int("n")*sweep.Int("n")))
`), 0o644)
	drv := exec.Command(taskCommand()[0], "sweep-drive", dir, script, `{"axes": [{"name": "n", "range": {"from": 0, "to": 5}}]}`)
	drv.Stderr = os.Stderr
	if err := drv.Start(); err != nil {
		t.Fatal(err)
	}
	defer drv.Wait()
	if !waitFor(t, "the sweep's manifest", time.Minute, func() bool { return fileExists(filepath.Join(dir, "manifest.json")) }) {
		return
	}
	var seen []sweep.Status
	tab, err := sweep.Watch(context.Background(), dir, 100*time.Millisecond, func(s sweep.Status) { seen = append(seen, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Done().Rows) != 6 || tab.Rows[5].Values["sq"] != 25 {
		t.Errorf("watched table:\n%v", tab)
	}
	if len(seen) < 2 || seen[0].Done == 6 || seen[len(seen)-1].Done != 6 {
		t.Errorf("progress seen: %v", seen)
	}
}

// kill -9 of a Slurm driver: its job array runs on; a new driver follows
// the tasks still queued or running instead of submitting them again, so
// every task runs once.
func TestSlurmKillDriver(t *testing.T) {
	slurmCase.setup(t)
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "s.go")
	os.WriteFile(script, []byte(`import "time"

time.Sleep(time.Second)
sweep.Record("sq", float64(sweep.Int("n")*sweep.Int("n")))
`), 0o644)
	grid := `{"axes": [{"name": "n", "range": {"from": 0, "to": 5}}]}`
	drv := exec.Command(taskCommand()[0], "sweep-drive", dir, script, grid, sweep.Slurm)
	drv.Stderr = os.Stderr
	if err := drv.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, "a task to start", 2*time.Minute, func() bool { return fileExists(filepath.Join(dir, "tasks", "0", "state.json")) }) {
		drv.Process.Kill()
		return
	}
	drv.Process.Kill()
	drv.Wait()
	g, _ := sweep.ParseGrid([]byte(grid))
	tab, err := sweep.Run(context.Background(), sweep.Options{Dir: dir, Script: script, Grid: g, Command: taskCommand(), Backend: sweep.Slurm, Poll: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range tab.Rows {
		if r.Values["sq"] != float64(i*i) || resultOf(t, dir, i).Attempt != 1 {
			t.Errorf("task %d: %+v, attempt %d (want 1: adopted, not resubmitted)", i, r, resultOf(t, dir, i).Attempt)
		}
	}
	var jobs []struct{ ID string }
	b, _ := os.ReadFile(filepath.Join(dir, "slurm", "jobs.json"))
	if err := json.Unmarshal(b, &jobs); err != nil || len(jobs) != 1 {
		t.Errorf("jobs submitted: %s (%v), want the one array", b, err)
	}
}

// sweep.Cancel (harmonium sweep cancel DIR) cancels the sweep's jobs and
// stops its driver.
func TestSlurmCancel(t *testing.T) {
	slurmCase.setup(t)
	dir := t.TempDir()
	go func() {
		if waitFor(t, "task 0 to start", 2*time.Minute, func() bool { return fileExists(filepath.Join(dir, "tasks", "0", "state.json")) }) {
			if err := sweep.Cancel(context.Background(), dir); err != nil {
				t.Error(err)
			}
		}
	}()
	_, err := runSweep(t, context.Background(), slurmCase, dir, slowScript, `{"axes": [{"name": "n", "values": [0, 1]}]}`, nil)
	if err == nil || !strings.Contains(err.Error(), "was cancelled") {
		t.Fatalf("error %v, want a cancellation", err)
	}
	waitFor(t, "the jobs to end", time.Minute, func() bool {
		out, _ := exec.Command("squeue", "-h", "-n", "harmonium-sweep", "-t", "PENDING,RUNNING,COMPLETING").Output()
		return strings.TrimSpace(string(out)) == ""
	})
}
