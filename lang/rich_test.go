package lang

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
)

func TestRichValues(t *testing.T) {
	s := sharedSession(t)
	mustRun(t, s, `import (
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)`)
	_, res := mustRun(t, s, "pl := plot.New()\nxy := make(plotter.XYs, 5)\nfor i := range 5 { xy[i].X, xy[i].Y = float64(i), float64(i*i) }\nln, _ := plotter.NewLine(xy)\npl.Add(ln)\npl")
	png, _ := base64.StdEncoding.DecodeString(res.Data["image/png"].(string))
	if !strings.HasPrefix(string(png), "\x89PNG") || res.Data["image/svg+xml"] != nil {
		t.Errorf("plot result is not a PNG alone: %v", keys(res.Data))
	}
	// The PNG is drawn at twice the resolution and shown at its logical size.
	if size, _ := res.Metadata["image/png"].(map[string]any); size["width"] != 480 || res.Data["__metadata__"] != nil {
		t.Errorf("plot metadata %v, data keys %v", res.Metadata, keys(res.Data))
	}
	_, res = mustRun(t, s, "mat.NewDense(2, 2, []float64{1, 2, 3, 4})")
	if html, _ := res.Data["text/html"].(string); !strings.Contains(html, "<td>4</td>") {
		t.Errorf("matrix result: %v", res.Data)
	}
	// Types declared in cells with HTML/Markdown/SVG/PNG methods.
	_, res = mustRun(t, s, "type Card struct{ Name string }\nfunc (c Card) HTML() string { return \"<h3>\" + c.Name + \"</h3>\" }\nCard{\"ace\"}")
	if res.Data["text/html"] != "<h3>ace</h3>" || res.Data["text/plain"] != "{ace}" {
		t.Errorf("cell type HTML(): %v", res.Data)
	}
	_, res = mustRun(t, s, "type Note []string\nfunc (n *Note) Markdown() string { return \"- \" + (*n)[0] }\n&Note{\"x\"}")
	if res.Data["text/markdown"] != "- x" {
		t.Errorf("cell type Markdown() on pointer receiver: %v", res.Data)
	}
	_, res = mustRun(t, s, "type Plain struct{ A int }\nPlain{3}")
	if res.Data["text/plain"] != "{3}" || len(res.Data) != 1 {
		t.Errorf("plain cell type: %v", res.Data)
	}
	// display.Show and Handle.Update, with cell types.
	rec, _ := mustRun(t, s, "h := display.Show(Card{\"king\"})\nh.Update(Card{\"queen\"})\ndisplay.Markdown(\"**m**\")\ndisplay.Show(Plain{1})")
	if len(rec.displays) != 3 || rec.displays[0]["text/html"] != "<h3>king</h3>" || rec.displays[1]["text/markdown"] != "**m**" || rec.displays[2]["text/plain"] != "{1}" {
		t.Errorf("displays: %v", rec.displays)
	}
	if len(rec.updates) != 1 || rec.updates[0]["text/html"] != "<h3>queen</h3>" {
		t.Errorf("updates: %v", rec.updates)
	}
	// A progress bar: one display, then in-place updates.
	rec, _ = mustRun(t, s, "bar := display.NewProgress(\"fit\", 3)\nf := bar.Func()\nfor i := range 3 { f(i+1, 3) }")
	if len(rec.displays) != 1 || len(rec.updates) == 0 || !strings.Contains(rec.updates[len(rec.updates)-1]["text/plain"].(string), "3/3") {
		t.Errorf("progress: %d displays, updates %v", len(rec.displays), rec.updates)
	}
}

func keys(m map[string]any) []string { return sortedKeys(m) }

func TestTerminalProgress(t *testing.T) {
	s, err := New(Options{Terminal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := &recorder{}
	s.Execute(context.Background(), "b := display.NewProgress(\"p\", 2)\nb.Done()", rec)
	if got := rec.stderr.String(); !strings.Contains(got, "\rp 100% [") || !strings.Contains(got, " 2/2 [00:00<00:00, ") || !strings.HasSuffix(got, "it/s]\n") || len(rec.displays) != 0 {
		t.Errorf("terminal bar = %q (displays %d)", got, len(rec.displays))
	}
	// Set to the total, then Done: the finished line is written once; a bar
	// reused after it finished (and redrawn, past the redraw interval) ends
	// its line again.
	rec = &recorder{}
	s.Execute(context.Background(), "import \"time\"\nc := display.NewProgress(\"q\", 2)\nc.Set(1)\nc.Set(2)\nc.Done()\ntime.Sleep(150 * time.Millisecond)\nc.Set(1)\nc.Done()", rec)
	if got := rec.stderr.String(); strings.Count(got, "\n") != 2 || strings.Count(got, "q 100% [") != 2 {
		t.Errorf("finished lines written %d times (want 2, one per completion), 100%% drawn %d times: %q", strings.Count(got, "\n"), strings.Count(got, "q 100% ["), got)
	}
}

func TestCompleteAndInspect(t *testing.T) {
	s := sharedSession(t)
	mustRun(t, s, "import \"gonum.org/v1/gonum/mat\"\ntype Box struct{ W, H float64 }\nfunc (b Box) Area() float64 { return b.W * b.H }\nbx := Box{2, 3}\ndense := mat.NewDense(2, 2, nil)\nbxCount := 1")
	for _, c := range []struct {
		code string
		want []string
	}{
		{"fmt.Spr", []string{"Sprint", "Sprintf", "Sprintln"}},
		{"mat.NewD", []string{"NewDense", "NewDiagDense"}},
		{"bx.", []string{"Area", "H", "W"}},
		{"dense.Mu", []string{"Mul", "MulElem"}},
		{"bxC", []string{"bxCount"}},
		{"displ", []string{"display"}},
	} {
		mustRun(t, s, "import \"fmt\"")
		got := s.Complete(c.code, len(c.code))
		for _, w := range c.want {
			if !hasString(got.Matches, w) {
				t.Errorf("Complete(%q) = %v, missing %s", c.code, got.Matches, w)
			}
		}
		if got.End != len(c.code) || got.Start > got.End {
			t.Errorf("Complete(%q) range %d..%d", c.code, got.Start, got.End)
		}
	}
	data, ok := s.Inspect("mat.NewDense(", 8, 0)
	if !ok || !strings.Contains(data["text/plain"].(string), "func NewDense(r, c int, data []float64) *Dense") {
		t.Errorf("Inspect mat.NewDense: %v", data)
	}
	data, ok = s.Inspect("bx", 2, 0)
	if !ok || !strings.Contains(data["text/plain"].(string), "Box (declared in a cell)") || !strings.Contains(data["text/plain"].(string), "{2 3}") {
		t.Errorf("Inspect bx: %v", data)
	}
	data, ok = s.Inspect("dense", 3, 0)
	if !ok || !strings.Contains(data["text/plain"].(string), "*mat.Dense") || !strings.Contains(data["text/plain"].(string), "Dense is a dense matrix") {
		t.Errorf("Inspect dense: %v", data)
	}
	data, ok = s.Inspect("display.Show", 10, 0)
	if !ok || !strings.Contains(data["text/plain"].(string), "func Show(v any) *Handle") {
		t.Errorf("Inspect display.Show: %v", data)
	}
	if _, ok := s.Inspect("nothingHere", 3, 0); ok {
		t.Errorf("Inspect found an undefined name")
	}
}

func hasString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
