package display

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// decodeBundlePNG decodes the PNG of a bundle and returns it with the logical
// size the bundle's metadata asks the front end to show it at.
func decodeBundlePNG(t *testing.T, b MIMEBundle) (image.Image, int, int) {
	t.Helper()
	data, meta := Split(b)
	raw, err := base64.StdEncoding.DecodeString(data["image/png"].(string))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	size, ok := meta["image/png"].(map[string]any)
	if !ok {
		t.Fatalf("no image/png metadata: %v", meta)
	}
	return img, size["width"].(int), size["height"].(int)
}

func linePlot(t *testing.T, legend bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = "t"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	if legend {
		p.Legend.Add("a rather long legend entry", l)
	}
	return p
}

func TestPlotPNGAtTwiceTheResolution(t *testing.T) {
	img, w, h := decodeBundlePNG(t, Bundle(linePlot(t, false)))
	// PlotSize is 5 × 3.5 inches: 480 × 336 pixels at 96 dpi, drawn at 192 dpi.
	if w != 480 || h != 336 {
		t.Errorf("logical size %d×%d, want 480×336", w, h)
	}
	if got := img.Bounds().Size(); got.X != 2*w || got.Y != 2*h {
		t.Errorf("PNG is %v, want twice %d×%d", got, w, h)
	}
}

func TestLegendDrawnBesideTheData(t *testing.T) {
	img, w, _ := decodeBundlePNG(t, Bundle(linePlot(t, true)))
	if w <= 480+50 {
		t.Fatalf("legend column missing: width %d", w)
	}
	// The legend's text is in the column right of the 480-pixel plot; the
	// column must hold dark pixels (the text and the line's thumbnail).
	dark := 0
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 2 * 490; x < img.Bounds().Dx(); x++ {
			if r, g, b, _ := img.At(x, y).RGBA(); r+g+b < 3*0x4000 {
				dark++
			}
		}
	}
	if dark < 50 {
		t.Errorf("legend column holds %d dark pixels", dark)
	}
}

func TestHeatMapColoursAndBar(t *testing.T) {
	// Left column −1 (blue), right column +1 (red).
	h := HeatMap{Title: "W", XLabel: "hidden unit", YLabel: "visible unit", Label: "weight",
		Data: mat.NewDense(2, 2, []float64{-1, 1, -1, 1})}
	img, w, _ := decodeBundlePNG(t, Bundle(h))
	if w != 480+int(colourBarWidth.Points()/72*96+0.5) {
		t.Errorf("width %d: no colour-bar strip", w)
	}
	blue, red := 0, 0
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < 2*480; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch {
			case b > 0x9000 && r < 0x6000 && g < 0x6000:
				blue++
			case r > 0x9000 && b < 0x4000 && g < 0x4000:
				red++
			}
		}
	}
	// Each half of the data area is ~ 380 × 250 pixels at 2×.
	if blue < 20000 || red < 20000 {
		t.Errorf("blue %d, red %d pixels: the colours do not follow the sign", blue, red)
	}
	if lo, hi := h.scale(); lo != -1 || hi != 1 {
		t.Errorf("scale [%g, %g], want [-1, 1]", lo, hi)
	}
	if lo, hi := (HeatMap{Data: mat.NewDense(1, 2, []float64{-3, 1})}).scale(); lo != -3 || hi != 3 {
		t.Errorf("mixed-sign scale [%g, %g], want symmetric [-3, 3]", lo, hi)
	}
	if lo, hi := (HeatMap{Data: mat.NewDense(1, 2, []float64{2, 5})}).scale(); lo != 2 || hi != 5 {
		t.Errorf("positive scale [%g, %g], want [2, 5]", lo, hi)
	}
	b := Bundle(HeatMap{Title: "empty"})
	if _, ok := b["image/png"]; ok || b["text/plain"] != `<heat map: display: HeatMap "empty" has no Data>` {
		t.Errorf("HeatMap without data: %v", b["text/plain"])
	}
}

func TestHeatMapOneSignIsGreyAtZero(t *testing.T) {
	// Left column 0, right column 1: non-negative data use the grey-to-red half.
	img, _, _ := decodeBundlePNG(t, Bundle(HeatMap{Data: mat.NewDense(2, 2, []float64{0, 1, 0, 1})}))
	// The mean colour of a box inside each column's half of the data area
	// (logical pixels; the PNG is drawn at twice that).
	mean := func(x0, x1 int) (r, g, b uint32) {
		n := uint32(0)
		for y := 2 * 100; y < 2*200; y++ {
			for x := 2 * x0; x < 2*x1; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				r, g, b, n = r+cr>>8, g+cg>>8, b+cb>>8, n+1
			}
		}
		return r / n, g / n, b / n
	}
	if r, g, b := mean(120, 200); r < 200 || g < 200 || b < 200 || r-b > 10 {
		t.Errorf("zero drawn as (%d, %d, %d), want a near-white grey", r, g, b)
	}
	if r, g, b := mean(330, 420); r < 150 || g > 60 || b > 60 {
		t.Errorf("the maximum drawn as (%d, %d, %d), want red", r, g, b)
	}
}

func TestIntegerTicks(t *testing.T) {
	labels := func(min, max float64) (s []string) {
		for _, tk := range (integerTicks{}).Ticks(min, max) {
			s = append(s, tk.Label)
		}
		return s
	}
	if got := strings.Join(labels(-0.5, 5.5), " "); got != "0 1 2 3 4 5" {
		t.Errorf("ticks of [-0.5, 5.5]: %s", got)
	}
	if got := strings.Join(labels(-0.5, 99.5), " "); got != "0 20 40 60 80" {
		t.Errorf("ticks of [-0.5, 99.5]: %s", got)
	}
}

func TestHeatMapTickLabels(t *testing.T) {
	data := mat.NewDense(2, 3, []float64{0, 1, 2, 3, 4, 5})
	h := HeatMap{Title: "letters", Data: data, XTicks: []string{"A", "", "C"}, YTicks: []string{"K", "R"}}
	labels := func(tk plot.Ticker) (s []string) {
		for _, x := range tk.Ticks(-0.5, 2.5) {
			s = append(s, fmt.Sprintf("%g:%s", x.Value+0, x.Label))
		}
		return s
	}
	if got := strings.Join(labels(ticker(h.XTicks)), " "); got != "0:A 2:C" {
		t.Errorf("x ticks %q, want column 0 = A, column 2 = C, column 1 unmarked", got)
	}
	if got := strings.Join(labels(ticker(nil)), " "); got != "0:0 1:1 2:2" {
		t.Errorf("default ticks %q, want the indices", got)
	}
	img, w, _ := decodeBundlePNG(t, Bundle(h))
	plain, _, _ := decodeBundlePNG(t, Bundle(HeatMap{Title: "letters", Data: data}))
	if w != 480+int(colourBarWidth.Points()/72*96+0.5) {
		t.Errorf("width %d", w)
	}
	// The labels are drawn: the rendering differs from the one with index ticks
	// along the left and bottom margins only (the data area is the same).
	differ := 0
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			if img.At(x, y) != plain.At(x, y) {
				differ++
			}
		}
	}
	if differ < 50 {
		t.Errorf("%d pixels differ from the index-labelled heat map: the tick labels are not drawn", differ)
	}
	b := Bundle(HeatMap{Title: "short", Data: data, XTicks: []string{"A"}})
	if _, ok := b["image/png"]; ok || !strings.Contains(b["text/plain"].(string), "1 XTicks for 3 columns") {
		t.Errorf("wrong number of XTicks: %v", b["text/plain"])
	}
}

func TestHeatMapColourBarWidth(t *testing.T) {
	// The bar is colourBarBar wide whatever its tick labels: at 0.7 and at 0.014.
	for _, top := range []float64{0.7, 0.014} {
		img, _, _ := decodeBundlePNG(t, Bundle(HeatMap{Label: "|w| (units)", Data: mat.NewDense(1, 2, []float64{0, top}), Max: top}))
		// Pixels at the top of the bar (dark red) along a row a tenth of the way down.
		y, red := img.Bounds().Dy()/10, 0
		for x := 2 * 480; x < img.Bounds().Dx(); x++ {
			if r, g, b, _ := img.At(x, y).RGBA(); r > 0x9000 && g < 0x4000 && b < 0x4000 {
				red++
			}
		}
		if want := colourBarBar.Points() / 72 * 192; math.Abs(float64(red)-want) > 4 {
			t.Errorf("max %g: the bar is %d pixels wide, want %.0f", top, red, want)
		}
	}
}

// TestBundlePadsPlots checks that a shown plot is drawn with padded axes and
// keeps its own ranges.
func TestBundlePadsPlots(t *testing.T) {
	p := linePlot(t, false)
	data, _ := Split(Bundle(p))
	got, err := base64.StdEncoding.DecodeString(data["image/png"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != 0 || p.X.Max != 1 || p.Y.Min != 0 || p.Y.Max != 1 {
		t.Errorf("Bundle changed the plot's ranges to x [%v, %v], y [%v, %v]", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	render := func(q *plot.Plot) []byte {
		img, _, err := renderPNG(PlotSize[0], PlotSize[1], func(c draw.Canvas) { drawPlot(q, c, 0) })
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	padded := linePlot(t, false)
	PadAxes(padded)
	if !bytes.Equal(got, render(padded)) {
		t.Error("the bundle's PNG is not the plot drawn with padded axes")
	}
	if bytes.Equal(got, render(linePlot(t, false))) {
		t.Error("the bundle's PNG is the plot drawn without padding")
	}
}
