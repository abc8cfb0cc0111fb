// Package sweep runs parameter sweeps: one script in the notebook Go
// dialect (the same interpreter and compiled rbmcore as a cell) run once
// per point of a parameter grid, on the local cores or as a Slurm job
// array, resumable, with the results collected into one table.
//
// # The script
//
// A sweep's script is a notebook in file form: Go cells separated by
// `// %%` lines, with imports, `ctx` and the preloaded packages as in a
// cell. It reads its task's parameters by name and records its results:
//
//	M := sweep.Int("M")             // also sweep.Float, sweep.String, sweep.Bool
//	gamma := sweep.Float("gamma")   // a missing or mistyped parameter fails the task, naming it
//	...
//	sweep.Record("loglik", ll)      // one column of the table per recorded name
//	m.Save(sweep.File("model.rbm")) // an output file in the task's own directory
//
// sweep.Checkpoint(name) is the path of a file that survives a failed,
// cancelled or requeued attempt: a long task checkpoints there and resumes
// from it when it runs again (see Checkpoint for the training pattern).
// sweep.Index and sweep.Attempt say which task and which run of it this is.
// ctx is cancelled when the task is interrupted (Ctrl-C, sweep cancel, a
// Slurm requeue or preemption), so passing it to long rbmcore calls stops
// them within a second.
//
// # The grid
//
// A Grid (JSON: see Grid) is a Cartesian product of axes (explicit lists,
// logspace, linspace and integer ranges), zipped axes, and repeated seeds.
// Task i gets the i-th point, the first axis varying slowest.
//
// # The directory
//
// A sweep lives in one directory DIR:
//
//	DIR/manifest.json         the plan: script hash, grid, every task's parameters
//	DIR/script.go             the script the tasks run
//	DIR/tasks/I/result.json   task I's outcome, results and files (written atomically)
//	DIR/tasks/I/state.json    its current attempt (number, host, pid, Slurm job)
//	DIR/tasks/I/stdout, stderr   its output, every attempt appended
//	DIR/slurm/                the Slurm backend's batch scripts and job ids
//
// Running a sweep again on DIR resumes: done tasks are kept, failed,
// interrupted and missing ones run again. A changed script or grid is an
// error unless Options.Force (which discards the old results). The driver
// never trusts a scheduler's exit code: a task is done when its own
// result file says so.
//
// # Backends
//
// Local runs each task as its own process (`harmonium sweep task DIR I`),
// Options.Jobs at a time, so a crash or a panic fails that task only;
// cancelling the context (Ctrl-C, the notebook's interrupt button) sends
// the running tasks SIGTERM, waits for them to stop (a trainer saves its
// checkpoint) and leaves DIR resumable. If the driver itself is killed,
// its tasks get SIGTERM too, and finished tasks are kept.
//
// Each local task keeps Options.Threads cores busy. To leave a machine
// responsive for interactive work, run the sweep with fewer Jobs or at low
// priority (`nice -n 19 harmonium sweep run …`). On Linux with autogroup
// scheduling (/proc/sys/kernel/sched_autogroup_enabled = 1) a nice value acts
// only within its session, so a sweep started in a session of its own (a new
// terminal, setsid) still competes as an equal with every other busy
// session unless the priority of its group is lowered too:
// `echo 19 > /proc/PID/autogroup`, PID being the driver's.
//
// Slurm submits one job array (sbatch --array=…%K) whose task I runs
// `harmonium sweep task DIR I`, follows it with squeue (and scontrol, or
// sacct where accounting exists) every Options.Poll, reads each task's
// result file, and resubmits failed tasks (as a new array of just those)
// up to Options.Retries times. A requeued or preempted task runs again
// under the same job and resumes from its checkpoint. Interrupting the
// driver leaves the jobs running: a new Run (or `harmonium sweep run`)
// follows them again, and Cancel (`harmonium sweep cancel DIR`) stops them.
//
// # From a notebook
//
// Run plans, runs and collects a sweep from a cell, with a live progress
// display (done / running / failed / queued, ETA) when called in a
// notebook session; Collect and Watch attach to a sweep another process
// runs. The Table renders as HTML (and text), gives columns by name
// (Column, XY, YErrors for gonum/plot), filters rows (Where, Done), and
// averages over the repeated seeds (Aggregate: mean ± standard error).
//
// A sweep too long for a notebook (hours of a cluster) comes back as a
// committed table: `harmonium sweep collect DIR -o TABLE.csv --note "…"`
// writes it with the SHA-256 of the script, and the notebook reads it with
// ReadChecked: ReadCSV, then CheckScript (made by this version of its
// script?) and CheckDone (every task finished?).
package sweep
