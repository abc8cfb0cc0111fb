package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/lang"
)

func writeNotebook(t *testing.T, path string, cells ...string) {
	t.Helper()
	var cs []map[string]any
	for _, c := range cells {
		cs = append(cs, map[string]any{"cell_type": "code", "metadata": map[string]any{}, "source": c, "outputs": []any{}, "execution_count": nil})
	}
	cs = append(cs, map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": "# notes"})
	b, _ := json.Marshal(map[string]any{"cells": cs, "metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 2})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRunNotebookRoundTrip(t *testing.T) {
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "out.ipynb")
	writeNotebook(t, in,
		"import (\n\t\"fmt\"\n\t\"gonum.org/v1/plot\"\n\t\"gonum.org/v1/plot/plotter\"\n)\nfmt.Println(\"hello\")",
		"p := plot.New()\npts := make(plotter.XYs, 4)\nfor i := range 4 { pts[i].X, pts[i].Y = float64(i), float64(i*i) }\nl, _ := plotter.NewLine(pts)\np.Add(l)\np",
		"bar := display.NewProgress(\"fit\", 2)\nbar.Set(1)\nbar.Done()\n6 * 7",
	)
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{in, "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "executed notebook written to "+out) {
		t.Errorf("the runner does not say where it wrote the notebook: %q", stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		NBFormat      int `json:"nbformat"`
		NBFormatMinor int `json:"nbformat_minor"`
		Cells         []struct {
			ID       string           `json:"id"`
			Type     string           `json:"cell_type"`
			Count    *int             `json:"execution_count"`
			Outputs  []map[string]any `json:"outputs"`
			Metadata map[string]any   `json:"metadata"`
		} `json:"cells"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatal(err)
	}
	if nb.NBFormat != 4 || nb.NBFormatMinor != 5 || nb.Metadata["kernelspec"] == nil || len(nb.Cells) != 4 {
		t.Fatalf("notebook header/cells wrong: %s", b[:min(len(b), 400)])
	}
	for _, c := range nb.Cells {
		if c.ID == "" {
			t.Errorf("cell without id (nbformat 4.5)")
		}
	}
	c0 := nb.Cells[0].Outputs
	if len(c0) != 1 || c0[0]["output_type"] != "stream" || c0[0]["text"] != "hello\n" || *nb.Cells[0].Count != 1 {
		t.Errorf("cell 1 outputs %v", c0)
	}
	c1 := nb.Cells[1].Outputs
	if len(c1) != 1 || c1[0]["output_type"] != "execute_result" {
		t.Fatalf("cell 2 outputs %v", c1)
	}
	data := c1[0]["data"].(map[string]any)
	if _, ok := data["image/png"]; !ok {
		t.Errorf("plot not saved as PNG: %v", keysOf(data))
	}
	c2 := nb.Cells[2].Outputs
	var text string
	for _, o := range c2 {
		if o["output_type"] == "stream" {
			text += o["text"].(string)
		}
		if o["output_type"] == "execute_result" && o["data"].(map[string]any)["text/plain"] != "42" {
			t.Errorf("cell 3 result %v", o)
		}
	}
	if strings.Contains(text, "\r") || !strings.Contains(text, "2/2") {
		t.Errorf("progress stream not tidied: %q", text)
	}
	if !strings.Contains(stderr.String(), "\nfit 100% [") || strings.Contains(stderr.String(), "\r") {
		t.Errorf("stderr, not a terminal, should get the bar's last line without carriage returns: %q", stderr.String())
	}
}

func TestRunNotebookErrors(t *testing.T) {
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.ipynb")
	writeNotebook(t, in, "x := 1", "x = undefinedThing", "x + 1")
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{in}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "cell 2") {
		t.Errorf("failing cell: exit %d, stderr %q", code, stderr.String())
	}
	b, _ := os.ReadFile(in)
	if !strings.Contains(string(b), `"ename": "CompileError"`) {
		t.Errorf("error output not written in place")
	}
	stderr.Reset()
	if code := runMain([]string{"--allow-errors", in}, &stdout, &stderr); code != 0 {
		t.Errorf("--allow-errors: exit %d", code)
	}
	b, _ = os.ReadFile(in)
	if !strings.Contains(string(b), `"text/plain": "2"`) {
		t.Errorf("--allow-errors did not run the cell after the error")
	}
}

func TestRunScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.go")
	src := "import \"fmt\"\n// %%\nfmt.Println(\"one\")\n// %% second cell\ndisplay.PNG([]byte(\"\\x89PNG\"))\n3 * 3\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{script}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "one\n") || !strings.Contains(out, "9\n") || !strings.Contains(out, "s_cell3_1.png") {
		t.Errorf("script stdout %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "s_cell3_1.png")); err != nil {
		t.Errorf("image not saved: %v", err)
	}
	if got := lang.ScriptCells("a\n// %%\nb\n"); len(got) != 2 || got[1] != "\n\nb\n" {
		t.Errorf("lang.ScriptCells = %q", got)
	}
	os.WriteFile(script, []byte("x := 1\n// %%\nx.Foo()\n"), 0o644)
	stderr.Reset()
	if code := runMain([]string{script}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "cell 2 failed") || !strings.Contains(stderr.String(), "cell:3:") {
		t.Errorf("failing script: exit %d, %q", code, stderr.String())
	}
}

func keysOf(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	return k
}

// The notebook output keeps the stream text of a cell in one builder: the
// text is complete and in order, and recording n bytes allocates O(n) bytes
// (the old string concatenation copied the whole text at every 32 KiB
// chunk: 16 GB allocated for 32 MB). Allocation, unlike time, does not
// depend on the machine's load.
func TestNotebookOutputLinear(t *testing.T) {
	const size = 32 << 20
	chunk := strings.Repeat("x", 32<<10)
	o := &notebookOutput{byID: map[string][]int{}, bars: newBarWriter(io.Discard)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range size / len(chunk) {
		o.Stream("stdout", chunk)
	}
	outs := o.finish()
	runtime.ReadMemStats(&after)
	if len(outs) != 1 || len(outs[0]["text"].(string)) != size {
		t.Fatalf("%d outputs, text of %d bytes", len(outs), len(outs[0]["text"].(string)))
	}
	// A builder grows large buffers by 1.25×: about 5n allocated in all.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*size {
		t.Errorf("recording %d MB allocated %d MB: not linear", size>>20, alloc>>20)
	}
}

func TestNotebookOutputInterleaved(t *testing.T) {
	o := &notebookOutput{byID: map[string][]int{}, bars: newBarWriter(io.Discard)}
	o.Stream("stdout", "a")
	o.Stream("stdout", "b\n")
	o.Stream("stderr", "50%\r100%\n")
	o.Display(map[string]any{"text/plain": "d"}, nil, map[string]any{"display_id": "x"}, false)
	o.Stream("stdout", "c")
	outs := o.finish()
	want := []string{"stream stdout ab\n", "stream stderr 100%\n", "display_data  ", "stream stdout c"}
	if len(outs) != len(want) {
		t.Fatalf("outputs %v", outs)
	}
	for i, w := range want {
		got := fmt.Sprintf("%v %v %v", outs[i]["output_type"], outs[i]["name"], outs[i]["text"])
		if outs[i]["output_type"] == "display_data" {
			got = "display_data  "
		}
		if got != w {
			t.Errorf("output %d = %q, want %q", i, got, w)
		}
	}
}

// The session writes a cell's stdout, its stderr and its displays from
// different goroutines. Every stream output must keep its text, and each
// stream's text must come out whole and in order, however the calls
// interleave (go test -race checks the locking itself).
func TestNotebookOutputConcurrent(t *testing.T) {
	o := &notebookOutput{byID: map[string][]int{}, bars: newBarWriter(io.Discard)}
	const n = 2000
	var wg sync.WaitGroup
	for _, name := range []string{"stdout", "stderr"} {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			for i := range n {
				o.Stream(name, fmt.Sprintf("%s %d\n", name, i))
			}
		}(name)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n / 10 {
			o.Display(map[string]any{"text/plain": fmt.Sprint(i)}, nil, map[string]any{"display_id": "bar"}, i > 0)
		}
	}()
	wg.Wait()
	got := map[string]*strings.Builder{"stdout": {}, "stderr": {}}
	for k, out := range o.finish() {
		if out["output_type"] != "stream" {
			continue
		}
		text, ok := out["text"].(string)
		if !ok {
			t.Fatalf("output %d (%v) has no text: %v", k, out["name"], out)
		}
		got[out["name"].(string)].WriteString(text)
	}
	for name, b := range got {
		var want strings.Builder
		for i := range n {
			fmt.Fprintf(&want, "%s %d\n", name, i)
		}
		if b.String() != want.String() {
			t.Errorf("%s: %d bytes recorded, want %d in order", name, b.Len(), want.Len())
		}
	}
}

// A script's output is written from the same goroutines as a notebook's:
// progress bars from the cell, text from the pipe readers (go test -race).
func TestScriptOutputConcurrent(t *testing.T) {
	var out, errs lockedBuffer
	o := &scriptOutput{stdout: &out, stderr: &errs, bars: newBarWriter(&errs), base: filepath.Join(t.TempDir(), "s")}
	const n = 500
	var wg sync.WaitGroup
	for _, text := range []string{"line\n", "\r 50% bar", "\r100% bar\n", "warning\n"} {
		wg.Add(1)
		go func(text string) {
			defer wg.Done()
			name := "stderr"
			if text == "line\n" {
				name = "stdout"
			}
			for range n {
				o.Stream(name, text)
			}
		}(text)
	}
	wg.Wait()
	if got := strings.Count(out.String(), "line\n"); got != n {
		t.Errorf("stdout has %d of %d lines", got, n)
	}
	if got := strings.Count(errs.String(), "warning\n"); got != n {
		t.Errorf("stderr has %d of %d warnings", got, n)
	}
	if got := strings.Count(errs.String(), "100% bar\n"); got != n {
		t.Errorf("stderr has %d of %d finished bars", got, n)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes, like a terminal.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestDropOverwritten(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ntext":           "plain\ntext",
		"10%\r20%\r30%\ndone\n": "30%\ndone\n",
		"a\rb\nc\rd":            "b\nd",
		"trailing\r\n":          "\n",
		"":                      "",
	} {
		if got := dropOverwritten(in); got != want {
			t.Errorf("dropOverwritten(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBarWriter(t *testing.T) {
	var log bytes.Buffer
	b := &barWriter{w: &log}
	for _, text := range []string{"\rfit  10% [#", "\rfit  20% [##", "\rfit  30% [###\rfit  40% [####", "\rfit 100% [##########]\n"} {
		b.write(text)
	}
	if want := "fit  10% [#\nfit 100% [##########]\n"; log.String() != want {
		t.Errorf("a log got %q, want the first line and the last (updates in between come at most every %v)", log.String(), logInterval)
	}
	b.last = time.Now().Add(-logInterval)
	b.write("\rfit  50% [#####\rfit  60% [######")
	if !strings.HasSuffix(log.String(), "\nfit  60% [######\n") {
		t.Errorf("after %v a log should get the current line: %q", logInterval, log.String())
	}
	var term bytes.Buffer
	b = &barWriter{w: &term, terminal: true}
	b.write("\rfit  10% [#")
	b.write("\rfit  20% [##")
	if term.String() != "\rfit  10% [#\rfit  20% [##" {
		t.Errorf("a terminal should get every redraw: %q", term.String())
	}
}
