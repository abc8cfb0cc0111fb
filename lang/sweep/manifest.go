package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
)

// manifestFormat identifies manifest files.
const manifestFormat = "harmonium.sweep/1"

// Files in a sweep directory.
const (
	manifestFile = "manifest.json"
	scriptFile   = "script.go"
	tasksDir     = "tasks"
	resultFile   = "result.json"
	stateFile    = "state.json"
	stdoutFile   = "stdout"
	stderrFile   = "stderr"
	lockFile     = "lock"
	cancelFile   = "cancel"
	driverLock   = "driver.lock"
)

// Manifest is the plan of a sweep, DIR/manifest.json: the script (copied to
// DIR/script.go, which tasks run), its hash, the grid and each task's
// parameters.
type Manifest struct {
	Format string `json:"format"`
	// Script is the path the script was planned from (for messages).
	Script string `json:"script"`
	// ScriptSHA256 is the hex SHA-256 of the script's text.
	ScriptSHA256 string `json:"script_sha256"`
	// Grid is the parameter grid; Names its parameters in column order.
	Grid  *Grid    `json:"grid"`
	Names []string `json:"names"`
	// Workdir is the directory tasks run in (where the sweep was planned).
	Workdir string `json:"workdir"`
	// Threads is each task's number of threads (GOMAXPROCS and OpenBLAS).
	Threads int       `json:"threads"`
	Created time.Time `json:"created"`
	// Tasks holds task i's parameters at index i.
	Tasks []Params `json:"tasks"`
}

// scriptSHA256 is the hex SHA-256 of a script's text: the manifest's
// ScriptSHA256, which a table carries and CheckScript compares.
func scriptSHA256(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])
}

// plan describes a sweep to lay out in a directory.
type plan struct {
	dir, scriptName string
	src             []byte
	grid            *Grid
	threads         int
	force           bool
}

// writePlan writes the manifest and script into p.dir, or checks that the
// ones there match (the same script text and the same tasks): a rerun
// resumes. With force, a mismatching sweep's Slurm jobs are cancelled, its
// tasks deleted, and the sweep planned afresh.
func writePlan(ctx context.Context, p plan) (*Manifest, error) {
	tasks, err := p.grid.Tasks()
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	m := &Manifest{Format: manifestFormat, Script: p.scriptName, ScriptSHA256: scriptSHA256(p.src),
		Grid: p.grid, Names: p.grid.Names(), Workdir: wd, Threads: max(p.threads, 1), Created: time.Now().UTC(), Tasks: tasks}
	old, err := ReadManifest(p.dir)
	switch {
	case err == nil:
		why := old.differs(m)
		if why == "" {
			return old, nil
		}
		if !p.force {
			return nil, fmt.Errorf("sweep: %s was planned with a different %s; use a new directory, or force (--force) to discard its results", p.dir, why)
		}
		// Jobs of the old plan would write into the new one.
		if err := cancelSlurm(ctx, p.dir); err != nil {
			return nil, err
		}
		for _, sub := range []string{tasksDir, slurmDir} {
			if err := os.RemoveAll(filepath.Join(p.dir, sub)); err != nil {
				return nil, fmt.Errorf("sweep: discarding %s: %w", p.dir, err)
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(p.dir, tasksDir), 0o755); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(p.dir, scriptFile), p.src); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, fmt.Errorf("sweep: manifest of %s: %w", p.dir, err)
	}
	if err := writeFileAtomic(filepath.Join(p.dir, manifestFile), append(b, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

// differs names what of m differs from o ("" when they are the same sweep).
func (o *Manifest) differs(m *Manifest) string {
	if o.ScriptSHA256 != m.ScriptSHA256 {
		return "script (SHA-256 " + o.ScriptSHA256[:12] + "…, now " + m.ScriptSHA256[:12] + "…)"
	}
	a, _ := json.Marshal(o.Tasks)
	b, _ := json.Marshal(m.Tasks)
	if !bytes.Equal(a, b) || !slices.Equal(o.Names, m.Names) {
		return fmt.Sprintf("grid (%d tasks, now %d)", len(o.Tasks), len(m.Tasks))
	}
	if o.Threads != m.Threads {
		return fmt.Sprintf("number of threads per task (%d, now %d)", o.Threads, m.Threads)
	}
	return ""
}

// ReadManifest reads DIR/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, manifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("sweep: %s is not a sweep directory (no %s): %w", dir, manifestFile, err)
		}
		return nil, fmt.Errorf("sweep: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sweep: %s: %w", path, err)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("sweep: %s: format %q, want %q", path, m.Format, manifestFormat)
	}
	return &m, nil
}

// taskDir is the directory of task i.
func taskDir(dir string, i int) string { return filepath.Join(dir, tasksDir, strconv.Itoa(i)) }

// writeFileAtomic writes b to path atomically (package atomicfile), so
// readers see the old or the new content, never a part.
func writeFileAtomic(path string, b []byte) error {
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return fmt.Errorf("sweep: writing %s: %w", path, err)
	}
	return nil
}

// writeJSON writes v as indented JSON to path, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Errorf("sweep: encoding %s: %w", path, err)
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// readJSON reads path into v; a missing file returns an error wrapping
// os.ErrNotExist.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("sweep: %s: %w", path, err)
	}
	return nil
}
