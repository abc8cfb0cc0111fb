package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long an interrupted task may take to stop (save a
// checkpoint) before it is killed.
const stopGrace = 30 * time.Second

// local runs each task as a child process, jobs at a time. A child runs in
// its own process group (so a crash takes only it down, and the driver
// decides when to interrupt it) and is sent SIGTERM if the driver dies.
type local struct {
	dir     string
	command []string
	threads int

	mu      sync.Mutex
	queue   []int
	fates   map[int]fate
	procs   map[int]*os.Process
	started bool
	wake    chan struct{}
	stopped chan struct{}
	wg      sync.WaitGroup
	jobs    int
}

func newLocal(dir string, command []string, jobs, threads int) *local {
	return &local{dir: dir, command: command, jobs: jobs, threads: threads,
		fates: map[int]fate{}, procs: map[int]*os.Process{}, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

func (l *local) interval() time.Duration { return 100 * time.Millisecond }

// adopt finds nothing: a previous driver's children got SIGTERM when it
// died; their task locks make a rerun wait until they have stopped.
func (l *local) adopt(context.Context) ([]int, error) { return nil, nil }

func (l *local) launch(ctx context.Context, tasks []int) error {
	l.mu.Lock()
	for _, i := range tasks {
		l.queue = append(l.queue, i)
		l.fates[i] = fate{phase: queued}
	}
	start := !l.started
	l.started = true
	l.mu.Unlock()
	if start {
		for range l.jobs {
			l.wg.Add(1)
			go l.worker()
		}
	}
	for range tasks {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// worker runs queued tasks one after the other until stop.
func (l *local) worker() {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.mu.Unlock()
			select {
			case <-l.stopped:
				return
			case <-l.wake:
				continue
			case <-time.After(100 * time.Millisecond):
				continue
			}
		}
		select {
		case <-l.stopped:
			l.mu.Unlock()
			return
		default:
		}
		i := l.queue[0]
		l.queue = l.queue[1:]
		l.fates[i] = fate{phase: active}
		l.mu.Unlock()
		detail := l.runTask(i)
		l.mu.Lock()
		l.fates[i] = fate{phase: ended, detail: detail}
		l.mu.Unlock()
	}
}

// runTask runs task i's process and describes how it ended.
func (l *local) runTask(i int) string {
	tdir := taskDir(l.dir, i)
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return err.Error()
	}
	stdout, err := os.OpenFile(filepath.Join(tdir, stdoutFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err.Error()
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(filepath.Join(tdir, stderrFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err.Error()
	}
	defer stderr.Close()
	args := append(append([]string{}, l.command[1:]...), l.dir, strconv.Itoa(i))
	cmd := exec.Command(l.command[0], args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(os.Environ(), threadEnv(l.threads)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	l.mu.Lock()
	select {
	case <-l.stopped:
		l.mu.Unlock()
		return "not started: the sweep was interrupted"
	default:
	}
	err = cmd.Start()
	if err == nil {
		l.procs[i] = cmd.Process
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Sprintf("starting %s: %v", l.command[0], err)
	}
	err = cmd.Wait()
	l.mu.Lock()
	delete(l.procs, i)
	l.mu.Unlock()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String() // "exit status 1", "signal: killed"
	}
	return err.Error()
}

// threadEnv limits a task to n threads.
func threadEnv(n int) []string {
	s := strconv.Itoa(n)
	return []string{"GOMAXPROCS=" + s, "OPENBLAS_NUM_THREADS=" + s}
}

func (l *local) poll(context.Context) (map[int]fate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]fate, len(l.fates))
	for i, f := range l.fates {
		out[i] = f
		if f.phase == ended {
			delete(l.fates, i)
		}
	}
	return out, nil
}

// stop interrupts the running tasks (SIGTERM to their process groups: the
// script's ctx is cancelled, a trainer saves its checkpoint), kills those
// still running after stopGrace, and waits for them.
func (l *local) stop() string {
	l.mu.Lock()
	close(l.stopped)
	l.queue = nil
	for _, p := range l.procs {
		syscall.Kill(-p.Pid, syscall.SIGTERM)
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
		l.mu.Lock()
		for _, p := range l.procs {
			syscall.Kill(-p.Pid, syscall.SIGKILL)
		}
		l.mu.Unlock()
		<-done
	}
	return "run it again to resume"
}
