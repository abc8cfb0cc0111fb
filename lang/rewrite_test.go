package lang

import (
	"strings"
	"testing"
)

// fakeOracle knows the globals n (int) and xs (slice) and function arities.
type fakeOracle struct{}

func (fakeOracle) intKind(expr string) tri {
	switch expr {
	case "n", "cfg.N":
		return yes
	case "xs":
		return no
	}
	return unknown
}

func (fakeOracle) numOut(fun string) int {
	if fun == "fmt.Println" {
		return 2
	}
	return -1
}

func (fakeOracle) isHandle(name string) bool { return name == "h" }

func (fakeOracle) importPath(name string) string {
	switch name {
	case "context":
		return name
	case "plotter":
		return "gonum.org/v1/plot/plotter"
	}
	return ""
}

func rewriteText(t *testing.T, src string, asInt bool) (string, error) {
	t.Helper()
	file, body, err := parseChunk(src)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	r := &rewriter{ed: &editor{src: src}, file: file, body: body, oracle: fakeOracle{}, next: &next, rangeAsInt: asInt}
	r.rewrite(nil)
	text := r.ed.text()
	// Top-level compound statements run in a function literal.
	if strings.HasPrefix(text, "func() { ") && strings.HasSuffix(text, " }()") {
		text = strings.TrimSuffix(strings.TrimPrefix(text, "func() { "), " }()")
	}
	return text, r.err
}

func TestRewrites(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"for i := range 10 { s += i }", "for i := 10 - 10; i < 10; i++ { s += i }"},
		{"for i := range n { s += i }", "for i := n - n; i < n; i++ { s += i }"},
		{"for range cfg.N { k++ }", "for __hmK2 := cfg.N - cfg.N; __hmK2 < cfg.N; __hmK2++ { k++ }"},
		{"for i, x := range xs { s += x }", "for i, x := range xs { s += x }"},
		{"for i := range len(xs) { s += i }", "for i, __hmN1 := 0, int(len(xs)); i < __hmN1; i++ { s += i }"},
		{"a := min(3, 1.5, 2)", "a := (1.5)"},
		{"a := max(1, 2.5)", "a := (2.5)"},
		// Calls, composite literals and receives in parallel assignments.
		{"a, b, c = 1, f(x), []int{2}", "a, b, c = 1, (f(x)), ([]int{2})"},
		{"var a, b = <-ch, x", "var a, b = (<-ch), x"},
		{"a, b := g()", "a, b := g()"},
		{"a, b := min(x, 1), 2", "__hmT1 := x; if 1 < __hmT1 { __hmT1 = 1 }; a, b := (__hmT1), 2"},
		{"a := min(1, 2.5)", "a := (1 + 0.0)"},
		{`a := min("b", "a")`, `a := ("a")`},
		{"a := min(x, 1)", "__hmT1 := x; if 1 < __hmT1 { __hmT1 = 1 }; a := __hmT1"},
		{"a := max(x, f(y))", "__hmT1 := x; __hmA2 := f(y); if __hmA2 > __hmT1 || __hmA2 != __hmA2 { __hmT1 = __hmA2 }; a := __hmT1"},
		{"clear(m)", "__hm.Clear(m)"},
		{"go work(a, 2)", "{ __hmF1 := work; __hmA2 := a; go __hmGo(__hm.Cell(), func() { __hmF1(__hmA2, 2) }) }"},
		{"go func() { panic(1) }()", "go __hmGo(__hm.Cell(), func() { func() { panic(1) }() })"},
		{"for i := 0; i < 3; i++ { fs = append(fs, func() int { return i }) }",
			"for __hmL1 := 0; __hmL1 < 3; __hmL1++ { i := __hmL1; fs = append(fs, func() int { return i }) }"},
		{"for _, v := range xs { go use(v) }",
			"for _, __hmL1 := range xs { v := __hmL1; { __hmF2 := use; __hmA3 := v; go __hmGo(__hm.Cell(), func() { __hmF2(__hmA3) }) } }"},
		{"for i := 0; i < 3; i++ { i++; f := func() {}; f() }", "for i := 0; i < 3; i++ { i++; f := func() {}; f() }"},
		{"display.Show(b)", "display.Show(__hmRich(b))"},
		{"ch.Run(context.Background(), 10, nil)", "ch.Run(ctx, 10, nil)"},
		{"h.Update(b)", "h.Update(__hmRich(b))"},
		// Several values assigned to index expressions go through temporaries.
		{"m[k], err = f(x)\nm[j], ok = n[j]\nn++", "func() { __hmV3, __hmV4 := f(x); m[k], err = __hmV3, __hmV4 }()\nfunc() { __hmV1, __hmV2 := n[j]; m[j], ok = __hmV1, __hmV2 }()\nn++"},
		{"if ok { m[min(k, 1)], _ = <-ch }", "if ok { __hmT1 := k; if 1 < __hmT1 { __hmT1 = 1 }; { __hmV2, __hmV3 := <-ch; m[__hmT1], _ = __hmV2, __hmV3 } }"},
		{"if ok { m[k], err = f(max(x, 1)) }", "if ok { __hmT1 := x; if 1 > __hmT1 { __hmT1 = 1 }; { __hmV2, __hmV3 := f(__hmT1); m[k], err = __hmV2, __hmV3 } }"},
		{"if m[k], err = f(x); err != nil { return } else if m[j], ok = <-ch; ok {}\nn++",
			"func() { __hmV3, __hmV4 := f(x); if m[k], err = __hmV3, __hmV4; err != nil { return } else { __hmV1, __hmV2 := <-ch; if m[j], ok = __hmV1, __hmV2; ok {} } }()\nn++"},
		// A call's results reach a cell's variables in a step of their own.
		{"a, b = f(x)", "__hmV1, __hmV2 := f(x); a, b = __hmV1, __hmV2"},
		{"if ok { a, b = f(x) }", "if ok { { __hmV1, __hmV2 := f(x); a, b = __hmV1, __hmV2 } }"},
		// Struct literals with embedded fields go to compiled functions by address.
		{"b, err := plotter.NewYErrorBars(struct{ plotter.XYs; E plotter.YErrors }{xys, es})", "b, err := plotter.NewYErrorBars(__hm.XYYErrorer(&struct{ plotter.XYs; E plotter.YErrors }{xys, es}))"},
		{"b := f(struct{ plotter.XYs }{xys}, struct{ X int }{1})\nplotter.F(struct{ X int }{1})", "b := f(struct{ plotter.XYs }{xys}, struct{ X int }{1})\nplotter.F(struct{ X int }{1})"},
		// Untyped nils leave parallel assignments to variables.
		{"a, b, err = f(x), a, nil", "a, b = (f(x)), a; err = nil"},
		{"p, q = nil, nil", "p = nil; q = nil"},
		{"s[0], err = 1, nil", "s[0] = 1; err = nil"},
		{"i, s[i] = 1, nil", "i, s[i] = 1, nil"},
		{"s[f()], err = 1, nil", "s[f()], err = 1, nil"},
		// Unnamed parameters get a name (not in function types).
		{"var f func(int) = func(int, ...string) {}", "var f func(int) = func(_ int, _ ...string) {}"},
	} {
		got, err := rewriteText(t, c.in, false)
		if err != nil {
			t.Errorf("rewrite(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("rewrite(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestRewriteUnknownRange(t *testing.T) {
	in := "for i := range m.K { s += i }"
	if got, _ := rewriteText(t, in, false); got != in {
		t.Errorf("unknown operand rewritten without asInt: %q", got)
	}
	if got, _ := rewriteText(t, in, true); !strings.Contains(got, "i < m.K") {
		t.Errorf("asInt did not rewrite: %q", got)
	}
}

func TestRewriteMinInForCondition(t *testing.T) {
	_, err := rewriteText(t, "for i := 0; i < min(n, k); i++ {}", false)
	if err == nil || !strings.Contains(err.Error(), "1:17") || !strings.Contains(err.Error(), "condition") {
		t.Fatalf("want an error naming the construct at 1:17, got %v", err)
	}
}
