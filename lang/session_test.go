package lang

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMixedCellsAndReruns(t *testing.T) {
	s := newSession(t)
	cell := `import "fmt"
import "strings"
base := 10
func add(x int) int { return x + base }
type Pair struct{ A, B int }
func (p Pair) Sum() int { return add(p.A + p.B) }
const k = 2
fmt.Println(strings.Repeat("ab", k), Pair{1, 2}.Sum())`
	for run := 0; run < 2; run++ { // re-running the same cell works
		rec, _ := mustRun(t, s, cell)
		if got := rec.stdout.String(); got != "abab 13\n" {
			t.Fatalf("run %d: stdout %q", run, got)
		}
	}
	// Redefining a function, a type and a method.
	mustRun(t, s, "func add(x int) int { return x + 2*base }")
	if _, res := mustRun(t, s, "add(1)"); plain(res) != "21" {
		t.Errorf("redefined add(1) = %q", plain(res))
	}
	mustRun(t, s, "type Pair struct{ A, B, C int }\nfunc (p Pair) Sum() int { return p.A + p.B + p.C }")
	if _, res := mustRun(t, s, "Pair{1, 2, 3}.Sum()"); plain(res) != "6" {
		t.Errorf("redefined type: Sum = %q", plain(res))
	}
	mustRun(t, s, "func (p Pair) Sum() int { return 100 * p.C }")
	if _, res := mustRun(t, s, "Pair{1, 2, 3}.Sum()"); plain(res) != "300" {
		t.Errorf("redefined method: Sum = %q", plain(res))
	}
	// Statements around a hoisted declaration.
	if rec, _ := mustRun(t, s, "import \"fmt\"\nq := 4\nfunc sq(x int) int { return x * x }\nfmt.Println(sq(q))"); rec.stdout.String() != "16\n" {
		t.Errorf("statements around a declaration: %q", rec.stdout.String())
	}
	// A whole program pasted in a cell: the package clause is ignored and
	// yaegi runs main.
	if rec, _ := mustRun(t, s, "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"main ran\") }"); rec.stdout.String() != "main ran\n" {
		t.Errorf("pasted program: %q", rec.stdout.String())
	}
	// Forward use: a statement calling a function declared below it.
	if _, res := mustRun(t, s, "twice(4)\nfunc twice(x int) int { return 2 * x }"); plain(res) != "" {
		t.Errorf("a cell ending with a declaration has no value, got %q", plain(res))
	}
	if _, res := mustRun(t, s, "y := twice(4)\ny"); plain(res) != "8" {
		t.Errorf("twice(4) = %q", plain(res))
	}
}

func TestModernGo(t *testing.T) {
	s := sharedSession(t)
	cases := []struct{ code, want string }{
		{"total := 0\nfor i := range 5 { total += i }\ntotal", "10"},
		{"n := int64(4)\nvar acc int64\nfor i := range n { acc += i }\nacc", "6"},
		{"cnt := 0\nfor range 3 { cnt++ }\ncnt", "3"},
		{"min(3, 1, 2)", "1"},
		{"max(2.5, 1)", "2.5"},
		{"fx := 2.5\nmin(fx, 1)", "1"},
		{"fy := -1.0\nmax(fy, 3, 2)*2", "6"},
		{"import \"math\"\nnan := math.NaN()\nmath.IsNaN(min(1.0, nan))", "true"},
		{"mm := map[string]int{\"a\": 1, \"b\": 2}\nclear(mm)\nlen(mm)", "0"},
		{"sl := []int{1, 2, 3}\nclear(sl)\nsl", "[0 0 0]"},
		{"var fs []func() int\nfor i := 0; i < 3; i++ { fs = append(fs, func() int { return i }) }\nfs[0]() + 10*fs[1]() + 100*fs[2]()", "210"},
		{"var gs []func() int\nfor _, v := range []int{1, 2, 3} { gs = append(gs, func() int { return v }) }\ngs[0]() + 10*gs[1]() + 100*gs[2]()", "321"},
		{"var hs []func() int\nfor i := range 3 { hs = append(hs, func() int { return i }) }\nhs[0]() + 10*hs[1]() + 100*hs[2]()", "210"},
		// The same rewrites inside function declarations.
		{"func tri(n int) (s int) {\n\tfor i := range n + 1 { s += i }\n\treturn max(s, 0)\n}\ntri(4)", "10"},
		{"func lowest(xs []float64) float64 {\n\tm := xs[0]\n\tfor _, x := range xs { m = min(m, x) }\n\treturn m\n}\nlowest([]float64{3, -2, 5})", "-2"},
	}
	for _, c := range cases {
		if _, res := mustRun(t, s, c.code); plain(res) != c.want {
			t.Errorf("%q = %q, want %q", c.code, plain(res), c.want)
		}
	}
}

func TestGoroutinePanic(t *testing.T) {
	s := sharedSession(t)
	rec, res := run(t, s, "import \"time\"\ngo func() {\n\tvar m map[string]int\n\tm[\"x\"] = 1\n}()\ntime.Sleep(200 * time.Millisecond)")
	if res.Err == nil || res.Err.Name != "GoroutinePanic" {
		t.Fatalf("want a GoroutinePanic error, got %+v (stderr %q)", res.Err, rec.stderr.String())
	}
	if !strings.Contains(strings.Join(res.Err.Traceback, "\n"), "at goroutine (cell "+strconv.Itoa(s.cellNumber())+", line 2,") {
		t.Errorf("traceback does not point at the goroutine of cell line 2: %q", res.Err.Traceback)
	}
	if strings.Contains(rec.stderr.String(), "panic") {
		t.Errorf("panic frames leaked to stderr: %q", rec.stderr.String())
	}
	if _, res := mustRun(t, s, "1 + 1"); plain(res) != "2" {
		t.Errorf("session unusable after goroutine panic")
	}
	// A go statement in a function declared in an earlier cell reports to
	// the cell that calls the function.
	mustRun(t, s, "func spawn() { go func() { panic(\"later\") }() }")
	_, res = run(t, s, "spawn()\ntime.Sleep(200 * time.Millisecond)")
	if res.Err == nil || res.Err.Name != "GoroutinePanic" || res.Err.Value != "later" {
		t.Errorf("goroutine panic from a declared function: %+v", res.Err)
	}
}

func TestOutputCapture(t *testing.T) {
	s := sharedSession(t)
	rec, res := mustRun(t, s, `import (
	"fmt"
	"log"
	"os"
)
fmt.Println("fmt")
fmt.Fprintln(os.Stdout, "os.Stdout")
os.Stderr.WriteString("os.Stderr\n")
log.SetFlags(0)
log.Println("log")`)
	if got := rec.stdout.String(); got != "fmt\nos.Stdout\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := rec.stderr.String(); !strings.Contains(got, "os.Stderr\n") || !strings.Contains(got, "log\n") {
		t.Errorf("stderr = %q", got)
	}
	if res.Data != nil {
		t.Errorf("log.Println's results shown: %v", res.Data)
	}
}

// A cell that closes os.Stdout or os.Stderr loses only its own later output:
// the next cell's is captured again.
func TestClosedStdoutRevived(t *testing.T) {
	s := newSession(t)
	rec, res := run(t, s, "import (\"fmt\"; \"os\")\nfmt.Println(\"before\")\nos.Stdout.Close()\nos.Stderr.Close()")
	if res.Err != nil || rec.stdout.String() != "before\n" {
		t.Fatalf("closing cell: err %v, stdout %q", res.Err, rec.stdout.String())
	}
	rec, res = run(t, s, "fmt.Println(\"after\")\nfmt.Fprintln(os.Stdout, \"file\")\nfmt.Fprintln(os.Stderr, \"err\")")
	if res.Err != nil || rec.stdout.String() != "after\nfile\n" || rec.stderr.String() != "err\n" {
		t.Errorf("next cell: err %v, stdout %q, stderr %q", res.Err, rec.stdout.String(), rec.stderr.String())
	}
}

func TestResults(t *testing.T) {
	s := sharedSession(t)
	for _, c := range []struct{ code, want string }{
		{"import \"fmt\"\nfmt.Println(\"x\")", ""},              // (n, err): not the point
		{"import \"math\"\nmath.Sqrt(16)", "4"},                 // single result
		{"rv := 3", ""},                                         // assignment
		{"func noop() {}\nnoop()", ""},                          // no result
		{"\"text\"", `"text"`},                                  // strings quoted
		{"map[string]int{\"a\": 1}", "map[a:1]"},                // maps
		{"type Temp float64\nTemp(21.5)", "21.5"},               // conversion to a cell type
		{"import \"strconv\"\nstrconv.Atoi(\"12\")", ""},        // (int, error)
		{"import \"strings\"\nstrings.ToUpper(\"go\")", `"GO"`}, // stdlib call
		{"rv", "3"},
	} {
		if _, res := mustRun(t, s, c.code); plain(res) != c.want {
			t.Errorf("%q shows %q, want %q", c.code, plain(res), c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	s := sharedSession(t)
	for _, c := range []struct{ code, name, where string }{
		{"x1 := 1\ny1 := undefinedName + x1", "CompileError", "cell:2:"},
		{"z := \"unterminated\n", "SyntaxError", "cell:1:6"},
		{"func bad() {\n\tpanic(\"boom\")\n}\nbad()", "Panic", "line 2, column 2"},
		{"var arr []int\n_ = arr[5]", "RuntimeError", "line 2, column 1"},
		{"import \"nosuch/pkg\"", "ImportError", "cell:1:1"},
		{"%nosuchmagic", "UsageError", ""},
		{"for i := 0; i < min(3, i+1); i++ {}", "CompileError", "cell:1:17"},
	} {
		rec, res := run(t, s, c.code)
		if res.Err == nil {
			t.Errorf("%q: no error", c.code)
			continue
		}
		tb := res.Err.Value + "\n" + strings.Join(res.Err.Traceback, "\n")
		if res.Err.Name != c.name || !strings.Contains(tb, c.where) {
			t.Errorf("%q: got %s %q, want %s at %s", c.code, res.Err.Name, tb, c.name, c.where)
		}
		if strings.Contains(rec.stderr.String(), "panic:") {
			t.Errorf("%q: panic frames on stderr: %q", c.code, rec.stderr.String())
		}
	}
}

func TestInterrupt(t *testing.T) {
	s := sharedSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	t0 := time.Now()
	res := s.Execute(ctx, "for {}", &recorder{})
	if res.Err == nil || res.Err.Name != "Interrupted" {
		t.Fatalf("want Interrupted, got %+v", res.Err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("interrupt took %v", d)
	}
	// Native code sees the cell's context through ctx.
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel2)
	rec := &recorder{}
	res = s.Execute(ctx2, "import \"fmt\"\n<-ctx.Done()\nfmt.Println(ctx.Err())", rec)
	if res.Err != nil && res.Err.Name != "Interrupted" {
		t.Fatalf("waiting on ctx: %+v", res.Err)
	}
	if _, res := mustRun(t, s, "ctx.Err() == nil"); plain(res) != "true" {
		t.Errorf("a new cell's ctx is not live: %q", plain(res))
	}
	// A long native rbmcore call stops within a second, given ctx or even
	// context.Background().
	mustRun(t, s, "import \"context\"\nrm := rbm.New(rbm.Binary(200), rbm.Binary(100), rbm.Seed(1))\nchains, _ := rbm.NewChains(rm, 50, 1)")
	for _, cell := range []string{"chains.Run(ctx, 1000000, nil)", "chains.Run(context.Background(), 1000000, nil)"} {
		ctx3, cancel3 := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel3)
		t0 := time.Now()
		res = s.Execute(ctx3, cell, &recorder{})
		if res.Err == nil {
			t.Errorf("%s: not interrupted", cell)
		}
		if d := time.Since(t0); d > 1300*time.Millisecond {
			t.Errorf("%s: interrupt took %v", cell, d)
		}
		// The native loop really stopped: its sweep count no longer moves.
		time.Sleep(200 * time.Millisecond)
		_, r1 := mustRun(t, s, "chains.Sweeps()")
		time.Sleep(300 * time.Millisecond)
		_, r2 := mustRun(t, s, "chains.Sweeps()")
		if plain(r1) != plain(r2) || plain(r1) == "0" {
			t.Errorf("%s: native loop still running after interrupt (%s then %s sweeps)", cell, plain(r1), plain(r2))
		}
	}
}

func TestMagics(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "alpha := 1\nfunc beta() {}\ntype Gamma struct{}")
	if rec, _ := mustRun(t, s, "%who"); strings.TrimSpace(rec.stdout.String()) != "Gamma  alpha  beta" {
		t.Errorf("%%who = %q", rec.stdout.String())
	}
	if rec, _ := mustRun(t, s, "%whos"); !strings.Contains(rec.stdout.String(), "alpha") || !strings.Contains(rec.stdout.String(), "int") {
		t.Errorf("%%whos = %q", rec.stdout.String())
	}
	if rec, _ := mustRun(t, s, "%time x := 1 + 1"); !strings.Contains(rec.stdout.String(), "Wall time:") {
		t.Errorf("%%time = %q", rec.stdout.String())
	}
	rec, _ := mustRun(t, s, "%timeit -r 3 sum := 0; for i := 0; i < 100; i++ { sum += i }")
	if out := rec.stdout.String(); !strings.Contains(out, "per loop (mean ± std. dev. of 3 runs") {
		t.Errorf("%%timeit = %q", out)
	}
	rec, _ = mustRun(t, s, "%%timeit\nacc := 0\nacc++")
	if out := rec.stdout.String(); !strings.Contains(out, "of 7 runs") {
		t.Errorf("%%%%timeit = %q", out)
	}
	if rec, _ := mustRun(t, s, "%env HM_TEST_VAR=42"); !strings.Contains(rec.stdout.String(), "HM_TEST_VAR=42") {
		t.Errorf("%%env set: %q", rec.stdout.String())
	}
	if _, res := mustRun(t, s, "import \"os\"\nos.Getenv(\"HM_TEST_VAR\")"); plain(res) != `"42"` {
		t.Errorf("env not visible to cells: %q", plain(res))
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if rec, _ := mustRun(t, s, "%cd "+dir); !strings.Contains(rec.stdout.String(), filepath.Base(dir)) {
		t.Errorf("%%cd: %q", rec.stdout.String())
	}
	mustRun(t, s, "%%writefile hello.txt\nhello\n")
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("%%%%writefile wrote %q, %v", b, err)
	}
	if rec, _ := mustRun(t, s, "!cat hello.txt"); rec.stdout.String() != "hello\n" {
		t.Errorf("!cat = %q", rec.stdout.String())
	}
	if rec, _ := mustRun(t, s, "%help"); !strings.Contains(rec.stdout.String(), "display") || !strings.Contains(rec.stdout.String(), "%timeit") {
		t.Errorf("%%help = %q", rec.stdout.String())
	}
	// Magics and Go lines mix; line numbers of the Go code stay right.
	_, res := run(t, s, "!true\nzz := 1\nzz = undefinedVar")
	if res.Err == nil || !strings.Contains(res.Err.Value, "cell:3:") {
		t.Errorf("mixed magic + Go error position: %+v", res.Err)
	}
	mustRun(t, s, "%reset")
	if _, res := run(t, s, "alpha"); res.Err == nil {
		t.Errorf("alpha survived %%reset")
	}
}

func TestInput(t *testing.T) {
	s := sharedSession(t)
	rec, _ := mustRun(t, s, "import \"fmt\"\nvar who string\nfmt.Scanln(&who)\nfmt.Println(\"hello\", who)")
	if rec.stdout.String() != "hello 42\n" { // recorder.Input answers 42
		t.Errorf("stdin: %q", rec.stdout.String())
	}
}

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{{1.5, "1.5 s"}, {0.00123, "1.23 ms"}, {2.5e-6, "2.5 µs"}, {7e-9, "7 ns"}} {
		if got := formatDuration(c.s); got != c.want {
			t.Errorf("formatDuration(%g) = %q, want %q", c.s, got, c.want)
		}
	}
	m, sd := meanStd([]float64{1, 2, 3, 4})
	if m != 2.5 || math.Abs(sd-math.Sqrt(5.0/3)) > 1e-12 {
		t.Errorf("meanStd = %g, %g", m, sd)
	}
	_ = strconv.Itoa
}
