package lang

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/mapping"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"github.com/harmonium-rbm/harmonium/stdlib"
)

// step is one cell of a notebook scenario and what it must print.
type step struct {
	code, stdout string
}

// runSteps runs the cells of a scenario in a fresh session, in order,
// checking each one's standard output.
func runSteps(t *testing.T, steps []step) {
	t.Helper()
	s := newSession(t)
	for i, st := range steps {
		rec, res := run(t, s, st.code)
		if res.Err != nil {
			t.Fatalf("cell %d %q failed: %s: %s\n%s", i+1, st.code, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"))
		}
		if got := rec.stdout.String(); got != st.stdout {
			t.Fatalf("cell %d %q printed %q, want %q (stderr %q)", i+1, st.code, got, st.stdout, rec.stderr.String())
		}
	}
}

// Typical notebook code at the top level of cells: values of compiled types
// (indexed, destructured, their fields), assignments from inside compound
// statements, closures, re-run cells.
func TestTopLevelNotebookCode(t *testing.T) {
	t.Run("index results of compiled functions", func(t *testing.T) {
		runSteps(t, []step{
			// yaegi's global type analysis could not type ts[0] for a
			// slice of a compiled type: "constant definition loop".
			{"import \"strings\"\nts := strings.Fields(\"a b c\")\nt0 := ts[0]\nprintln(t0, len(ts))", "a 3\n"},
			{"t1 := ts[1] + \"!\"\nprintln(t1)", "b!\n"}, // used to crash the compiler
			{"var t2 = ts[2]\nfirst, last := ts[0], ts[len(ts)-1]\nprintln(t2, first, last)", "c a c\n"},
			{"w := strings.Fields(\"x y\")[1]\nn := len(w)\nprintln(w, n)", "y 1\n"},
			{"import \"net/url\"\nv := url.Values{\"k\": {\"p\", \"q\"}}\nks := v[\"k\"]\nks = append(ks, \"r\")\nprintln(len(ks), ks[2])", "3 r\n"},
			// The variables are ordinary globals: typed, assignable, captured.
			{"t0 = t0 + t1\nget := func() string { return t0 }\nt0 += \"?\"\nprintln(get(), len(t0))", "ab!? 4\n"},
			// A failing declaration does not spoil later ones.
			{"y0 := 3\nprintln(y0)", "3\n"},
		})
	})
	t.Run("rbmcore terms", func(t *testing.T) {
		// The values are those of the compiled library called from Go.
		m := rbm.New(rbm.Binary(4), rbm.Binary(3), rbm.Seed(1))
		ts, err := mapping.All(context.Background(), m, 2)
		if err != nil || len(ts) < 2 {
			t.Fatalf("mapping.All: %v, %d terms", err, len(ts))
		}
		want := fmt.Sprintf("%d %v %v true\n", len(ts), ts[0].Sites, ts[0].Value)
		cell := "m := rbm.New(rbm.Binary(4), rbm.Binary(3), rbm.Seed(1))\nts, err := mapping.All(ctx, m, 2)\nt0 := ts[0]\nfmt.Println(len(ts), t0.Sites, t0.Value, err == nil)"
		runSteps(t, []step{
			{"import \"fmt\"\n" + cell, want},
			{cell, want}, // re-running the cell
			{"total := 0.0\nfor _, tt := range ts { total += tt.Value }\nlast := ts[len(ts)-1]\nfmt.Printf(\"%.12g %v\\n\", total, last.Sites)",
				fmt.Sprintf("%.12g %v\n", sum(ts), ts[len(ts)-1].Sites)},
			{"sites := ts[1].Sites\nfmt.Println(sites, len(sites) == len(ts[1].Sites))", fmt.Sprintf("%v true\n", ts[1].Sites)},
		})
	})
	t.Run("multi-value := from compiled calls", func(t *testing.T) {
		runSteps(t, []step{
			{"import \"strconv\"\nv, err := strconv.Atoi(\"12\")\nprintln(v+1, err == nil)", "13 true\n"},
			{"v, err = strconv.Atoi(\"x\")\nprintln(v, err != nil)", "0 true\n"},
			{"import \"strings\"\nbefore, after, found := strings.Cut(\"k=v\", \"=\")\nprintln(before, after, found)", "k v true\n"},
			{"q, r := 17/5, 17%5\nprintln(q, r)", "3 2\n"},
		})
	})
	t.Run("fields of compiled types and slices of compiled structs", func(t *testing.T) {
		runSteps(t, []step{
			{"import \"image\"\nr := image.Rect(0, 0, 4, 3)\nw, h := r.Dx(), r.Max.Y\nprintln(w, h)", "4 3\n"},
			{"pts := []image.Point{{1, 2}, {3, 4}}\np1 := pts[1]\npts[0].X = 9\nprintln(p1.X, p1.Y, pts[0].X)", "3 4 9\n"},
			{"sx := 0\nfor _, p := range pts { sx += p.X }\nprintln(sx)", "12\n"},
			{"ps := make([]image.Point, 2)\nps[1] = p1.Add(image.Pt(1, 1))\nq := ps[1]\nprintln(q.X, q.Y)", "4 5\n"},
			{"corner := r.Max\ncorner.X++\nprintln(corner.X, r.Max.X)", "5 4\n"},
		})
	})
	t.Run("assignments inside top-level compound statements", func(t *testing.T) {
		runSteps(t, []step{
			// Lost ints: yaegi skipped a parallel assignment holding a
			// composite literal.
			{"a, b, c, d := 1, 2, []int{3}, 4\nif true { a, b, c, d = 5, 6, []int{7}, 8 }\nprintln(a, b, c[0], d)", "5 6 7 8\n"},
			{"if a > 0 { a, c = a*10, append(c, 1) }\nprintln(a, len(c))", "50 2\n"},
			{"s, f, str := 0, 0.5, \"\"\nfor i := 0; i < 3; i++ { s += i; f *= 2; str += \"x\" }\nprintln(s, f, str)", "3 4 xxx\n"},
			{"for i := range 2 { s, str = s+i, str+\"y\" }\nprintln(s, str)", "4 xxxyy\n"},
			{"switch { case s > 3: f, c = -1, []int{0} }\nprintln(f, len(c))", "-1 1\n"},
			{"import \"strings\"\nws := strings.Fields(\"u v\")\nw0 := ws[0]\nif len(ws) > 1 { w0 = ws[1] }\nprintln(w0)", "v\n"},
			{"ch := make(chan int, 1)\nch <- 7\nk, l := 1, <-ch\nprintln(k, l)", "1 7\n"},
		})
	})
	t.Run("parallel assignments in functions", func(t *testing.T) {
		runSteps(t, []step{
			{"type P struct{ X int }\nfunc g() []int { return []int{6} }\nfunc f() (int, []int, *P) {\n\tvar a int\n\tvar b []int\n\tvar p *P\n\ta, b = 8, g()\n\tc, d := 2, []int{3}\n\tvar e, h = 4, P{5}\n\ta, p = a+c+d[0]+e, &P{h.X}\n\treturn a, b, p\n}\nx, y, z := f()\nprintln(x, y[0], z.X)", "17 6 5\n"},
			{"xs := []int{1, 2}\nxs[0], xs[1] = xs[1], xs[0]\nm, n := 1, 2\nm, n = n, m\nprintln(xs[0], xs[1], m, n)", "2 1 2 1\n"},
		})
	})
	t.Run("closures capturing top-level variables", func(t *testing.T) {
		runSteps(t, []step{
			{"n, hist := 0, []int{}\ninc := func() { n++; hist = append(hist, n) }\ninc()\ninc()\nprintln(n, len(hist))", "2 2\n"},
			{"for i := 0; i < 3; i++ { inc() }\nif n == 5 { inc() }\nprintln(n, hist[len(hist)-1])", "6 6\n"},
			{"import \"strings\"\nparts := strings.Split(\"p,q\", \",\")\np0 := parts[0]\nshow := func() string { return p0 + parts[1] }\np0 = \"z\"\nprintln(show())", "zq\n"},
		})
	})
	t.Run("re-running a cell", func(t *testing.T) {
		cell := "import \"strings\"\nacc := 0\nws := strings.Fields(\"aa b\")\nw := ws[0]\nfor _, x := range ws { acc += len(x) }\nif acc > 0 { acc, w = acc*2, w+\"!\" }\nprintln(acc, w)"
		runSteps(t, []step{{cell, "6 aa!\n"}, {cell, "6 aa!\n"}, {"println(acc, w)", "6 aa!\n"}})
	})
}

// Arithmetic on an element of a slice returned by a compiled method, at the
// top level: yaegi's global type analysis crashed on `vals[0] * -1` (a
// nil-pointer panic of the compiler); the statement now takes the
// evalBoxed path. In functions it always worked.
func TestTopLevelIndexArithmetic(t *testing.T) {
	runSteps(t, []step{
		{"import (\n\t\"fmt\"\n\t\"gonum.org/v1/gonum/mat\"\n)\nvar eig mat.EigenSym\neig.Factorize(mat.NewSymDense(2, []float64{2, 1, 1, 2}), false)\nvals := eig.Values(nil)\nshift := vals[0] * -1\nfmt.Println(shift, vals[1]*-1+shift)", "-1 -4\n"},
		{"gap := vals[1] - vals[0]*-1\nfunc neg(v []float64) float64 { return v[0] * -1 }\nfmt.Println(gap, neg(vals))", "4 -1\n"},
	})
}

// Several values assigned to map elements: yaegi v0.16.1 stored them in a
// copy of the element, so the map stayed unchanged.
func TestTupleAssignToMapElements(t *testing.T) {
	runSteps(t, []step{
		{"import (\n\t\"fmt\"\n\t\"strconv\"\n)\nm := map[string]int{}\nvar err error\nvar ok bool\nm[\"a\"], err = strconv.Atoi(\"42\")\nfmt.Println(m, err)", "map[a:42] <nil>\n"},
		{"m[\"b\"], err = strconv.Atoi(\"x\")\n_, present := m[\"b\"]\nfmt.Println(len(m), present, err != nil)", "2 true true\n"},
		{"anys := map[string]any{\"x\": 3}\nm[\"c\"], ok = anys[\"x\"].(int)\nother := map[string]int{\"z\": 9}\nm[\"d\"], ok = other[\"z\"]\nch := make(chan int, 1)\nch <- 4\nm[\"e\"], _ = <-ch\nfmt.Println(m[\"c\"], m[\"d\"], m[\"e\"], ok)", "3 9 4 true\n"},
		{"func parse(ws []string) (map[string]int, error) {\n\tout := map[string]int{}\n\tvar err error\n\tfor _, w := range ws {\n\t\tif out[w], err = strconv.Atoi(w); err != nil {\n\t\t\treturn nil, err\n\t\t}\n\t\tout[w+w], err = strconv.Atoi(w + w)\n\t}\n\treturn out, err\n}\nfmt.Println(parse([]string{\"1\", \"2\"}))", "map[1:1 11:11 2:2 22:22] <nil>\n"},
		{"xs := []int{0, 0}\nif len(xs) > 0 {\n\txs[1], err = strconv.Atoi(\"7\")\n}\nfmt.Println(xs, err)", "[0 7] <nil>\n"},
	})
}

// Closures and functions with unnamed parameters: yaegi v0.16.1 stored the
// argument over the first local (traefik/yaegi#1667), so the loop below
// panicked with "reflect.Set: value of type train.Update is not assignable
// to type int".
func TestUnnamedParameters(t *testing.T) {
	runSteps(t, []step{
		{"import \"fmt\"\nh := []float64{0, 0}\nf := func(train.Update) {\n\tfor i := range h {\n\t\th[i] += 2\n\t}\n}\nf(train.Update{})\nfmt.Println(h)", "[2 2]\n"},
		{"func fix(g []float64) func(train.Update) {\n\treturn func(train.Update) {\n\t\tfor i := range g {\n\t\t\tg[i] = float64(i) + 1\n\t\t}\n\t}\n}\ng := []float64{0, 0}\no := train.Options{OnUpdate: fix(g)}\no.OnUpdate(train.Update{Epoch: 1})\nfmt.Println(g)", "[1 2]\n"},
		{"func sum4(string, float64) int {\n\ts := 0\n\tfor i := 0; i < 4; i++ {\n\t\ts += i\n\t}\n\treturn s\n}\nfmt.Println(sum4(\"x\", 0.5))", "6\n"},
	})
}

// An undefined name in a top-level declaration is reported as such, also in
// later cells (yaegi's global type analysis registers it as an incomplete
// type, which made later uses fail with "nil type"), and does not prevent
// declaring it afterwards.
func TestTopLevelUndefinedNames(t *testing.T) {
	s := newSession(t)
	for _, c := range []struct{ code, want string }{
		{"y := undefinedThing[0]", "cell:1:6: undefined: undefinedThing"},
		{"func() { z := undefinedThing[0]; _ = z }()", "cell:1:15: undefined: undefinedThing"},
		{"x := new(nosuchpkg.Buffer)", "cell:1:10: undefined: nosuchpkg"},
		{"import \"strings\"\nws := strings.Fields(\"a\")\nw := ws[0] + nope", "cell:3:14: undefined: nope"},
	} {
		_, res := run(t, s, c.code)
		if res.Err == nil || res.Err.Name != "CompileError" || res.Err.Value != c.want {
			t.Errorf("%q: error %+v, want CompileError %q", c.code, res.Err, c.want)
		}
	}
	// Names declared in every way a cell can are known to the check.
	mustRun(t, s, "type Q struct{ S string }\nconst k = 1\nvar g = \"g\"\nfunc h(s string) string { return s + \"!\" }")
	rec, _ := mustRun(t, s, "import \"bytes\"\nundefinedThing := []string{\"u\"}\ny := undefinedThing[k-1] + h(\"a\") + Q{S: g}.S\nx := new(bytes.Buffer)\nprintln(y, x.Len())")
	if got := rec.stdout.String(); got != "ua!g 0\n" {
		t.Errorf("after the errors: printed %q", got)
	}
}

func sum(ts []mapping.Term) float64 {
	s := 0.0
	for _, t := range ts {
		s += t.Value
	}
	return s
}

// Compiled functions taking an unnamed interface (plotter.NewYErrorBars's
// interface{ XYer; YErrorer }) accept values of types declared in cells:
// yaegi's compiler crashed for want of a wrapper ("CFG post-order panic:
// reflect.Value.Type on zero Value").
func TestUnnamedInterfaces(t *testing.T) {
	// Every unnamed interface parameter of the preloaded packages has a
	// helper whose parameter type is the same interface.
	check := func(where string, ft reflect.Type) {
		for i := 0; i < ft.NumIn(); i++ {
			p := ft.In(i)
			if p.Kind() != reflect.Interface || p.Name() != "" || p.NumMethod() == 0 {
				continue
			}
			h, ok := unnamedInterfaceHelpers[unnamedInterfaceArgs[where]]
			if !ok || ft.NumIn() != 1 || !h.Type().In(0).Implements(p) || !p.Implements(h.Type().In(0)) {
				t.Errorf("%s: no helper for parameter %d, %v", where, i, p)
			}
		}
	}
	for pkg, syms := range stdlib.Symbols {
		for name, v := range syms {
			switch tt := v.Type(); tt.Kind() {
			case reflect.Func:
				check(path.Dir(pkg)+"."+name, tt)
			case reflect.Pointer:
				for j := 0; j < tt.NumMethod(); j++ {
					check(pkg+"."+name+"."+tt.Method(j).Name, tt.Method(j).Type)
				}
			}
		}
	}
	runSteps(t, []step{
		{"import (\n\t\"fmt\"\n\t\"gonum.org/v1/plot/plotter\"\n)\nxys := plotter.XYs{{X: 1, Y: 2}, {X: 3, Y: 5}}\nbars, err := plotter.NewYErrorBars(struct {\n\tplotter.XYs\n\tplotter.YErrors\n}{xys, plotter.YErrors{{Low: 0.1, High: 0.2}, {Low: 0.3, High: 0.4}}})\nfmt.Println(err, bars.XYs[1], bars.YErrors[1])", "<nil> {3 5} {0.3 0.4}\n"},
		{"type both struct {\n\tplotter.XYs\n\tplotter.XErrors\n\tplotter.YErrors\n}\nb := both{xys, plotter.XErrors{{Low: 1, High: 2}, {Low: 3, High: 4}}, plotter.YErrors{{Low: 5, High: 6}, {Low: 7, High: 8}}}\nxb, err1 := plotter.NewXErrorBars(&b)\nyb, err2 := plotter.NewYErrorBars(&b)\nfmt.Println(err1, err2, xb.XErrors[0], yb.YErrors[1])", "<nil> <nil> {1 2} {7 8}\n"},
	})
	// A value (not a pointer) of a declared type: a clear error.
	s := newSession(t)
	mustRun(t, s, "import \"gonum.org/v1/plot/plotter\"\ntype pts struct {\n\tplotter.XYs\n\tplotter.YErrors\n}")
	_, res := run(t, s, "p := pts{plotter.XYs{{X: 1, Y: 2}}, plotter.YErrors{{Low: 1, High: 1}}}\nb, err := plotter.NewYErrorBars(p)")
	if res.Err == nil || !strings.HasPrefix(res.Err.Value, "cell:2:") || !strings.Contains(res.Err.Value, "method Len not found") || !strings.Contains(res.Err.Value, "pass a pointer") {
		t.Errorf("value of a declared type: error %+v", res.Err)
	}
}

// A crash of yaegi's compiler names the cell line of the code it compiled.
func TestCrashErrorPosition(t *testing.T) {
	src := "x := 1\ny := []int{x}[0] * -1"
	e := crashError("\n;"+lineDirective(2, 1)+"y := []int{x}[0] * -1", src, "runtime error: invalid memory address or nil pointer dereference")
	want := "cell:2:1: " + compilerCrash + "runtime error: invalid memory address or nil pointer dereference"
	if e.Name != "CompileError" || e.Value != want || len(e.Traceback) < 2 || !strings.Contains(e.Traceback[1], "y := []int{x}[0] * -1") {
		t.Errorf("got %+v, want %q with the cell line", e, want)
	}
}

// Untyped nils in parallel assignments: yaegi v0.16.1 panicked with
// "reflect: New(nil)".
func TestParallelNil(t *testing.T) {
	runSteps(t, []step{
		{"import \"fmt\"\nvar err error = fmt.Errorf(\"old\")\na, b := 1, 2\na, b, err = b, a, nil\nfmt.Println(a, b, err)", "2 1 <nil>\n"},
		{"func f() (int, *int, error) {\n\tvar p *int = new(int)\n\tvar e error\n\tn := 0\n\tn, p, e = 7, nil, nil\n\treturn n, p, e\n}\nfmt.Println(f())", "7 <nil> <nil>\n"},
		{"s := []error{fmt.Errorf(\"x\")}\nk := 0\nk, s[0] = 3, nil\nfmt.Println(k, s)", "3 [<nil>]\n"},
	})
}

// Variables declared by `a, b := f()` at the top level are globals for the
// functions of later cells: yaegi v0.16.1 left them unmarked, so a cell
// function reading one, called from another function, read its caller's
// frame ("reflect: Method index out of range" for scale.Int below, "call of
// reflect.Value.Method on zero Value", or another variable's value).
func TestMultiValueGlobals(t *testing.T) {
	t.Run("method of a compiled type", func(t *testing.T) {
		runSteps(t, []step{
			{"scale, _ := display.ScaleFromEnv()\nfunc size(q, full int) int { return scale.Int(q, full, full) }", ""},
			{"type point struct{ x int }\nfunc (p point) n() int { return size(p.x, p.x) }\nfmt.Println(point{3}.n())", "3\n"},
			{"func twice() int { return 2 * size(4, 4) }\nfmt.Println(twice())", "8\n"},
		})
	})
	t.Run("values read through two calls", func(t *testing.T) {
		runSteps(t, []step{
			{"import \"strconv\"\nm := map[string]int{\"a\": 7}\nv, ok := m[\"a\"]\nvar d, derr = strconv.Atoi(\"40\")\nfunc read() string { s := fmt.Sprint(v, ok, d, derr); return s }", ""},
			{"func outer() string { k := 99; _ = k; return read() }\nfmt.Println(outer())", "7 true 40 <nil>\n"},
			// A statement run split around the declaration keeps its order and result.
			{"w := 1\nx, xerr := strconv.Atoi(\"5\")\nw += x\nfunc get() int { return x + w }\nfunc via() int { return get() }\nfmt.Println(via(), xerr)", "11 <nil>\n"},
		})
	})
	t.Run("types declared in cells", func(t *testing.T) {
		runSteps(t, []step{
			{"type pt struct{ x int }\nfunc (p pt) get() int { return p.x }\nfunc mk() (pt, *pt, error) { return pt{4}, &pt{5}, nil }\na, b, e := mk()\nfunc sum() int { return a.get() + b.get() }", ""},
			{"func viaSum() int { return sum() }\nfmt.Printf(\"%d %T %v\\n\", viaSum(), a, e)", "9 main.pt <nil>\n"},
		})
	})
	t.Run("redeclared variable is assigned", func(t *testing.T) {
		runSteps(t, []step{
			{"import \"strconv\"\nn, err := strconv.Atoi(\"1\")\nfunc lastErr() error { return err }\nfunc check() error { return lastErr() }\nfmt.Println(n, check())", "1 <nil>\n"},
			{"m, err := strconv.Atoi(\"x\")\nfmt.Println(m, check() != nil, check() == err)", "0 true true\n"},
		})
	})
}
