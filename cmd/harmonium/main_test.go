package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/kernel"
)

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return code, o.String(), e.String()
}

func TestVersionAndUsage(t *testing.T) {
	code, out, _ := run("version")
	if code != 0 || !strings.HasPrefix(out, "harmonium "+version) || !strings.Contains(out, "protocol 5.4") {
		t.Errorf("version: %d %q", code, out)
	}
	if code, _, errs := run("frobnicate"); code != 2 || !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, errs)
	}
	if code, _, errs := run(); code != 2 || !strings.Contains(errs, "install") {
		t.Errorf("no command: %d %q", code, errs)
	}
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := run("install", "--prefix", dir, "--name", "hm-test")
	if code != 0 {
		t.Fatalf("install: %d %s", code, errs)
	}
	spec := filepath.Join(dir, "share", "jupyter", "kernels", "hm-test")
	if !strings.Contains(out, spec) {
		t.Errorf("install output %q does not name %s", out, spec)
	}
	b, err := os.ReadFile(filepath.Join(spec, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ks kernelSpec
	if err := json.Unmarshal(b, &ks); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if len(ks.Argv) != 4 || ks.Argv[0] != exe || !filepath.IsAbs(ks.Argv[0]) || ks.Argv[1] != "kernel" ||
		ks.Argv[2] != "-f" || ks.Argv[3] != "{connection_file}" {
		t.Errorf("argv = %q", ks.Argv)
	}
	if ks.DisplayName != "Go (Harmonium)" || ks.Language != "go" || ks.InterruptMode != "message" || ks.Metadata == nil {
		t.Errorf("spec = %+v", ks)
	}
	for _, size := range []int{32, 64} {
		f, err := os.Open(filepath.Join(spec, fmt.Sprintf("logo-%dx%d.png", size, size)))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != size || img.Bounds().Dy() != size {
			t.Errorf("logo %d: %v %v", size, img.Bounds(), err)
		}
		// Opaque blue in the middle of the left edge, transparent corners.
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Errorf("logo %d: corner alpha %d", size, a)
		}
		if r, g, b, a := img.At(1, size/2).RGBA(); a != 0xffff || r>>8 != 0 || g>>8 != 0xAD || b>>8 != 0xD8 {
			t.Errorf("logo %d: edge colour %x %x %x %x", size, r>>8, g>>8, b>>8, a>>8)
		}
	}
}

func TestInstallUserHonoursJupyterDataDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", dir)
	for _, args := range [][]string{{"install"}, {"install", "--user"}} {
		if code, _, errs := run(args...); code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "kernels", "harmonium", "kernel.json")); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	t.Setenv("VIRTUAL_ENV", filepath.Join(dir, "venv"))
	if code, _, errs := run("install", "--sys-prefix"); code != 0 {
		t.Fatalf("--sys-prefix: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "venv", "share", "jupyter", "kernels", "harmonium", "kernel.json")); err != nil {
		t.Error(err)
	}
	if code, _, errs := run("install", "--name", "bad name/x"); code != 1 || !strings.Contains(errs, "--name") {
		t.Errorf("bad name: %d %q", code, errs)
	}
	if code, _, _ := run("install", "--user", "--prefix", dir); code != 2 {
		t.Errorf("--user with --prefix: exit %d", code)
	}
}

// fakeExecutor answers every cell with its own code as the result.
type fakeExecutor struct{}

func (fakeExecutor) Execute(_ context.Context, code string, _ kernel.ExecOptions, _ kernel.Output) kernel.ExecResult {
	return kernel.ExecResult{Data: map[string]any{"text/plain": code}}
}
func (fakeExecutor) Complete(string, int) kernel.Completion          { return kernel.Completion{} }
func (fakeExecutor) Inspect(string, int, int) (map[string]any, bool) { return nil, false }
func (fakeExecutor) IsComplete(string) (string, string)              { return "complete", "" }

func TestKernelCommandErrors(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run("kernel"); code != 2 || !strings.Contains(errs, "-f") {
		t.Errorf("no -f: %d %q", code, errs)
	}
	missing := filepath.Join(dir, "missing.json")
	garbled := filepath.Join(dir, "garbled.json")
	os.WriteFile(garbled, []byte("{nope"), 0o600)
	for _, f := range []string{missing, garbled} {
		var e bytes.Buffer
		if code := serveKernel(f, fakeExecutor{}, &e); code != 1 || !strings.Contains(e.String(), f) {
			t.Errorf("%s: exit %d, %q", f, code, e.String())
		}
	}
	// A port in use: the message names it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	conn := filepath.Join(dir, "busy.json")
	b, _ := json.Marshal(map[string]any{"transport": "tcp", "ip": "127.0.0.1", "shell_port": busy, "iopub_port": busy,
		"stdin_port": busy, "control_port": busy, "hb_port": busy, "key": "k", "signature_scheme": "hmac-sha256"})
	os.WriteFile(conn, b, 0o600)
	t.Setenv("JUPYTER_DATA_DIR", dir)
	var e bytes.Buffer
	if code := serveKernel(conn, fakeExecutor{}, &e); code != 1 || !strings.Contains(e.String(), fmt.Sprint(busy)) {
		t.Errorf("port in use: exit %d, %q", code, e.String())
	}
}

func TestWatchParentKeepsRunningWhileParentLives(t *testing.T) {
	outer, cancel := context.WithCancel(context.Background())
	ctx := watchParent(outer, 10*time.Millisecond, log.New(io.Discard, "", 0))
	select {
	case <-ctx.Done():
		t.Fatal("cancelled although the parent is alive")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("not cancelled with its parent context")
	}
}
