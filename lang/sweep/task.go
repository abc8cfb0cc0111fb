package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Task outcomes in a Result.
const (
	StatusDone        = "done"        // the script ran to its end
	StatusFailed      = "failed"      // the script returned an error or panicked
	StatusInterrupted = "interrupted" // the task was stopped (signal, cancel, requeue)
)

// Result is what a task leaves in DIR/tasks/I/result.json when its script
// ends, written atomically.
type Result struct {
	Index  int    `json:"index"`
	Status string `json:"status"`
	Params Params `json:"params"`
	// Values are the scalars the script recorded, in recording order.
	Values []Value `json:"results"`
	// Files lists the files the script asked for with File and wrote
	// (relative to the task's directory).
	Files []string `json:"files,omitempty"`
	// Error is the script's error when Status is not done.
	Error string `json:"error,omitempty"`
	// Attempt counts the runs of this task (1 for the first).
	Attempt  int       `json:"attempt"`
	Host     string    `json:"host"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

// Value is one recorded scalar. In JSON, NaN and ±Inf are the strings
// "NaN", "+Inf" and "-Inf".
type Value struct {
	Name  string
	Value float64
}

type jsonValue struct {
	Name  string    `json:"name"`
	Value jsonFloat `json:"value"`
}

// MarshalJSON implements json.Marshaler.
func (v Value) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonValue{v.Name, jsonFloat(v.Value)})
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Value) UnmarshalJSON(b []byte) error {
	var j jsonValue
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*v = Value{j.Name, float64(j.Value)}
	return nil
}

// taskState is DIR/tasks/I/state.json, written when an attempt starts.
type taskState struct {
	Attempt int       `json:"attempt"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Job is the Slurm array task running the attempt, "JOBID_TASK".
	Job string `json:"job,omitempty"`
}

// ScriptFunc runs a script's text (named path in messages) to its end,
// writing its output to stdout and stderr, and returns its error (nil when
// every cell succeeded). lang.RunScript is one.
type ScriptFunc func(ctx context.Context, path string, src []byte, stdout, stderr io.Writer) error

// task is the running task of this process, read by Int, Record, ….
type task struct {
	mu     sync.Mutex
	dir    string // the task's own directory
	index  int
	params Params
	values []Value
	files  []string
	try    int
}

var (
	currentMu sync.Mutex
	current   *task
)

// ExecTask runs task i of the sweep in dir in this process: what
// `harmonium sweep task DIR I` does on a node. It runs DIR/script.go with
// run, in the sweep's working directory, with the task's parameters
// available through Int, Float, String and Bool, and writes
// DIR/tasks/I/result.json. Two processes given the same task take turns
// (a lock file); a task already done is not run again. The error is the
// script's (or why it could not start); cancelling ctx interrupts it.
func ExecTask(ctx context.Context, dir string, i int, run ScriptFunc) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	if i < 0 || i >= len(m.Tasks) {
		return fmt.Errorf("sweep: %s: task %d does not exist (the sweep has tasks 0 to %d)", dir, i, len(m.Tasks)-1)
	}
	src, err := os.ReadFile(filepath.Join(dir, scriptFile))
	if err != nil {
		return fmt.Errorf("sweep: %s: task %d: %w", dir, i, err)
	}
	tdir, err := filepath.Abs(taskDir(dir, i))
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return fmt.Errorf("sweep: %s: task %d: %w", dir, i, err)
	}
	lf, err := lockFileWait(ctx, filepath.Join(tdir, lockFile))
	if err != nil {
		return fmt.Errorf("sweep: %s: task %d: %w", dir, i, err)
	}
	defer lf.Close()
	var prev Result
	if readJSON(filepath.Join(tdir, resultFile), &prev) == nil && prev.Status == StatusDone {
		return nil
	}
	var st taskState
	_ = readJSON(filepath.Join(tdir, stateFile), &st) // absent on the first attempt
	host, _ := os.Hostname()
	st = taskState{Attempt: st.Attempt + 1, Host: host, PID: os.Getpid(), Started: time.Now().UTC()}
	if j := os.Getenv("SLURM_ARRAY_JOB_ID"); j != "" {
		st.Job = j + "_" + os.Getenv("SLURM_ARRAY_TASK_ID")
	}
	if err := writeJSON(filepath.Join(tdir, stateFile), st); err != nil {
		return err
	}
	t := &task{dir: tdir, index: i, params: m.Tasks[i], try: st.Attempt}
	currentMu.Lock()
	current = t
	currentMu.Unlock()
	defer func() {
		currentMu.Lock()
		current = nil
		currentMu.Unlock()
	}()
	wd, _ := os.Getwd()
	if m.Workdir != "" {
		if err := os.Chdir(m.Workdir); err != nil {
			return fmt.Errorf("sweep: %s: task %d: working directory: %w", dir, i, err)
		}
		defer os.Chdir(wd)
	}
	runErr := run(ctx, filepath.Join(dir, scriptFile), src, os.Stdout, os.Stderr)

	t.mu.Lock()
	res := Result{Index: i, Status: StatusDone, Params: t.params, Values: t.values, Attempt: st.Attempt, Host: host,
		Started: st.Started, Finished: time.Now().UTC()}
	for _, f := range t.files {
		if _, err := os.Stat(filepath.Join(tdir, f)); err == nil {
			res.Files = append(res.Files, f)
		}
	}
	t.mu.Unlock()
	if runErr != nil {
		res.Status, res.Error = StatusFailed, runErr.Error()
		if ctx.Err() != nil {
			res.Status = StatusInterrupted
		}
	}
	if err := writeJSON(filepath.Join(tdir, resultFile), res); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		return fmt.Errorf("sweep: %s: task %d: %w", dir, i, runErr)
	}
	return nil
}

// lockFileWait takes an exclusive lock on path, waiting while another
// process holds it, and returns the open lock file: closing it releases the
// lock.
func lockFileWait(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// running returns the current task; the script API panics outside one.
func running(fn, name string) *task {
	currentMu.Lock()
	defer currentMu.Unlock()
	if current == nil {
		panic(fmt.Sprintf("sweep.%s(%q): not in a sweep task (scripts run by `harmonium sweep run` or sweep.Run get their parameters)", fn, name))
	}
	return current
}

func (t *task) param(fn, name string) any {
	v, ok := t.params[name]
	if !ok {
		names := make([]string, 0, len(t.params))
		for k := range t.params {
			names = append(names, k)
		}
		sort.Strings(names)
		panic(fmt.Sprintf("sweep.%s(%q): task %d has no parameter %q (it has %s)", fn, name, t.index, name, strings.Join(names, ", ")))
	}
	return v
}

// Int returns the task's integer parameter name; a float with an integer
// value is accepted. It panics (failing the task, with a message naming
// the parameter) when the parameter is missing or not an integer.
func Int(name string) int {
	t := running("Int", name)
	switch v := t.param("Int", name).(type) {
	case int64:
		return int(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int(v)
		}
	}
	panic(fmt.Sprintf("sweep.Int(%q): task %d's value %v is not an integer", name, t.index, t.params[name]))
}

// Float returns the task's numeric parameter name (an int converts).
func Float(name string) float64 {
	t := running("Float", name)
	switch v := t.param("Float", name).(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("sweep.Float(%q): task %d's value %v is not a number", name, t.index, t.params[name]))
}

// String returns the task's string parameter name.
func String(name string) string {
	t := running("String", name)
	if v, ok := t.param("String", name).(string); ok {
		return v
	}
	panic(fmt.Sprintf("sweep.String(%q): task %d's value %v is not a string", name, t.index, t.params[name]))
}

// Bool returns the task's boolean parameter name.
func Bool(name string) bool {
	t := running("Bool", name)
	if v, ok := t.param("Bool", name).(bool); ok {
		return v
	}
	panic(fmt.Sprintf("sweep.Bool(%q): task %d's value %v is not a boolean", name, t.index, t.params[name]))
}

// Index returns the running task's index in the sweep.
func Index() int { return running("Index", "").index }

// Attempt returns which run of the task this is: 1 the first time, more
// after a failure, a cancellation or a requeue.
func Attempt() int { return running("Attempt", "").try }

// Record records the scalar result name = v for the running task (a column
// of the sweep's table). Recording a name again replaces its value; a
// parameter's name cannot be a result's.
func Record(name string, v float64) {
	t := running("Record", name)
	if _, ok := t.params[name]; ok {
		panic(fmt.Sprintf("sweep.Record(%q): %q is a parameter; give the result another name", name, name))
	}
	if name == "" {
		panic("sweep.Record(\"\"): empty name")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.values {
		if t.values[k].Name == name {
			t.values[k].Value = v
			return
		}
	}
	t.values = append(t.values, Value{Name: name, Value: v})
}

// File returns the path of an output file name in the task's own directory
// (DIR/tasks/I/name) for the script to write, e.g. a saved model; if it
// exists when the script ends it is listed in the task's result.
func File(name string) string {
	t := running("File", name)
	if err := checkFileName(name); err != nil {
		panic(fmt.Sprintf("sweep.File(%q): %v", name, err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !containsString(t.files, name) {
		t.files = append(t.files, name)
	}
	return filepath.Join(t.dir, name)
}

// Checkpoint returns the path of a checkpoint file name in the task's own
// directory. It survives a failed, cancelled or requeued attempt, so a
// long task saves its state there and, when the file exists, resumes from
// it:
//
//	ck := sweep.Checkpoint("train.ckpt")
//	o := train.Options{Epochs: 500, Checkpoint: ck}
//	if _, err := os.Stat(ck); err == nil {
//		hist, err = train.Resume(ctx, m, set, train.PCD{}, train.Adam{}, o) // a requeued task goes on
//	} else {
//		hist, err = train.Fit(ctx, m, set, train.PCD{}, train.Adam{}, o)
//	}
func Checkpoint(name string) string {
	t := running("Checkpoint", name)
	if err := checkFileName(name); err != nil {
		panic(fmt.Sprintf("sweep.Checkpoint(%q): %v", name, err))
	}
	return filepath.Join(t.dir, name)
}

// checkFileName refuses names that would leave the task's directory or
// overwrite its bookkeeping.
func checkFileName(name string) error {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return errors.New("want a plain file name (no directory)")
	}
	switch name {
	case resultFile, stateFile, stdoutFile, stderrFile, lockFile:
		return fmt.Errorf("%s is the sweep's own file", name)
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
