package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// slurmDir holds the Slurm backend's batch scripts and its job list.
const (
	slurmDir  = "slurm"
	jobsFile  = "jobs.json"
	slurmWait = 2 * time.Second
)

// slurmJob is one submitted job array and the task indices it runs.
type slurmJob struct {
	ID    string `json:"id"`
	Tasks []int  `json:"tasks"`
}

// activeStates are the Slurm job states of a task that may still run.
var activeStates = map[string]phase{
	"PENDING": queued, "REQUEUED": queued, "REQUEUE_HOLD": queued, "REQUEUE_FED": queued,
	"RESV_DEL_HOLD": queued, "SUSPENDED": queued, "STOPPED": queued,
	"CONFIGURING": active, "RUNNING": active, "COMPLETING": active, "RESIZING": active,
	"SIGNALING": active, "STAGE_OUT": active,
}

// slurm submits tasks as job arrays (sbatch) and follows them with squeue
// and scontrol. It remembers its jobs in DIR/slurm/jobs.json, so a
// restarted driver (or sweep cancel) finds them.
type slurm struct {
	dir     string
	command []string
	jobs    int // %K throttle, 0 none
	threads int
	extra   []string
	every   time.Duration

	latest  map[int]string    // task -> job id of its latest submission
	follow  map[int]bool      // tasks followed and not yet reported ended
	seen    map[int]bool      // tasks squeue has listed since their submission
	endedAt map[int]time.Time // when a task not done was first seen ended
}

// requeueGrace is how long a task that ended without a result stays
// followed: a requeued or preempted task shows a final state (FAILED,
// PREEMPTED) for a moment before Slurm makes it PENDING again.
const requeueGrace = 5 * time.Second

func (s *slurm) interval() time.Duration {
	if s.every > 0 {
		return s.every
	}
	return slurmWait
}

func (s *slurm) init() {
	if s.latest == nil {
		s.latest, s.follow, s.seen, s.endedAt = map[int]string{}, map[int]bool{}, map[int]bool{}, map[int]time.Time{}
	}
}

// readJobs reads DIR/slurm/jobs.json (none yet is no error).
func readJobs(dir string) ([]slurmJob, error) {
	var jobs []slurmJob
	err := readJSON(filepath.Join(dir, slurmDir, jobsFile), &jobs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return jobs, err
}

func (s *slurm) adopt(ctx context.Context) ([]int, error) {
	s.init()
	jobs, err := readJobs(s.dir)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	for _, j := range jobs {
		for _, i := range j.Tasks {
			s.latest[i] = j.ID
		}
	}
	states, err := s.squeue(ctx, jobs)
	if err != nil {
		return nil, err
	}
	var out []int
	for i, id := range s.latest {
		if st, ok := states[id+"_"+strconv.Itoa(i)]; ok {
			if _, alive := activeStates[st]; alive {
				out = append(out, i)
				s.follow[i], s.seen[i] = true, true
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

func (s *slurm) launch(ctx context.Context, tasks []int) error {
	s.init()
	if len(tasks) == 0 {
		return nil
	}
	jobs, err := readJobs(s.dir)
	if err != nil {
		return err
	}
	sdir := filepath.Join(s.dir, slurmDir)
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for _, i := range tasks {
		if err := os.MkdirAll(taskDir(s.dir, i), 0o755); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	script := filepath.Join(sdir, fmt.Sprintf("job-%d.sh", len(jobs)+1))
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# A harmonium sweep: array task i runs task i of the sweep.\n")
	for _, e := range threadEnv(s.threads) {
		b.WriteString("export " + e + "\n")
	}
	b.WriteString("exec")
	for _, a := range s.command {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(" " + shellQuote(s.dir) + " \"$SLURM_ARRAY_TASK_ID\"\n")
	if err := writeFileAtomic(script, []byte(b.String())); err != nil {
		return err
	}
	array := arraySpec(tasks)
	if s.jobs > 0 {
		array += "%" + strconv.Itoa(s.jobs)
	}
	args := []string{"--parsable", "--job-name=harmonium-sweep", "--array=" + array, "--requeue",
		"--open-mode=append", "--cpus-per-task=" + strconv.Itoa(s.threads),
		"--output=" + filepath.Join(s.dir, tasksDir, "%a", stdoutFile),
		"--error=" + filepath.Join(s.dir, tasksDir, "%a", stderrFile)}
	args = append(append(args, s.extra...), script)
	out, err := runSlurm(ctx, "sbatch", args...)
	if err != nil {
		return fmt.Errorf("sweep: %s: submitting tasks %s: %w", s.dir, array, err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // "ID" or "ID;cluster"
	if _, err := strconv.Atoi(id); err != nil {
		return fmt.Errorf("sweep: %s: sbatch printed %q, not a job id", s.dir, out)
	}
	jobs = append(jobs, slurmJob{ID: id, Tasks: tasks})
	if err := writeJSON(filepath.Join(sdir, jobsFile), jobs); err != nil {
		return err
	}
	for _, i := range tasks {
		s.latest[i], s.follow[i], s.seen[i] = id, true, false
		delete(s.endedAt, i)
	}
	return nil
}

// arraySpec writes task indices as sbatch --array ranges: "0-7,9,12-13".
func arraySpec(tasks []int) string {
	t := append([]int(nil), tasks...)
	sort.Ints(t)
	var parts []string
	for k := 0; k < len(t); {
		j := k
		for j+1 < len(t) && t[j+1] == t[j]+1 {
			j++
		}
		if j == k {
			parts = append(parts, strconv.Itoa(t[k]))
		} else {
			parts = append(parts, strconv.Itoa(t[k])+"-"+strconv.Itoa(t[j]))
		}
		k = j + 1
	}
	return strings.Join(parts, ",")
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// squeue returns the state of every task of the jobs Slurm still lists, by
// "JOBID_TASK".
func (s *slurm) squeue(ctx context.Context, jobs []slurmJob) (map[string]string, error) {
	ids := map[string]bool{}
	var list []string
	for _, j := range jobs {
		if !ids[j.ID] {
			ids[j.ID] = true
			list = append(list, j.ID)
		}
	}
	out, err := runSlurm(ctx, "squeue", "-h", "-r", "-t", "all", "-j", strings.Join(list, ","), "-o", "%F|%K|%T")
	if err != nil {
		// squeue fails for a list of job ids it no longer knows at all.
		if strings.Contains(err.Error(), "Invalid job id") {
			return map[string]string{}, nil
		}
		return nil, err
	}
	states := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 {
			continue
		}
		states[f[0]+"_"+f[1]] = f[2]
	}
	return states, nil
}

func (s *slurm) poll(ctx context.Context) (map[int]fate, error) {
	var jobs []slurmJob
	byID := map[string][]int{}
	for i := range s.follow {
		byID[s.latest[i]] = append(byID[s.latest[i]], i)
	}
	for id, t := range byID {
		jobs = append(jobs, slurmJob{ID: id, Tasks: t})
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	states, err := s.squeue(ctx, jobs)
	if err != nil {
		return nil, err
	}
	out := map[int]fate{}
	for i := range s.follow {
		key := s.latest[i] + "_" + strconv.Itoa(i)
		st, listed := states[key]
		if p, alive := activeStates[st]; listed && alive {
			s.seen[i] = true
			delete(s.endedAt, i)
			out[i] = fate{phase: p}
			continue
		}
		if !listed && !s.seen[i] {
			// Not listed yet, or already gone (MinJobAge); the result file decides.
			if r, err := readResult(s.dir, i); err != nil || r.Status != StatusDone {
				s.seen[i] = true // look once more before calling it lost
				out[i] = fate{phase: queued}
				continue
			}
		}
		f := fate{phase: ended}
		if r, err := readResult(s.dir, i); err != nil || r.Status != StatusDone {
			first, ok := s.endedAt[i]
			if !ok {
				first = time.Now()
				s.endedAt[i] = first
			}
			if time.Since(first) < max(requeueGrace, 2*s.interval()) {
				out[i] = fate{phase: active}
				continue
			}
			f.detail = s.describe(ctx, key, st)
		}
		delete(s.follow, i)
		delete(s.endedAt, i)
		out[i] = f
	}
	return out, nil
}

// describe says how a Slurm task ended: its state and exit code from
// scontrol (or sacct when accounting exists).
func (s *slurm) describe(ctx context.Context, key, state string) string {
	detail := "Slurm job " + key
	if state != "" {
		detail += " " + state
	} else {
		detail += " no longer listed by squeue"
	}
	if out, err := runSlurm(ctx, "scontrol", "-o", "show", "job", key); err == nil {
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, "ExitCode=") || (state == "" && strings.HasPrefix(f, "JobState=")) {
				detail += ", " + f
			}
		}
	} else if out, err := runSlurm(ctx, "sacct", "-n", "-P", "-X", "-j", key, "-o", "State,ExitCode"); err == nil && strings.TrimSpace(out) != "" {
		detail += ", sacct " + strings.TrimSpace(out)
	}
	return detail
}

// stop leaves the jobs to Slurm: they go on without the driver, and a new
// `sweep run` follows them again (sweep cancel stops them).
func (s *slurm) stop() string {
	return "its Slurm jobs keep running: run the sweep again to follow them, or cancel it (harmonium sweep cancel " + s.dir + ")"
}

// runSlurm runs a Slurm command and returns its standard output; the error
// carries its standard error.
func runSlurm(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// cancelSlurm cancels every job a sweep submitted.
func cancelSlurm(ctx context.Context, dir string) error {
	jobs, err := readJobs(dir)
	if err != nil || len(jobs) == 0 {
		return err
	}
	ids := make([]string, len(jobs))
	for k, j := range jobs {
		ids[k] = j.ID
	}
	if _, err := runSlurm(ctx, "scancel", ids...); err != nil {
		return fmt.Errorf("sweep: %s: %w", dir, err)
	}
	return nil
}
