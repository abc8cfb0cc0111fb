package display

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
)

// PlotDPI is the resolution of the PNG rendering of plots. Plots are drawn at
// twice the screen's 96 dpi and shown at their logical size (PlotSize), so they
// stay sharp on high-density screens. They are sent as PNG only: an SVG beside
// the PNG would be preferred by notebook front ends and nbconvert, and
// nbconvert's HTML sanitiser removes inline SVG, leaving an empty figure.
const PlotDPI = 2 * vgimg.DefaultDPI

// legendGap separates the data area from a legend drawn beside it.
const legendGap = 0.15 * vg.Inch

// renderPNG draws a picture of logical size w×h at PlotDPI and returns the
// PNG bytes and the metadata that shows it at w×h pixels of 96 dpi.
func renderPNG(w, h vg.Length, paint func(draw.Canvas)) ([]byte, map[string]any, error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PlotDPI))
	paint(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, nil, fmt.Errorf("display: encoding a %v×%v plot as PNG: %w", w, h, err)
	}
	px := func(l vg.Length) int { return int(math.Round(l.Points() / vg.Inch.Points() * vgimg.DefaultDPI)) }
	meta := map[string]any{"image/png": map[string]any{"width": px(w), "height": px(h)}}
	return buf.Bytes(), meta, nil
}

// drawPlot draws p on c with its legend (if any) in a column to the right of
// the axes, so entries never cover data. legendWidth is that column's width.
func drawPlot(p *plot.Plot, c draw.Canvas, legendWidth vg.Length) {
	if legendWidth == 0 {
		p.Draw(c)
		return
	}
	legend := p.Legend
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	p.Draw(draw.Crop(c, 0, -legendWidth, 0, 0))
	side := draw.Crop(c, c.Size().X-legendWidth+legendGap, 0, 0, 0)
	if p.Title.Text != "" { // align the legend's top with the axes, below the title
		side.Max.Y -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	legend.Top, legend.Left = true, true
	legend.XOffs, legend.YOffs = 0, 0
	legend.Draw(side)
}

// legendWidth is the width of the column drawPlot reserves for p's legend:
// zero when the legend has no entries.
func legendWidth(p *plot.Plot) vg.Length {
	// Only text metrics are needed: the canvas records, it does not rasterise.
	r := p.Legend.Rectangle(draw.Canvas{Canvas: new(recorder.Canvas)})
	if w := r.Size().X; w > 0 {
		return w + 2*legendGap // a gap each side: Rectangle is a little narrow for the drawn text
	}
	return 0
}

// plotBundle fills b with p rendered as PNG at PlotSize plus room for the
// legend, with the metadata that displays it at its logical size. The axes
// are drawn padded (PadAxes), like the default margins of matplotlib, and p
// keeps its own ranges, so showing it again does not pad it twice.
func plotBundle(b MIMEBundle, p *plot.Plot) {
	x, y := p.X, p.Y
	defer func() { p.X, p.Y = x, y }()
	PadAxes(p)
	lw := legendWidth(p)
	img, meta, err := renderPNG(PlotSize[0]+lw, PlotSize[1], func(c draw.Canvas) { drawPlot(p, c, lw) })
	if err != nil {
		b["text/plain"] = "<plot: " + err.Error() + ">"
		return
	}
	b["image/png"] = img
	b[metadataKey] = meta
	title := p.Title.Text
	if title == "" {
		title = "untitled"
	}
	b["text/plain"] = "<plot: " + title + ">"
}

// HeatMap draws a matrix as a coloured grid with labelled axes and a colour
// bar. Row i of Data is drawn at height i (row 0 at the bottom) and column j at
// abscissa j. Leave it as a cell's value or pass it to Show.
type HeatMap struct {
	Title          string
	XLabel, YLabel string // axis labels, with units
	Label          string // the colour bar's label: what the colour measures, with units
	Data           mat.Matrix
	// Min and Max bound the colour scale; when both are zero the scale spans
	// the data, symmetric about zero when the data have both signs. The
	// palette is Moreland's smooth blue–red map, which diverges from a light
	// grey (#ddd) at zero: blue below, red above, so data of one sign with
	// Min = 0 (e.g. |w|) get a sequential grey-to-red scale.
	Min, Max float64
	// XTicks and YTicks label the columns and the rows: label k is drawn at
	// column (row) k, and an empty label leaves that column (row) unmarked.
	// Nil marks them with their indices 0, 1, 2, … at round steps.
	XTicks, YTicks []string
}

// grid adapts a matrix to plotter.GridXYZ: column j at x = j, row i at y = i.
type grid struct{ m mat.Matrix }

func (g grid) Dims() (c, r int)   { r, c = g.m.Dims(); return c, r }
func (g grid) Z(c, r int) float64 { return g.m.At(r, c) }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// scale returns the colour range of h.
func (h HeatMap) scale() (lo, hi float64) {
	if h.Min != 0 || h.Max != 0 {
		return h.Min, h.Max
	}
	r, c := h.Data.Dims()
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := h.Data.At(i, j); !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo > hi { // no finite value
		return -1, 1
	}
	if lo < 0 && hi > 0 {
		a := math.Max(-lo, hi)
		return -a, a
	}
	if lo == hi {
		return lo - 1, hi + 1
	}
	return lo, hi
}

// span is a colour map shown over [lo, hi], a part of the range of the map it
// wraps: data of one sign use the grey-to-colour half of the diverging map,
// so that the light grey always means zero.
type span struct {
	palette.ColorMap
	lo, hi float64
}

func (s span) Min() float64 { return s.lo }
func (s span) Max() float64 { return s.hi }

// divergingSpan returns the blue–grey–red map, light grey at zero, shown over [lo, hi].
func divergingSpan(lo, hi float64) span {
	m := moreland.SmoothBlueRed()
	a := math.Max(math.Abs(lo), math.Abs(hi))
	m.SetMax(a)
	m.SetMin(-a)
	return span{m, lo, hi}
}

// swatches is a list of colours used as a palette.Palette.
type swatches []color.Color

func (s swatches) Colors() []color.Color { return s }

// integerTicks marks whole numbers only (the rows and columns of a matrix), at
// steps of 1, 2 or 5 × 10ⁿ so that there are at most about eight.
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	step := 1.0
	for k := 0; (hi-lo)/step > 8; k++ {
		step = []float64{2, 5, 10}[k%3] * math.Pow(10, float64(k/3))
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v+0, 'f', 0, 64)}) // +0 turns −0 into 0
	}
	return ticks
}

// labelTicks marks column or row k with label k, skipping empty labels.
type labelTicks []string

func (l labelTicks) Ticks(_, _ float64) []plot.Tick {
	var ticks []plot.Tick
	for k, s := range l {
		if s != "" {
			ticks = append(ticks, plot.Tick{Value: float64(k), Label: s})
		}
	}
	return ticks
}

// ticker returns the tick marker of an axis with the given labels (nil: indices).
func ticker(labels []string) plot.Ticker {
	if labels == nil {
		return integerTicks{}
	}
	return labelTicks(labels)
}

// colourBar draws colours (the lowest first) as a vertical bar spanning
// [lo, hi] on the y axis and [0, 1] on the x axis. plotter.ColorBar draws a
// one-pixel-wide image, which the rasteriser's interpolation fades at its
// edges: the bar came out between full width and a sliver depending on the
// scale; an image several pixels wide keeps its width.
type colourBar struct {
	colours swatches
	lo, hi  float64
}

func (b colourBar) DataRange() (xmin, xmax, ymin, ymax float64) { return 0, 1, b.lo, b.hi }

func (b colourBar) Plot(c draw.Canvas, p *plot.Plot) {
	const w = 16
	n := len(b.colours)
	img := image.NewNRGBA(image.Rect(0, 0, w, n))
	for i, col := range b.colours {
		for x := 0; x < w; x++ {
			img.Set(x, n-1-i, col)
		}
	}
	plotter.NewImage(img, 0, b.lo, 1, b.hi).Plot(c, p)
}

// colourBarWidth is the width of the strip holding the colour bar and its
// axis, and colourBarBar the width of the bar itself.
const (
	colourBarWidth = 1.1 * vg.Inch
	colourBarBar   = 0.2 * vg.Inch
)

// render draws h at PlotSize plus the colour bar's strip, at PlotDPI.
func (h HeatMap) render() ([]byte, map[string]any, error) {
	if h.Data == nil {
		return nil, nil, fmt.Errorf("display: HeatMap %q has no Data", h.Title)
	}
	r, c := h.Data.Dims()
	if r == 0 || c == 0 {
		return nil, nil, fmt.Errorf("display: HeatMap %q: Data is %d×%d", h.Title, r, c)
	}
	if h.XTicks != nil && len(h.XTicks) != c {
		return nil, nil, fmt.Errorf("display: HeatMap %q: %d XTicks for %d columns", h.Title, len(h.XTicks), c)
	}
	if h.YTicks != nil && len(h.YTicks) != r {
		return nil, nil, fmt.Errorf("display: HeatMap %q: %d YTicks for %d rows", h.Title, len(h.YTicks), r)
	}
	lo, hi := h.scale()
	cmap := divergingSpan(lo, hi)
	colours := make(swatches, 255)
	for k := range colours {
		c, err := cmap.At(lo + (hi-lo)*float64(k)/float64(len(colours)-1))
		if err != nil {
			return nil, nil, fmt.Errorf("display: HeatMap %q: colour scale [%g, %g]: %w", h.Title, lo, hi, err)
		}
		colours[k] = c
	}

	p := plot.New()
	p.Title.Text = h.Title
	p.X.Label.Text, p.Y.Label.Text = h.XLabel, h.YLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = ticker(h.XTicks), ticker(h.YTicks)
	hm := plotter.NewHeatMap(grid{h.Data}, colours)
	hm.Min, hm.Max = lo, hi
	p.Add(hm)

	cb := plot.New()
	cb.HideX()
	cb.Y.Label.Text = h.Label
	cb.Add(colourBar{colours, lo, hi})
	if p.Title.Text != "" { // a blank title keeps the bar level with the axes
		cb.Title.Text = " "
		cb.Title.TextStyle = p.Title.TextStyle
	}

	return renderPNG(PlotSize[0]+colourBarWidth, PlotSize[1], func(c draw.Canvas) {
		p.Draw(draw.Crop(c, 0, -colourBarWidth, 0, 0))
		side := draw.Crop(c, c.Size().X-colourBarWidth+legendGap, 0, 0, 0)
		side.Min.Y += p.X.Label.TextStyle.Rectangle("0").Size().Y * 2.5 // level with the x axis
		// The bar keeps its width whatever the width of its tick labels and label.
		axis := side.Size().X - cb.DataCanvas(side).Size().X
		side.Max.X = min(side.Max.X, side.Min.X+axis+colourBarBar)
		cb.Draw(side)
	})
}

func heatMapBundle(b MIMEBundle, h HeatMap) {
	img, meta, err := h.render()
	if err != nil {
		b["text/plain"] = "<heat map: " + err.Error() + ">"
		return
	}
	b["image/png"] = img
	b[metadataKey] = meta
	r, c := h.Data.Dims()
	b["text/plain"] = fmt.Sprintf("<heat map %d×%d: %s>", r, c, h.Title)
}

// padFraction is the share of an axis's span that PadAxes adds on each side
// of a linear axis; logPadFactor is the factor it applies on a logarithmic
// one.
const (
	padFraction  = 0.05
	logPadFactor = 1.15
)

// PadAxes widens both axis ranges of p so that the points and error bars at
// the extremes of the data are not drawn on the frame, where gonum's ranges,
// set by plot.Add to the data's extremes, put them: a linear axis gains 5 %
// of its span on each side (±0.5 when the span is zero), a logarithmic axis
// (plot.LogScale) a factor 1.15. Call it once, after the last plotter is
// added. Bundle and Show pad a plot by themselves; PadAxes is for plots
// drawn on a canvas of one's own, such as panels of a figure.
func PadAxes(p *plot.Plot) {
	padAxis(&p.X)
	padAxis(&p.Y)
}

func padAxis(a *plot.Axis) {
	if _, log := a.Scale.(plot.LogScale); log {
		a.Min, a.Max = a.Min/logPadFactor, a.Max*logPadFactor
		return
	}
	d := padFraction * (a.Max - a.Min)
	if d == 0 {
		d = 0.5
	}
	a.Min, a.Max = a.Min-d, a.Max+d
}
