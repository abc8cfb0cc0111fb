package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/harmonium-rbm/harmonium/lang"
	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
)

func init() {
	subcommands["run"] = subcommand{runMain,
		"run NOTEBOOK.ipynb [-o OUT.ipynb] [--allow-errors] | SCRIPT.go\n                                execute a notebook (outputs written back) or a script headlessly"}
}

// runMain executes a notebook or a script with one lang session.
func runMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harmonium run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the executed notebook to `file` (default: in place)")
	allowErrors := fs.Bool("allow-errors", false, "run all cells even if some fail, and exit 0")
	// Accept flags after the file name too.
	var files []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "usage: harmonium run NOTEBOOK.ipynb [-o OUT.ipynb] [--allow-errors] | SCRIPT.go")
		return 2
	}
	lang.SetProcessLimits()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	path := files[0]
	switch strings.ToLower(filepath.Ext(path)) {
	case ".ipynb":
		return runNotebook(ctx, path, *out, *allowErrors, stderr)
	case ".go":
		return runScript(ctx, path, *allowErrors, stdout, stderr)
	}
	fmt.Fprintf(stderr, "harmonium run: %s: expected a .ipynb notebook or a .go script\n", path)
	return 2
}

// notebookOutput records a cell's outputs in nbformat form, and draws
// progress bars and errors on the terminal.
//
// Stream text arrives in chunks of at most a pipe buffer; the text of the
// last output, when it is a stream, grows in a builder (amortised linear)
// and is stored in the output map by finish, so a cell printing n bytes costs
// O(n), not O(n²/chunk).
//
// The session calls it from several goroutines at once (the readers of the
// cell's stdout and stderr, and the cell's progress bars), so every method
// holds mu.
type notebookOutput struct {
	mu      sync.Mutex
	outputs []map[string]any
	byID    map[string][]int // display id -> indices of outputs showing it
	bars    *barWriter
	text    strings.Builder // text of outputs[len-1] while it is an open stream
	open    bool            // outputs[len-1] is a stream whose text is in text
}

func (o *notebookOutput) Stream(name, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if strings.HasPrefix(text, "\r") && name == "stderr" {
		o.bars.write(text)
	}
	if o.open && o.outputs[len(o.outputs)-1]["name"] == name {
		o.text.WriteString(text)
		return
	}
	o.closeStream()
	o.outputs = append(o.outputs, map[string]any{"output_type": "stream", "name": name})
	o.text.WriteString(text)
	o.open = true
}

// closeStream stores the text of the open stream output in its map; the
// caller holds mu.
func (o *notebookOutput) closeStream() {
	if !o.open {
		return
	}
	o.outputs[len(o.outputs)-1]["text"] = o.text.String()
	o.text = strings.Builder{}
	o.open = false
}

// finish returns the cell's outputs with stream text complete and tidied.
func (o *notebookOutput) finish() []map[string]any {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closeStream()
	tidyStreams(o.outputs)
	return o.outputs
}

func (o *notebookOutput) Display(data, metadata, transient map[string]any, update bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id, _ := transient["display_id"].(string)
	if update {
		for _, i := range o.byID[id] {
			o.outputs[i]["data"] = data
			o.outputs[i]["metadata"] = metadata
		}
		return
	}
	o.closeStream()
	if id != "" {
		o.byID[id] = append(o.byID[id], len(o.outputs))
	}
	o.outputs = append(o.outputs, map[string]any{"output_type": "display_data", "data": data, "metadata": metadata})
}

func (o *notebookOutput) ClearOutput(bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outputs = nil
	o.byID = map[string][]int{}
	o.text = strings.Builder{}
	o.open = false
}

func (o *notebookOutput) Input(string, bool) (string, error) {
	return "", errors.New("harmonium run: cells cannot read input")
}

func tidyStreams(outputs []map[string]any) {
	for _, o := range outputs {
		if t, ok := o["text"].(string); ok && o["output_type"] == "stream" {
			o["text"] = dropOverwritten(t)
		}
	}
}

// dropOverwritten keeps, on each line, only the text after its last \r (what
// a terminal shows), so progress bars are stored once. It is linear in len(t).
func dropOverwritten(t string) string {
	if !strings.Contains(t, "\r") {
		return t
	}
	var sb strings.Builder
	sb.Grow(len(t))
	for len(t) > 0 {
		line, rest, found := strings.Cut(t, "\n")
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		sb.WriteString(line)
		if found {
			sb.WriteByte('\n')
		}
		t = rest
	}
	return sb.String()
}

// cellSource joins an nbformat source (string or list of lines).
func cellSource(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []any:
		var sb strings.Builder
		for _, l := range s {
			if str, ok := l.(string); ok {
				sb.WriteString(str)
			}
		}
		return sb.String()
	}
	return ""
}

func firstLineOf(src string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(src), "\n")
	if len(l) > 60 {
		l = l[:57] + "..."
	}
	return l
}

func runNotebook(ctx context.Context, path, outPath string, allowErrors bool, stderr io.Writer) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "harmonium run: %v\n", err)
		return 1
	}
	var nb map[string]any
	if err := json.Unmarshal(raw, &nb); err != nil {
		fmt.Fprintf(stderr, "harmonium run: %s is not a JSON notebook: %v\n", path, err)
		return 1
	}
	cells, _ := nb["cells"].([]any)
	if outPath == "" {
		outPath = path
	}
	if outPath, err = filepath.Abs(outPath); err != nil {
		fmt.Fprintf(stderr, "harmonium run: %v\n", err)
		return 1
	}
	// Cells run in the notebook's directory, as under Jupyter.
	if dir := filepath.Dir(path); dir != "." {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintf(stderr, "harmonium run: %v\n", err)
			return 1
		}
	}
	s, err := lang.New(lang.Options{Terminal: true})
	if err != nil {
		fmt.Fprintf(stderr, "harmonium run: starting the interpreter: %v\n", err)
		return 1
	}
	defer s.Close()
	status, count := 0, 0
	bars := newBarWriter(stderr)
	for i, c := range cells {
		cell, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := cell["id"]; !ok {
			cell["id"] = fmt.Sprintf("cell-%d", i+1)
		}
		if cell["cell_type"] != "code" {
			continue
		}
		src := cellSource(cell["source"])
		if status != 0 && !allowErrors {
			cell["outputs"], cell["execution_count"] = []any{}, nil
			continue
		}
		count++
		o := &notebookOutput{byID: map[string][]int{}, bars: bars}
		res := s.Execute(ctx, src, o)
		outputs := o.finish()
		if res.Data != nil {
			outputs = append(outputs, map[string]any{"output_type": "execute_result", "execution_count": count, "data": res.Data, "metadata": orEmpty(res.Metadata)})
		}
		if res.Err != nil {
			outputs = append(outputs, map[string]any{"output_type": "error", "ename": res.Err.Name, "evalue": res.Err.Value, "traceback": orEmptyList(res.Err.Traceback)})
			fmt.Fprintf(stderr, "harmonium run: cell %d (%q) failed: %s: %s\n", i+1, firstLineOf(src), res.Err.Name, res.Err.Value)
			status = 1
		}
		outs := make([]any, len(outputs))
		for k, x := range outputs {
			if x["output_type"] == "display_data" || x["output_type"] == "execute_result" {
				if x["metadata"] == nil {
					x["metadata"] = map[string]any{}
				}
			}
			outs[k] = x
		}
		cell["outputs"], cell["execution_count"] = outs, count
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "harmonium run: interrupted")
			status = 130
			break
		}
	}
	nb["nbformat"], nb["nbformat_minor"] = 4, 5
	meta, _ := nb["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		nb["metadata"] = meta
	}
	if _, ok := meta["kernelspec"]; !ok {
		meta["kernelspec"] = map[string]any{"name": "harmonium", "display_name": "Go (Harmonium)", "language": "go"}
	}
	if _, ok := meta["language_info"]; !ok {
		meta["language_info"] = map[string]any{"name": "go", "file_extension": ".go", "mimetype": "text/x-go"}
	}
	b, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		fmt.Fprintf(stderr, "harmonium run: encoding the notebook for %s: %v\n", outPath, err)
		return 1
	}
	if err := atomicfile.WriteBytes(outPath, append(b, '\n')); err != nil {
		fmt.Fprintf(stderr, "harmonium run: writing %s: %v\n", outPath, err)
		return 1
	}
	if abs, err := filepath.Abs(outPath); err == nil {
		outPath = abs
	}
	fmt.Fprintf(stderr, "harmonium run: executed notebook written to %s\n", outPath)
	if allowErrors && status == 1 {
		return 0
	}
	return status
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orEmptyList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// scriptOutput prints a script's output on the terminal and saves images
// beside the script. Like notebookOutput it is called from several goroutines
// at once, so its methods hold mu.
type scriptOutput struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	bars           *barWriter
	base           string // image file prefix
	cell, images   int
}

func (o *scriptOutput) Stream(name, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case name == "stderr" && strings.HasPrefix(text, "\r"):
		o.bars.write(text)
	case name == "stderr":
		fmt.Fprint(o.stderr, text)
	default:
		fmt.Fprint(o.stdout, text)
	}
}

func (o *scriptOutput) Display(data, _, _ map[string]any, update bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.show(data)
}

// show prints text and saves the images of a bundle.
func (o *scriptOutput) show(data map[string]any) {
	for _, f := range []struct{ mime, ext string }{{"image/png", ".png"}, {"image/jpeg", ".jpg"}, {"image/svg+xml", ".svg"}} {
		v, ok := data[f.mime].(string)
		if !ok {
			continue
		}
		b := []byte(v)
		if f.ext != ".svg" {
			var err error
			if b, err = base64.StdEncoding.DecodeString(v); err != nil {
				continue
			}
		}
		o.images++
		name := fmt.Sprintf("%s_cell%d_%d%s", o.base, o.cell, o.images, f.ext)
		if err := os.WriteFile(name, b, 0o644); err != nil {
			fmt.Fprintf(o.stderr, "harmonium run: saving image: %v\n", err)
			return
		}
		fmt.Fprintf(o.stdout, "[image saved to %s]\n", name)
		return
	}
	if t, ok := data["text/plain"].(string); ok {
		fmt.Fprintln(o.stdout, t)
	}
}

func (o *scriptOutput) ClearOutput(bool) {}

func (o *scriptOutput) Input(string, bool) (string, error) {
	return "", errors.New("harmonium run: scripts cannot read input")
}

func runScript(ctx context.Context, path string, allowErrors bool, stdout, stderr io.Writer) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "harmonium run: %v\n", err)
		return 1
	}
	s, err := lang.New(lang.Options{Terminal: true})
	if err != nil {
		fmt.Fprintf(stderr, "harmonium run: starting the interpreter: %v\n", err)
		return 1
	}
	defer s.Close()
	o := &scriptOutput{stdout: stdout, stderr: stderr, bars: newBarWriter(stderr), base: strings.TrimSuffix(path, filepath.Ext(path))}
	status := 0
	for i, src := range lang.ScriptCells(string(raw)) {
		o.mu.Lock()
		o.cell, o.images = i+1, 0
		o.mu.Unlock()
		res := s.Execute(ctx, src, o)
		if res.Data != nil {
			o.Display(res.Data, nil, nil, false)
		}
		if res.Err != nil {
			fmt.Fprintf(stderr, "%s\nharmonium run: %s: cell %d failed: %s: %s\n", strings.Join(res.Err.Traceback, "\n"), path, i+1, res.Err.Name, res.Err.Value)
			status = 1
			if !allowErrors {
				break
			}
		}
		if ctx.Err() != nil {
			return 130
		}
	}
	if allowErrors {
		return 0
	}
	return status
}

// logInterval is how often a progress bar is written to a log.
const logInterval = 10 * time.Second

// barWriter draws the progress bars cells print (lines that start with a
// carriage return). A terminal gets every redraw; a log (a batch job's output
// file, a pipe) gets the bar's current line at most once per logInterval and
// the line it ends with, without carriage returns.
type barWriter struct {
	w        io.Writer
	terminal bool
	last     time.Time
}

func newBarWriter(w io.Writer) *barWriter { return &barWriter{w: w, terminal: isTerminal(w)} }

func (b *barWriter) write(text string) {
	if b.terminal {
		fmt.Fprint(b.w, text)
		return
	}
	ended := strings.Contains(text, "\n")
	if !ended && time.Since(b.last) < logInterval {
		return
	}
	b.last = time.Now()
	if line := strings.TrimSpace(dropOverwritten(text)); line != "" {
		fmt.Fprintln(b.w, line)
	}
}
