package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/lang/sweep"
)

// The sweep subcommands check their arguments and name the directory or
// file that is wrong; a task runs in-process, and status and collect read
// its result.
func TestSweepCommand(t *testing.T) {
	dir := t.TempDir()
	script, grid, out := filepath.Join(dir, "s.go"), filepath.Join(dir, "g.json"), filepath.Join(dir, "out")
	os.WriteFile(script, []byte(`sweep.Record("sq", float64(sweep.Int("n")*sweep.Int("n")))`), 0o644)
	os.WriteFile(grid, []byte(`{"axes": [{"name": "n", "values": [3]}]}`), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep"}, 2, "usage:"},
		{[]string{"sweep", "frob"}, 2, `unknown subcommand "frob"`},
		{[]string{"sweep", "run", script, "--out", out}, 2, "usage: harmonium sweep run"},
		{[]string{"sweep", "run", script, "--grid", filepath.Join(dir, "none.json"), "--out", out}, 1, "none.json"},
		{[]string{"sweep", "status", dir}, 1, dir + " is not a sweep directory"},
		{[]string{"sweep", "task", out, "x"}, 2, `task index "x"`},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String()+stderr.String(), c.want) {
			t.Errorf("%v: exit %d, want %d; output %q, want it to contain %q", c.args, code, c.code, stdout.String()+stderr.String(), c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"sweep", "run", script, "--grid", grid, "--out", out, "--backend", "cloud"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `unknown backend "cloud"`) {
		t.Fatalf("unknown backend: exit %d, %s", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("an unknown backend created %s", out)
	}
	// Plan the sweep with a task command that fails (the test binary is not
	// harmonium), then run its task in-process.
	g, err := sweep.ReadGrid(grid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Run(context.Background(), sweep.Options{Dir: out, Script: script, Grid: g, Command: []string{"false"}}); err == nil {
		t.Fatal("a sweep whose task command is false succeeded")
	}
	if code := dispatch([]string{"sweep", "task", out, "0"}, &stdout, &stderr); code != 0 {
		t.Fatalf("task: exit %d, %s", code, stderr.String())
	}
	stdout.Reset()
	if code := dispatch([]string{"sweep", "status", out}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "1/1 done") {
		t.Errorf("status: exit %d, %s", code, stdout.String())
	}
	stdout.Reset()
	if code := dispatch([]string{"sweep", "collect", out}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "sq") || !strings.Contains(stdout.String(), "9 ") {
		t.Errorf("collect: exit %d, %s", code, stdout.String())
	}
	csv := filepath.Join(dir, "t.csv")
	if code := dispatch([]string{"sweep", "collect", out, "-o", csv, "--note", "made by a test"}, &stdout, &stderr); code != 0 {
		t.Fatalf("collect -o: exit %d, %s", code, stderr.String())
	}
	if b, _ := os.ReadFile(csv); !strings.Contains(string(b), "0,done,3,9,1") || !strings.Contains(string(b), "\n# made by a test\n") {
		t.Errorf("table.csv: %s", b)
	}
	tb, err := sweep.ReadCSV(csv)
	if err != nil || tb.Note != "made by a test" || tb.Rows[0].Values["sq"] != 9 {
		t.Fatalf("the collected table read back: %+v, %v", tb, err)
	}
	// The table names the script it came from, and says whether it is whole.
	src, _ := os.ReadFile(script)
	if err := tb.CheckScript(string(src)); err != nil {
		t.Errorf("the collected table against its own script: %v", err)
	}
	if err := tb.CheckScript(string(src) + "\n"); err == nil {
		t.Error("the collected table passed CheckScript against another script")
	}
	if err := tb.CheckDone(); err != nil {
		t.Errorf("CheckDone on a finished sweep: %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	polls := []sweep.Status{
		{Total: 3, Running: 2, Queued: 1, ETA: -1},
		{Total: 3, Running: 2, Queued: 1, ETA: -1, Elapsed: time.Second},
		{Total: 3, Done: 1, Running: 2, ETA: time.Minute, Elapsed: 2 * time.Second},
		{Total: 3, Done: 1, Running: 2, ETA: 50 * time.Second, Elapsed: 3 * time.Second},
		{Total: 3, Done: 3, Elapsed: 4 * time.Second},
	}
	var log bytes.Buffer
	report := progressLine(&log, "out", false)
	for _, s := range polls {
		report(s)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != 3 || strings.ContainsAny(log.String(), "\r\033") {
		t.Fatalf("a log got %d lines (want one per change of the counts, 3) or terminal controls:\n%q", len(lines), log.String())
	}
	if want := "sweep out: 3/3 done, 0 running, 0 failed, 0 queued (elapsed 4s)"; lines[2] != want {
		t.Errorf("last line %q, want %q", lines[2], want)
	}
	var term bytes.Buffer
	report = progressLine(&term, "out", true)
	for _, s := range polls {
		report(s)
	}
	if n := strings.Count(term.String(), "\r"); n != len(polls) || strings.Contains(term.String(), "\n") {
		t.Errorf("a terminal got %d carriage returns (want %d, one per poll) or a newline: %q", n, len(polls), term.String())
	}
	if isTerminal(&term) {
		t.Error("a buffer is taken for a terminal")
	}
}
