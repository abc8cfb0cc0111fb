package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/harmonium-rbm/harmonium/kernel"
)

// kernelSpec is the kernel.json Jupyter reads to start Harmonium.
type kernelSpec struct {
	Argv          []string          `json:"argv"`
	DisplayName   string            `json:"display_name"`
	Language      string            `json:"language"`
	InterruptMode string            `json:"interrupt_mode"`
	Env           map[string]string `json:"env"`
	Metadata      map[string]any    `json:"metadata"`
}

var validKernelName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// checkKernelName rejects a kernelspec name that is not a plain directory
// name: the spec is written to KERNELS_DIR/NAME, so "..", "." or a path
// would write it outside the kernels directory.
func checkKernelName(name string) error {
	if !validKernelName.MatchString(name) || name == "." || name == ".." {
		return fmt.Errorf("--name %q: a kernelspec name is a directory name of letters, digits, '.', '_' and '-' (not \".\" or \"..\")", name)
	}
	return nil
}

func installCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harmonium install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.Bool("user", false, "install for the current user (the default), in the Jupyter data dir")
	sysPrefix := fs.Bool("sys-prefix", false, "install into the active Python environment's prefix (conda, venv or python3's sys.prefix)")
	prefix := fs.String("prefix", "", "install into `DIR`/share/jupyter/kernels")
	name := fs.String("name", "harmonium", "the kernelspec `name`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "harmonium install: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	n := 0
	for _, b := range []bool{*user, *sysPrefix, *prefix != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintln(stderr, "harmonium install: choose one of --user, --sys-prefix and --prefix")
		return 2
	}
	dir, err := kernelsDir(*sysPrefix, *prefix)
	if err == nil {
		dir, err = installSpec(dir, *name)
	}
	if err != nil {
		fmt.Fprintf(stderr, "harmonium install: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Installed kernelspec %s in %s\n", *name, dir)
	return 0
}

// kernelsDir returns the Jupyter "kernels" directory to install into.
func kernelsDir(sysPrefix bool, prefix string) (string, error) {
	switch {
	case prefix != "":
		return filepath.Join(prefix, "share", "jupyter", "kernels"), nil
	case sysPrefix:
		p, err := pythonPrefix()
		if err != nil {
			return "", err
		}
		return filepath.Join(p, "share", "jupyter", "kernels"), nil
	}
	d, err := kernel.JupyterDataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kernels"), nil
}

// pythonPrefix finds sys.prefix of the Python environment Jupyter runs in:
// the active conda environment or virtualenv, else what python3 reports.
func pythonPrefix() (string, error) {
	for _, v := range []string{"CONDA_PREFIX", "VIRTUAL_ENV"} {
		if p := os.Getenv(v); p != "" {
			return p, nil
		}
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.prefix)").Output()
	if err != nil {
		return "", fmt.Errorf("--sys-prefix: no CONDA_PREFIX or VIRTUAL_ENV, and python3 could not tell sys.prefix: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// installSpec writes kernel.json and the logos into the directory name of
// the kernels directory kernels, and returns that directory made absolute.
func installSpec(kernels, name string) (string, error) {
	if err := checkKernelName(name); err != nil {
		return "", err
	}
	dir := filepath.Join(kernels, name)
	bin, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the harmonium binary: %w", err)
	}
	if b, err := filepath.EvalSymlinks(bin); err == nil {
		bin = b
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	spec := kernelSpec{
		Argv:          []string{bin, "kernel", "-f", "{connection_file}"},
		DisplayName:   "Go (Harmonium)",
		Language:      "go",
		InterruptMode: "message",
		Env:           map[string]string{},
		Metadata: map[string]any{
			"debugger":  false,
			"harmonium": map[string]any{"version": version, "protocol_version": kernel.ProtocolVersion},
		},
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing kernel.json: %w", err)
	}
	for _, size := range []int{32, 64} {
		if err := writeLogo(filepath.Join(dir, fmt.Sprintf("logo-%dx%d.png", size, size)), size); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func writeLogo(path string, size int) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing logo: %w", err)
	}
	defer func() {
		err = errors.Join(err, f.Close())
	}()
	if err := png.Encode(f, drawLogo(size)); err != nil {
		return fmt.Errorf("writing logo %s: %w", path, err)
	}
	return nil
}
