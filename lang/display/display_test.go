package display

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// sinkRecorder records what display functions publish.
type sinkRecorder struct {
	mu       sync.Mutex
	shown    []MIMEBundle
	ids      []string
	updates  []string
	progress []ProgressState
	clears   int
}

func (r *sinkRecorder) Display(data, _ map[string]any, id string, update bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if update {
		r.updates = append(r.updates, id)
		return
	}
	r.shown = append(r.shown, data)
	r.ids = append(r.ids, id)
}
func (r *sinkRecorder) Clear(bool) { r.clears++ }
func (r *sinkRecorder) Progress(id string, st ProgressState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, st)
}

func withSink(t *testing.T) *sinkRecorder {
	r := &sinkRecorder{}
	old := SetSink(r)
	t.Cleanup(func() { SetSink(old) })
	return r
}

func TestShowAndUpdate(t *testing.T) {
	r := withSink(t)
	h := Show(42)
	h.Update("x")
	HTML("<b>hi</b>")
	Markdown("*md*")
	LaTeX("$x^2$")
	JSON(map[string]int{"a": 1})
	PNG([]byte{0x89, 'P', 'N', 'G'})
	SVG("<svg/>")
	Clear(true)
	if len(r.shown) != 7 || r.clears != 1 {
		t.Fatalf("shown %d, clears %d", len(r.shown), r.clears)
	}
	if r.shown[0]["text/plain"] != "42" || len(r.updates) != 1 || r.updates[0] != h.ID() || h.ID() != r.ids[0] {
		t.Errorf("Show/Update: %v %v %v", r.shown[0], r.updates, r.ids)
	}
	for i, mime := range []string{"text/html", "text/markdown", "text/latex", "application/json", "image/png", "image/svg+xml"} {
		if _, ok := r.shown[i+1][mime]; !ok {
			t.Errorf("bundle %d lacks %s: %v", i+1, mime, r.shown[i+1])
		}
	}
	if got := r.shown[5]["image/png"]; got != base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G'}) {
		t.Errorf("PNG not base64: %v", got)
	}
	if r.ids[0] == r.ids[1] {
		t.Errorf("display ids not unique")
	}
}

func TestBundlePlotAndMatrix(t *testing.T) {
	p := plot.New()
	p.Title.Text = "t"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	b := Bundle(p)
	png, err := base64.StdEncoding.DecodeString(b["image/png"].(string))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("plot PNG invalid: %v", err)
	}
	if _, ok := b["image/svg+xml"]; ok {
		t.Errorf("plot offers SVG, which nbconvert's HTML export would strip")
	}

	small := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	b = Bundle(small)
	html := b["text/html"].(string)
	if !strings.Contains(html, "2×3") || strings.Count(html, "<td>") != 6 || !strings.Contains(html, "<td>6</td>") {
		t.Errorf("small matrix table: %s", html)
	}
	big := mat.NewDense(100, 50, nil)
	big.Set(99, 49, 7)
	html = MatrixHTML(big)
	rows := strings.Count(html, "<tr>")
	cells := strings.Count(html, "<td>")
	// 12 rows + ellipsis row, 12 columns + ellipsis column.
	if rows != MaxTableSize+1 || cells != (MaxTableSize+1)*(MaxTableSize+1) || !strings.Contains(html, "<td>7</td>") || !strings.Contains(html, "⋮") {
		t.Errorf("large matrix: %d rows, %d cells", rows, cells)
	}
	if txt := Text(small); !strings.HasPrefix(txt, "2×3 matrix") {
		t.Errorf("matrix text %q", txt)
	}
}

type htmlThing struct{}

func (htmlThing) HTML() string { return "<i>thing</i>" }

func TestBundleInterfacesAndText(t *testing.T) {
	b := Bundle(htmlThing{})
	if b["text/html"] != "<i>thing</i>" || b["text/plain"] != "{}" {
		t.Errorf("HTMLer bundle %v", b)
	}
	b = Bundle(&Rich{Markdown: "**r**", HasMD: true, Text: "r"})
	if b["text/markdown"] != "**r**" || b["text/plain"] != "r" {
		t.Errorf("Rich bundle %v", b)
	}
	if Text("a\"b") != `"a\"b"` || Text([]int{1, 2}) != "[1 2]" || Text(nil) != "<nil>" {
		t.Errorf("Text: %q %q %q", Text("a\"b"), Text([]int{1, 2}), Text(nil))
	}
	if long := Text(strings.Repeat("x", 30000)); len(long) > maxText+100 || !strings.Contains(long, "more bytes") {
		t.Errorf("long text not truncated (%d bytes)", len(long))
	}
}

func TestBundleImage(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	b := Bundle(img)
	raw, err := base64.StdEncoding.DecodeString(b["image/png"].(string))
	if err != nil {
		t.Fatal(err)
	}
	back, err := png.Decode(bytes.NewReader(raw))
	if err != nil || back.Bounds().Dx() != 3 || b["text/plain"] != "<image 3x2>" {
		t.Fatalf("decoded %v, %v, %v", back, err, b["text/plain"])
	}
	if r, _, _, _ := back.At(1, 1).RGBA(); r>>8 != 255 {
		t.Errorf("pixel (1,1) red = %d", r>>8)
	}
}

func TestRBMSummary(t *testing.T) {
	m := rbm.New(rbm.Binary(6), rbm.ReLU(3), rbm.Seed(1))
	b := Bundle(m)
	h, _ := b["text/html"].(string)
	if !strings.Contains(h, "*rbm.RBM") || !strings.Contains(h, "6×3 *mat.Dense") {
		t.Errorf("RBM summary: %s", h)
	}
	if _, ok := summaryHTML(struct{ A int }{1}); ok {
		t.Errorf("summary of a non-rbmcore struct")
	}
}

func ExampleBundle() {
	b := Bundle(mat.NewDense(1, 2, []float64{1, 2}))
	fmt.Println(b["text/html"])
	// Output:
	// <table class="hm-matrix"><caption>1×2 *mat.Dense</caption>
	// <tr><td>1</td><td>2</td></tr>
	// </table>
}
