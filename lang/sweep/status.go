package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ReadStatus reads the state of the sweep in dir from its files: each task
// is done, failed or interrupted (its result file says so; a later attempt
// that has started makes it running again), running (an attempt holds its
// lock) or pending. It works while a driver runs the sweep, from any
// process, and needs no scheduler.
func ReadStatus(dir string) (Status, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return Status{}, err
	}
	st := Status{Dir: dir, Total: len(m.Tasks), ETA: -1}
	for i := range m.Tasks {
		ts := taskStatus(dir, i, m.Tasks[i])
		switch ts.State {
		case StatusDone:
			st.Done++
		case StatusFailed, StatusInterrupted:
			st.Failed++
		case "running":
			st.Running++
		default:
			st.Queued++
		}
		st.Tasks = append(st.Tasks, ts)
	}
	return st, nil
}

// taskStatus reads one task's state from its files.
func taskStatus(dir string, i int, p Params) TaskStatus {
	ts := TaskStatus{Index: i, State: "pending", Params: p}
	tdir := taskDir(dir, i)
	var state taskState
	hasState := readJSON(filepath.Join(tdir, stateFile), &state) == nil
	ts.Attempt = state.Attempt
	r, err := readResult(dir, i)
	if err == nil && r.Status == StatusDone {
		ts.State = StatusDone
		return ts
	}
	if locked(filepath.Join(tdir, lockFile)) {
		ts.State = "running"
		return ts
	}
	if err == nil && (!hasState || r.Attempt >= state.Attempt) {
		ts.State, ts.Error = r.Status, r.Error
		ts.StderrTail = tail(filepath.Join(tdir, stderrFile), 10)
		return ts
	}
	if hasState {
		// An attempt started and left no result: it was killed.
		ts.State = StatusFailed
		ts.Error = fmt.Sprintf("attempt %d (pid %d on %s) ended without a result", state.Attempt, state.PID, state.Host)
		ts.StderrTail = tail(filepath.Join(tdir, stderrFile), 10)
	}
	return ts
}

// locked reports whether another process holds the lock file path.
func locked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// Cancel stops the sweep in dir: it asks the driver running it (local or
// Slurm, in any process) to stop its tasks, and cancels the sweep's Slurm
// jobs. Finished tasks are kept; `sweep run` again resumes.
func Cancel(ctx context.Context, dir string) error {
	if _, err := ReadManifest(dir); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, cancelFile), []byte(time.Now().UTC().Format(time.RFC3339)+"\n")); err != nil {
		return err
	}
	return cancelSlurm(ctx, dir)
}

// Watch follows a sweep that another process runs (a `harmonium sweep run`
// started from the command line, say), showing its progress like Run, until
// every task has finished or failed, or ctx is cancelled; it then returns
// the table of what is done. every is the time between looks (0 means 2 s).
func Watch(ctx context.Context, dir string, every time.Duration, progress func(Status)) (*Table, error) {
	if every <= 0 {
		every = 2 * time.Second
	}
	r := newReporter(dir, progress)
	start := time.Now()
	first := -1
	for {
		st, err := ReadStatus(dir)
		if err != nil {
			return nil, err
		}
		if first < 0 {
			first = st.Done
		}
		st.Elapsed, st.ETA = time.Since(start), -1
		if k := st.Done - first; k > 0 {
			st.ETA = time.Duration(float64(st.Elapsed) / float64(k) * float64(st.Total-st.Done-st.Failed))
		}
		st.Tasks = nil
		if st.Running == 0 && st.Queued == 0 || !driverRunning(dir) && st.Running == 0 {
			r.finish(st)
			return Collect(dir)
		}
		r.update(st)
		select {
		case <-ctx.Done():
			t, err := Collect(dir)
			return t, errors.Join(ctx.Err(), err)
		case <-time.After(every):
		}
	}
}

// driverRunning reports whether a driver holds dir's lock.
func driverRunning(dir string) bool { return locked(filepath.Join(dir, driverLock)) }
