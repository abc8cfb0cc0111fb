package lang

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/traefik/yaegi/interp"
	yaegistd "github.com/traefik/yaegi/stdlib"

	"github.com/harmonium-rbm/harmonium/lang/display"
	"github.com/harmonium-rbm/harmonium/stdlib"
)

// Output is where a running cell sends what it produces, live. The kernel
// implements it by publishing on iopub; `harmonium run` by recording outputs.
// Its methods are called concurrently (from the readers of the cell's captured
// stdout and stderr, and from the cell itself for displays and progress bars),
// so an implementation must be safe for concurrent use.
type Output interface {
	// Stream sends text on "stdout" or "stderr".
	Stream(name, text string)
	// Display sends a MIME bundle (display_data), or replaces the display
	// transient["display_id"] when update is set (update_display_data).
	Display(data, metadata, transient map[string]any, update bool)
	// ClearOutput clears the cell's output (when the next output comes if wait).
	ClearOutput(wait bool)
	// Input asks the user for a line of text.
	Input(prompt string, password bool) (string, error)
}

// Result is the outcome of one cell.
type Result struct {
	// Data and Metadata are the execute_result bundle; Data is nil when the
	// cell has no value to show.
	Data, Metadata map[string]any
	// Err is the cell's error, nil on success.
	Err *Error
}

// Error is a failed cell's error output.
type Error struct {
	Name, Value string
	Traceback   []string
}

func (e *Error) Error() string { return e.Name + ": " + e.Value }

// Options configures a Session.
type Options struct {
	// Terminal draws progress bars as text on stderr (headless runner)
	// instead of HTML bars updated in place.
	Terminal bool
}

// hmPath is the import path of the session's private native helpers.
const hmPath = "github.com/harmonium-rbm/harmonium/lang/internal/hm"

// Session is one notebook's interpreter state: cells executed in it share
// variables, functions, types and imports. Execute calls are serialised.
type Session struct {
	opts Options

	mu       sync.Mutex // serialises Execute and friends
	in       *interp.Interpreter
	exports  map[string]map[string]reflect.Value // import path -> symbols
	names    map[string]string                   // import path -> package name
	imports  map[string]string                   // name in cells -> import path
	handles  map[string]bool                     // variables holding a *display.Handle
	decls    map[string]string                   // func/type/const names declared by cells -> kind
	sources  map[string]string                   // source of the functions declared by cells, by name
	failed   map[string]failedDecl               // names whose declaration failed (see failed.go)
	declCell map[string]int                      // function names declared by cells -> cell number
	at       atomic.Int64                        // 1 + offset of the running top-level statement (see positions.go)
	firstAt  int64                               // the first value of at for the next program run: its first statement
	types    map[string]*typeRec                 // types declared by cells, by user-visible name
	renames  map[string]string                   // redefined type name -> current internal name
	pending  pendingTypes                        // renames of the running cell
	counter  int                                 // fresh-name counter
	count    int                                 // cells executed

	guards guards // recursion depth guard of the functions declared in cells

	stdout, stderr *pipeCapture
	yerr           *stderrSplitter

	curMu     sync.Mutex
	cur       *cell
	abandoned *abandonedCell // an interrupted cell whose program still runs (see interrupt.go)
	running   *execution     // the program running or last run
	lastPanic *panicSite     // the last panic call of the running program (see positions.go)
	sites     []faultSite    // statements of cell functions that can fail, by marker - 1 (see markFaults)
	siteVar   *int64         // the interpreted __hmSite: the marker of the last such statement entered

	empty    *interp.Program // the empty program arm runs
	progress map[string]bool // progress bars already shown (Jupyter mode) or completed (terminal mode)
	ctxVar   context.Context // the `ctx` visible in cells

	cellTypes cellTypes // the cells' struct types, for fmt (see fmttypes.go)
}

// cell is the state of the running (or last) cell.
type cell struct {
	n         int
	ctx       context.Context
	out       Output
	result    any
	hasResult bool
	goErr     *Error
	limitErr  *Error // a guard ended one of the cell's goroutines (see guards.Enter)
	finished  bool
}

// New starts a session: an interpreter with the Go standard library, gonum,
// gonum/plot, the rbmcore packages and display, the latter two preloaded under
// their short names, and `ctx` bound to the running cell's context.
func New(opts Options) (*Session, error) {
	s := &Session{
		opts:     opts,
		imports:  map[string]string{},
		handles:  map[string]bool{},
		decls:    map[string]string{},
		types:    map[string]*typeRec{},
		renames:  map[string]string{},
		progress: map[string]bool{},
	}
	s.ctxVar = cellContext{s}
	s.guards.trip = s.limitExceeded
	var err error
	if s.stdout, err = newPipeCapture(func(t string) { s.emit("stdout", t) }); err != nil {
		return nil, err
	}
	if s.stderr, err = newPipeCapture(func(t string) { s.emit("stderr", t) }); err != nil {
		s.stdout.Close()
		return nil, err
	}
	s.yerr = &stderrSplitter{forward: func(t string) { s.emit("stderr", t) }}
	if err := s.reset(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// reset replaces the interpreter by a fresh one (session start and %reset).
func (s *Session) reset() error {
	stdin := &stdinReader{s: s}
	s.in = interp.New(interp.Options{
		Stdin:        stdin,
		Stdout:       s.stdout,
		Stderr:       s.yerr,
		Unrestricted: true,
		Args:         []string{"harmonium"},
	})
	s.empty = nil
	s.exports = map[string]map[string]reflect.Value{}
	s.names = map[string]string{}
	for _, table := range []map[string]map[string]reflect.Value{yaegistd.Symbols, stdlib.Symbols} {
		for k, syms := range table {
			p, name := path.Dir(k), path.Base(k)
			s.exports[p] = syms
			s.names[p] = name
		}
	}
	if err := s.in.Use(yaegistd.Symbols); err != nil {
		return fmt.Errorf("loading the Go standard library symbols: %w", err)
	}
	if err := s.in.Use(stdlib.Symbols); err != nil {
		return fmt.Errorf("loading the preloaded package symbols: %w", err)
	}
	if err := s.in.Use(stdinExports(stdin)); err != nil {
		return fmt.Errorf("binding os.Stdin: %w", err)
	}
	if err := s.in.Use(wrapperExports); err != nil {
		return fmt.Errorf("loading the wrappers of unnamed interfaces: %w", err)
	}
	hm := map[string]reflect.Value{
		"Ctx":       reflect.ValueOf(&s.ctxVar).Elem(),
		"GoPanic":   reflect.ValueOf(s.goPanic),
		"SetResult": reflect.ValueOf(s.setResult),
		"Clear":     reflect.ValueOf(clearValue),
		"Cell":      reflect.ValueOf(s.cellNumber),
		"Text":      reflect.ValueOf(display.Text),
		"Enter":     reflect.ValueOf(s.guards.Enter),
		"Leave":     reflect.ValueOf(s.guards.Leave),
		"MakeSize":  reflect.ValueOf(checkMake),
		"Sleep":     reflect.ValueOf(s.sleep),
		"At":        reflect.ValueOf(s.stmtAt),
		"PanicAt":   reflect.ValueOf(s.panicAt),
		"Mark":      reflect.ValueOf(s.mark),
	}
	for k, v := range unnamedInterfaceHelpers {
		hm[k] = v
	}
	if err := s.in.Use(interp.Exports{hmPath + "/hm": hm}); err != nil {
		return fmt.Errorf("loading the session helpers: %w", err)
	}
	if err := s.loadGoExtras(); err != nil {
		return err
	}
	s.imports = map[string]string{}
	s.handles = map[string]bool{}
	s.decls = map[string]string{}
	s.failed = map[string]failedDecl{}
	s.declCell = map[string]int{}
	s.types = map[string]*typeRec{}
	s.renames = map[string]string{}
	s.noteTypes(nil)
	var pre strings.Builder
	pre.WriteString("import __hm \"" + hmPath + "\"\n")
	for _, p := range stdlib.Preload() {
		name := s.names[p]
		fmt.Fprintf(&pre, "import %s %q\n", name, p)
		s.imports[name] = p
	}
	if _, err := s.in.Eval(inCell(pre.String())); err != nil {
		return fmt.Errorf("preloading packages: %w", err)
	}
	if _, err := s.in.Eval(inCell(preamble)); err != nil {
		return fmt.Errorf("evaluating the session preamble: %w", err)
	}
	if _, err := s.in.Eval(inCell("var ctx = __hm.Ctx")); err != nil {
		return fmt.Errorf("defining ctx: %w", err)
	}
	v, err := s.in.Eval(inCell("&__hmSite"))
	if err != nil {
		return fmt.Errorf("locating the fault-site marker: %w", err)
	}
	p, ok := v.Interface().(*int64)
	if !ok {
		return fmt.Errorf("locating the fault-site marker: &__hmSite is a %s", v.Type())
	}
	s.siteVar, s.sites = p, nil
	return nil
}

// inCell positions session code (preamble, probes) at line 1.
func inCell(code string) string { return lineDirective(1, 1) + code }

// preamble defines the interpreted helpers the rewrites call. Detection of
// HTML/Markdown/SVG/PNG methods must run in interpreted code: yaegi hides
// methods of types declared in cells from compiled type assertions. Its type
// switches can also misfire on such types, hence the recovers.
const preamble = `
var __hmSite int64

func __hmGo(cell int, f func()) {
	defer func() {
		if r := recover(); r != nil {
			__hm.GoPanic(cell, r)
		}
	}()
	f()
}

func __hmHTML(v interface{}) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	switch x := v.(type) {
	case interface{ HTML() string }:
		return x.HTML(), true
	}
	return "", false
}

func __hmMarkdown(v interface{}) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	switch x := v.(type) {
	case interface{ Markdown() string }:
		return x.Markdown(), true
	}
	return "", false
}

func __hmSVG(v interface{}) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	switch x := v.(type) {
	case interface{ SVG() string }:
		return x.SVG(), true
	}
	return "", false
}

func __hmPNG(v interface{}) (b []byte, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	switch x := v.(type) {
	case interface{ PNG() []byte }:
		return x.PNG(), true
	}
	return nil, false
}

func __hmRich(v interface{}) interface{} {
	r := &display.Rich{}
	r.HTML, r.HasHTML = __hmHTML(v)
	r.Markdown, r.HasMD = __hmMarkdown(v)
	r.SVG, r.HasSVG = __hmSVG(v)
	r.PNG, r.HasPNG = __hmPNG(v)
	if !r.HasHTML && !r.HasMD && !r.HasSVG && !r.HasPNG {
		return v
	}
	r.Text = __hm.Text(v)
	return r
}

func __hmResult(v interface{}) { __hm.SetResult(__hmRich(v)) }
`

// Close releases the session's pipes.
func (s *Session) Close() {
	if s.stdout != nil {
		s.stdout.Close()
	}
	if s.stderr != nil {
		s.stderr.Close()
	}
}

// emit sends captured text to the current cell.
func (s *Session) emit(name, text string) {
	if _, out := s.currentOut(); out != nil {
		out.Stream(name, text)
		return
	}
	if name == "stderr" {
		fmt.Fprint(os.Stderr, text)
	}
}

func (s *Session) current() *cell {
	s.curMu.Lock()
	defer s.curMu.Unlock()
	return s.cur
}

// setOut changes the Output of cell c (which readers outside the cell's
// goroutine read with currentOut).
func (s *Session) setOut(c *cell, out Output) {
	s.curMu.Lock()
	c.out = out
	s.curMu.Unlock()
}

// currentOut returns the current cell and its Output (nil if none). The
// Output changes when the cell is abandoned (see abandon), so code running
// outside the cell's goroutine reads it here.
func (s *Session) currentOut() (*cell, Output) {
	s.curMu.Lock()
	defer s.curMu.Unlock()
	if s.cur == nil {
		return nil, nil
	}
	return s.cur, s.cur.out
}

// guardSite registers a function declared at line of the running cell for
// the depth guard.
func (s *Session) guardSite(name string, line int) int {
	return s.guards.site(name, s.cellNumber(), line)
}

// cellNumber is the number of the running (or last) cell.
func (s *Session) cellNumber() int {
	if c := s.current(); c != nil {
		return c.n
	}
	return 0
}

func (s *Session) setResult(v any) {
	if c := s.current(); c != nil {
		c.result, c.hasResult = v, true
	}
}

// goPanic is called by the goroutine wrapper when a goroutine started by cell
// n panicked: the panic becomes that cell's error if it is still running,
// an error text on the current output otherwise.
func (s *Session) goPanic(n int, r any) {
	frames := s.yerr.takeFrames()
	e := s.placeFrames(panicError(r, frames, "goroutine panic"), "", n)
	s.curMu.Lock()
	c := s.cur
	if c != nil && c.n == n && !c.finished {
		if c.goErr == nil {
			c.goErr = e
		}
		s.curMu.Unlock()
		return
	}
	s.curMu.Unlock()
	s.emit("stderr", fmt.Sprintf("%s (goroutine started by cell %d): %s\n%s\n", e.Name, n, e.Value, strings.Join(e.Traceback, "\n")))
}

// limitExceeded makes a guard's error the error of the running cell, or
// shows it on stderr if no cell runs (a goroutine of an earlier cell).
func (s *Session) limitExceeded(e *LimitError) {
	err := &Error{Name: e.Name, Value: e.Msg, Traceback: []string{e.Name + ": " + e.Msg}}
	s.curMu.Lock()
	c := s.cur
	if c != nil && !c.finished {
		if c.limitErr == nil {
			c.limitErr = err
		}
		s.curMu.Unlock()
		return
	}
	s.curMu.Unlock()
	s.emit("stderr", err.Traceback[0]+"\n")
}

// cellContext is the initial value of the cells' `ctx` (Execute then sets
// ctx to each cell's own context): it follows the running cell's context, so
// long native calls given ctx stop on interrupt.
type cellContext struct{ s *Session }

func (c cellContext) ctx() context.Context {
	if cur := c.s.current(); cur != nil && cur.ctx != nil {
		return cur.ctx
	}
	return context.Background()
}

// Deadline implements context.Context.
func (c cellContext) Deadline() (time.Time, bool) { return c.ctx().Deadline() }

// Done implements context.Context.
func (c cellContext) Done() <-chan struct{} { return c.ctx().Done() }

// Err implements context.Context.
func (c cellContext) Err() error { return c.ctx().Err() }

// Value implements context.Context.
func (c cellContext) Value(key any) any { return c.ctx().Value(key) }

// String names the context in notebook output.
func (c cellContext) String() string { return "harmonium.CellContext" }

// Display implements display.Sink for the running cell.
func (s *Session) Display(data, metadata map[string]any, id string, update bool) {
	if _, out := s.currentOut(); out != nil {
		out.Display(data, metadata, map[string]any{"display_id": id}, update)
	}
}

// Clear implements display.Sink.
func (s *Session) Clear(wait bool) {
	if _, out := s.currentOut(); out != nil {
		out.ClearOutput(wait)
	}
}

// Progress implements display.Sink: an HTML bar updated in place, or a text
// bar redrawn with carriage returns in terminal mode.
func (s *Session) Progress(id string, st display.ProgressState) {
	_, out := s.currentOut()
	if out == nil {
		return
	}
	if s.opts.Terminal {
		// A completed bar ends its line once: a bar set to its total and then
		// marked done would otherwise leave the finished line twice.
		complete := st.Total > 0 && st.Done >= st.Total
		s.curMu.Lock()
		ended := s.progress[id]
		s.progress[id] = complete
		s.curMu.Unlock()
		if complete && ended {
			return
		}
		end := ""
		if complete {
			end = "\n"
		}
		out.Stream("stderr", "\r"+st.Text(30)+end)
		return
	}
	s.curMu.Lock()
	seen := s.progress[id]
	s.progress[id] = true
	s.curMu.Unlock()
	data := map[string]any{"text/html": st.HTML(), "text/plain": st.Text(30)}
	out.Display(data, map[string]any{}, map[string]any{"display_id": id}, seen)
}

// clearValue implements the clear builtin for maps and slices.
func clearValue(v any) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice:
		rv.Clear()
	default:
		panic(fmt.Sprintf("invalid argument: clear(%T): argument must be a map or slice", v))
	}
}

// Execute runs one cell and returns its value and error. Output produced
// while it runs goes to out, live. Cancelling ctx interrupts it.
func (s *Session) Execute(ctx context.Context, code string, out Output) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	// An interrupted cell's program still inside a compiled call must end
	// before the interpreter runs anything else.
	if e := s.awaitAbandoned(ctx, out); e != nil {
		return Result{Err: e}
	}
	// A cell may have closed os.Stdout or os.Stderr; the next one gets its
	// output captured again.
	for _, p := range []*pipeCapture{s.stdout, s.stderr} {
		if err := p.Revive(); err != nil {
			return Result{Err: &Error{Name: "CaptureError", Value: err.Error(), Traceback: []string{"CaptureError: " + err.Error()}}}
		}
	}
	s.count++
	c := &cell{n: s.count, ctx: ctx, out: out}
	s.curMu.Lock()
	s.cur = c
	s.curMu.Unlock()
	// Each cell's ctx is its own context: a native call keeps the context of
	// the cell that made it, so a cancellation it has not yet seen cannot be
	// undone by the next cell starting.
	if g, ok := s.globals()["ctx"]; ok && g.CanSet() && g.Type() == reflect.TypeOf((*context.Context)(nil)).Elem() {
		g.Set(reflect.ValueOf(&ctx).Elem())
	}
	prevSink := display.SetSink(s)
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = s.stdout.File(), s.stderr.File()

	err := s.runCell(ctx, c, code)

	s.stdout.Sync()
	s.stderr.Sync()
	if !s.busy() {
		// An abandoned cell's compiled call keeps writing into the
		// capture, which discards it, not onto the process's streams.
		os.Stdout, os.Stderr = oldOut, oldErr
	}
	display.SetSink(prevSink)
	s.curMu.Lock()
	c.finished = true
	if err == nil && c.limitErr != nil {
		err = c.limitErr
	}
	if err == nil && c.goErr != nil {
		err = c.goErr
	}
	s.curMu.Unlock()
	s.yerr.takeFrames() // frames of recovered panics (rich detection) are noise
	if err != nil {
		s.userTerms(err, code)
	}
	res := Result{Err: err}
	if _, isHandle := display.Unwrap(c.result).(*display.Handle); isHandle {
		c.hasResult = false // display.Show(x) as the last line shows x once
	}
	if err == nil && c.hasResult {
		res.Data, res.Metadata = bundleOf(c.result)
	}
	return res
}

func bundleOf(v any) (map[string]any, map[string]any) {
	return display.Split(display.Bundle(v))
}

// runCell dispatches magics and Go code.
func (s *Session) runCell(ctx context.Context, c *cell, code string) *Error {
	if s.help(c, code) { // x? and x??
		return nil
	}
	if strings.HasPrefix(strings.TrimLeft(code, " \t\r\n"), "%%") {
		return s.cellMagic(ctx, c, strings.TrimLeft(code, " \t\r\n"))
	}
	// Lines starting (at column 0) with % or ! are magics and shell escapes;
	// the Go code between them runs in order.
	lines := strings.SplitAfter(code, "\n")
	var goBuf strings.Builder
	goStart := 1
	flush := func(next int) *Error {
		text := goBuf.String()
		goBuf.Reset()
		defer func() { goStart = next }()
		if strings.TrimSpace(text) == "" {
			return nil
		}
		// Keep line numbers: pad with the lines before.
		return s.runGo(ctx, c, strings.Repeat("\n", goStart-1)+text)
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "%") || strings.HasPrefix(l, "!") {
			if err := flush(i + 2); err != nil {
				return err
			}
			c.hasResult = false
			if err := s.lineMagic(ctx, c, strings.TrimRight(l, "\r\n")); err != nil {
				return err
			}
			continue
		}
		goBuf.WriteString(l)
	}
	return flush(len(lines) + 1)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var errInterrupted = errors.New("execution interrupted")

// Evaluate runs expr (e.g. a user_expressions entry) as a cell whose output is
// discarded and returns its value.
func (s *Session) Evaluate(ctx context.Context, expr string) Result {
	return s.Execute(ctx, expr, discardOutput{})
}
