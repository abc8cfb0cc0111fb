package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if !strings.Contains(stderr.String(), "\rfit [") {
		t.Errorf("no terminal progress bar on stderr: %q", stderr.String())
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
