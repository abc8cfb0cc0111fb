package lang

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/traefik/yaegi/interp"

	"github.com/harmonium-rbm/harmonium/lang/display"
	"github.com/harmonium-rbm/harmonium/stdlib"
)

// Magics lists the magics Harmonium understands, with one-line help.
var Magics = map[string]string{
	"%time":       "%time CODE or %%time: run Go code once and print the wall time",
	"%timeit":     "%timeit [-n N] [-r R] CODE or %%timeit: time Go code, repeated automatically (mean ± std)",
	"%who":        "%who: list the names defined by cells",
	"%whos":       "%whos: table of the names defined by cells, with types and values",
	"%reset":      "%reset: forget everything the cells defined (fresh interpreter)",
	"%env":        "%env [NAME[=VALUE]]: list, show or set environment variables",
	"%cd":         "%cd [DIR]: change the working directory",
	"%help":       "%help: this help: preloaded packages, magics and shortcuts",
	"%%writefile": "%%writefile [-a] FILE: write (or append) the rest of the cell to FILE",
	"!":           "!CMD: run a shell command, its output shown in the cell",
}

func usage(format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Name: "UsageError", Value: msg, Traceback: []string{"UsageError: " + msg}}
}

// lineMagic runs one %magic or !command line.
func (s *Session) lineMagic(ctx context.Context, c *cell, line string) *Error {
	if strings.HasPrefix(line, "!") {
		return s.shell(ctx, c, strings.TrimSpace(line[1:]))
	}
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "%time":
		return s.timeOnce(ctx, c, arg)
	case "%timeit":
		return s.timeit(ctx, c, arg)
	case "%who":
		c.out.Stream("stdout", strings.Join(s.userNames(), "  ")+"\n")
	case "%whos":
		c.out.Stream("stdout", s.whos())
	case "%reset":
		if err := s.reset(); err != nil {
			return &Error{Name: "ResetError", Value: err.Error()}
		}
		c.out.Stream("stdout", "Session reset: all names forgotten, preloaded packages reloaded.\n")
	case "%env":
		return envMagic(c, arg)
	case "%cd":
		dir := arg
		if dir == "" {
			dir, _ = os.UserHomeDir()
		}
		if err := os.Chdir(dir); err != nil {
			return &Error{Name: "OSError", Value: err.Error(), Traceback: []string{"OSError: " + err.Error()}}
		}
		wd, _ := os.Getwd()
		c.out.Stream("stdout", wd+"\n")
	case "%help":
		c.out.Stream("stdout", helpText())
	default:
		return usage("unknown magic %s (try %%help)", name)
	}
	return nil
}

// cellMagic runs a cell starting with %%.
func (s *Session) cellMagic(ctx context.Context, c *cell, code string) *Error {
	first, body, _ := strings.Cut(code, "\n")
	name, arg, _ := strings.Cut(strings.TrimSpace(first), " ")
	arg = strings.TrimSpace(arg)
	pad := "\n" // keep line numbers of the body
	switch name {
	case "%%time":
		return s.timeOnce(ctx, c, pad+body)
	case "%%timeit":
		return s.timeit(ctx, c, arg+" "+pad+body)
	case "%%writefile":
		appendMode := false
		if strings.HasPrefix(arg, "-a ") {
			appendMode, arg = true, strings.TrimSpace(arg[3:])
		}
		if arg == "" {
			return usage("%%%%writefile needs a file name")
		}
		flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		verb := "Writing"
		if appendMode {
			flag, verb = os.O_CREATE|os.O_WRONLY|os.O_APPEND, "Appending to"
		} else if _, err := os.Stat(arg); err == nil {
			verb = "Overwriting"
		}
		f, err := os.OpenFile(arg, flag, 0o644)
		if err == nil {
			_, err = f.WriteString(body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return &Error{Name: "OSError", Value: fmt.Sprintf("%%%%writefile %s: %v", arg, err)}
		}
		c.out.Stream("stdout", verb+" "+arg+"\n")
		return nil
	}
	return usage("unknown cell magic %s (try %%help)", name)
}

func (s *Session) timeOnce(ctx context.Context, c *cell, code string) *Error {
	t0 := time.Now()
	err := s.runGo(ctx, c, code)
	d := time.Since(t0)
	s.stdout.Sync()
	c.out.Stream("stdout", "Wall time: "+formatDuration(d.Seconds())+"\n")
	return err
}

// timeit runs code the first time as a normal cell (declaring what it
// declares), then compiles it once and times repeated executions: loops per
// run chosen so a run lasts at least 0.1 s (like IPython), 7 runs by default.
func (s *Session) timeit(ctx context.Context, c *cell, arg string) *Error {
	loops, runs := 0, 7
	fields := strings.Fields(arg)
	for len(fields) >= 2 && (fields[0] == "-n" || fields[0] == "-r") {
		v, err := strconv.Atoi(fields[1])
		if err != nil || v < 1 {
			return usage("%%timeit %s needs a positive count, got %q", fields[0], fields[1])
		}
		if fields[0] == "-n" {
			loops = v
		} else {
			runs = v
		}
		rest := strings.TrimSpace(arg)
		rest = strings.TrimSpace(rest[len(fields[0]):])
		arg = strings.TrimSpace(rest[len(fields[1]):])
		fields = fields[2:]
	}
	if e := checkTimeitCode(arg); e != nil {
		return e
	}
	// The code runs in a function literal, as IPython's timeit runs it in a
	// function: the names it declares stay its own. The literal starts on
	// the code's first line, so line numbers stay those of the cell.
	code := "func() { " + arg + "\n}()"
	saved := c.out
	s.setOut(c, discardOutput{})
	defer s.setOut(c, saved)
	if e := s.runGo(ctx, c, code); e != nil {
		s.setOut(c, saved)
		return e
	}
	c.hasResult = false
	prog, e := s.compileStmts(c, code)
	if e != nil {
		return e
	}
	once := func(n int) (time.Duration, *Error) {
		t0 := time.Now()
		for i := 0; i < n; i++ {
			if _, e := s.execute(ctx, prog, code); e != nil {
				return 0, e
			}
		}
		return time.Since(t0), nil
	}
	if loops == 0 {
		for loops = 1; ; loops *= 10 {
			d, e := once(loops)
			if e != nil {
				return e
			}
			if d >= 100*time.Millisecond || loops >= 1e8 {
				break
			}
		}
	}
	per := make([]float64, runs)
	for r := range per {
		d, e := once(loops)
		if e != nil {
			return e
		}
		per[r] = d.Seconds() / float64(loops)
	}
	mean, std := meanStd(per)
	c.hasResult = false
	s.stdout.Sync()
	saved.Stream("stdout", fmt.Sprintf("%s ± %s per loop (mean ± std. dev. of %d runs, %d loop%s each)\n",
		formatDuration(mean), formatDuration(std), runs, loops, plural(loops)))
	return nil
}

// checkTimeitCode checks that code, to be timed, is statements only.
func checkTimeitCode(code string) *Error {
	items, err := splitCell(code)
	if err != nil {
		return syntaxError(code, err)
	}
	for _, it := range items {
		if it.kind != itemStmt {
			return usage("%%timeit times statements only; declare functions and types in another cell")
		}
	}
	if len(items) == 0 {
		return usage("%%timeit needs code to time")
	}
	return nil
}

// compileStmts rewrites and compiles statement-only code for repeated runs.
func (s *Session) compileStmts(c *cell, src string) (*interp.Program, *Error) {
	src = renameIdents(src, s.renames)
	items, err := splitCell(src)
	if err != nil {
		return nil, syntaxError(src, err)
	}
	prog, _, _, e := s.prepareStmts(c, src, items, false, "", "")
	return prog, e
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)-1))
}

// formatDuration prints seconds with an adapted unit, 3 significant digits.
func formatDuration(sec float64) string {
	units := []struct {
		scale float64
		name  string
	}{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}}
	for _, u := range units {
		if sec >= u.scale || u.name == "ns" {
			return strconv.FormatFloat(sec/u.scale, 'g', 3, 64) + " " + u.name
		}
	}
	return ""
}

type discardOutput struct{}

func (discardOutput) Stream(string, string)                  {}
func (discardOutput) Display(_, _, _ map[string]any, _ bool) {}
func (discardOutput) ClearOutput(bool)                       {}
func (discardOutput) Input(string, bool) (string, error)     { return "", io.EOF }

func envMagic(c *cell, arg string) *Error {
	switch {
	case arg == "":
		env := os.Environ()
		sort.Strings(env)
		c.out.Stream("stdout", strings.Join(env, "\n")+"\n")
	case strings.ContainsAny(arg, "= "):
		k, v, _ := strings.Cut(arg, "=")
		if !strings.Contains(arg, "=") {
			k, v, _ = strings.Cut(arg, " ")
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := os.Setenv(k, v); err != nil {
			return &Error{Name: "OSError", Value: fmt.Sprintf("%%env %s: %v", k, err)}
		}
		c.out.Stream("stdout", "env: "+k+"="+v+"\n")
	default:
		v, ok := os.LookupEnv(arg)
		if !ok {
			return usage("environment variable %s is not set", arg)
		}
		c.out.Stream("stdout", v+"\n")
	}
	return nil
}

// shell runs a command with sh -c, streaming its output to the cell.
func (s *Session) shell(ctx context.Context, c *cell, cmdline string) *Error {
	if cmdline == "" {
		return usage("! needs a command")
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", cmdline)
	var mu sync.Mutex
	cmd.Stdout = streamWriter{c.out, "stdout", &mu}
	cmd.Stderr = streamWriter{c.out, "stderr", &mu}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return &Error{Name: "Interrupted", Value: errInterrupted.Error()}
		}
		if _, ok := err.(*exec.ExitError); !ok {
			return &Error{Name: "OSError", Value: fmt.Sprintf("!%s: %v", cmdline, err)}
		}
		c.out.Stream("stderr", fmt.Sprintf("(%s)\n", err))
	}
	return nil
}

type streamWriter struct {
	out  Output
	name string
	mu   *sync.Mutex
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.Stream(w.name, string(p))
	return len(p), nil
}

// helpText lists the preloaded packages, the other importable packages and
// the magics.
func helpText() string {
	var sb strings.Builder
	sb.WriteString("Harmonium: Go notebooks (yaegi) with compiled rbmcore.\n\nPreloaded in every cell (no import needed):\n")
	for _, p := range stdlib.Preload() {
		fmt.Fprintf(&sb, "  %-10s %s\n", filepath.Base(p), p)
	}
	sb.WriteString("  ctx        the running cell's context.Context (cancelled on interrupt): pass it to long rbmcore calls\n")
	sb.WriteString("\nImportable by path: the Go standard library, and\n")
	var others []string
	for k := range stdlib.Symbols {
		p := k[:strings.LastIndex(k, "/")]
		if !strings.HasPrefix(p, stdlib.RBMCorePrefix) && p != stdlib.DisplayPath && p != stdlib.SweepPath {
			others = append(others, p)
		}
	}
	sort.Strings(others)
	for _, p := range others {
		sb.WriteString("  " + p + "\n")
	}
	sb.WriteString("\nMagics (at the start of a line):\n")
	for _, k := range sortedKeys(Magics) {
		sb.WriteString("  " + Magics[k] + "\n")
	}
	sb.WriteString("\nDisplay: display.Show(v), .HTML, .Markdown, .LaTeX, .JSON, .PNG, .JPEG, .SVG, .Clear, display.NewProgress(label, total) with .Func() and .Phase(text).\n")
	sb.WriteString("A cell's last expression is shown richly (plots, images, matrices, types with HTML()/Markdown()/PNG()/SVG() methods).\n")
	return sb.String()
}

// whos renders the %whos table.
func (s *Session) whos() string {
	var sb strings.Builder
	w := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "Name\tType\tData/Info")
	fmt.Fprintln(w, "----\t----\t---------")
	globals := s.globals()
	for _, n := range s.userNames() {
		internal := n
		if r, ok := s.renames[n]; ok {
			internal = r
		}
		if v, ok := globals[internal]; ok {
			fmt.Fprintf(w, "%s\t%s\t%s\n", n, typeName(v), summary(v))
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t\n", n, s.decls[internal])
	}
	w.Flush()
	return sb.String()
}

func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	if v.CanInterface() {
		if _, ok := v.Interface().(interface{ ExactString() string }); ok {
			return "untyped const"
		}
	}
	t := v.Type().String()
	if v.Kind() == reflect.Interface && !v.IsNil() {
		t = v.Elem().Type().String()
	}
	return t
}

// summary is a one-line description of a value.
func summary(v reflect.Value) string {
	if !v.IsValid() || !v.CanInterface() {
		return ""
	}
	s := strings.ReplaceAll(display.Text(v.Interface()), "\n", " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
