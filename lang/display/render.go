package display

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image"
	"image/png"
	"reflect"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// MIMEBundle maps MIME types to their data: strings for text formats, []byte
// (sent base64-encoded) for binary images, any JSON value for application/json.
// A MIMEBundle shown or left as a cell's value is published as is.
type MIMEBundle map[string]any

// metadataKey is the key under which a MIMEBundle may carry display metadata.
const metadataKey = "__metadata__"

// The interfaces a value may implement to choose its own rendering. Methods of
// types declared in notebook cells are honoured too (the session detects them
// through the interpreter and passes a *Rich).
type (
	// HTMLer renders as an HTML fragment.
	HTMLer interface{ HTML() string }
	// Markdowner renders as Markdown.
	Markdowner interface{ Markdown() string }
	// LaTeXer renders as LaTeX.
	LaTeXer interface{ LaTeX() string }
	// PNGer renders as a PNG image.
	PNGer interface{ PNG() []byte }
	// SVGer renders as an SVG document.
	SVGer interface{ SVG() string }
)

// Rich carries the renderings of a value whose type was declared in a notebook
// cell; the session builds it, users do not need to.
type Rich struct {
	HTML, Markdown, SVG string
	PNG                 []byte
	HasHTML, HasMD      bool
	HasSVG, HasPNG      bool
	Text                string // the text/plain rendering
}

// PlotSize is the size at which plots are rendered (width, height).
var PlotSize = [2]vg.Length{5 * vg.Inch, 3.5 * vg.Inch}

// MaxTableSize bounds the rows and columns of the HTML table drawn for a matrix;
// larger matrices show their corners with ellipses.
var MaxTableSize = 12

// Bundle returns the MIME bundle for v: plots (with padded axes, see
// PadAxes) and heat maps as PNG (see PlotDPI), images as PNG, gonum matrices
// as an HTML table, tables (Table, Reproduction) as HTML and their whole
// fixed-width text, rbmcore models and results as an HTML
// summary of their fields, values implementing HTMLer, Markdowner,
// LaTeXer, PNGer or SVGer through their methods, and always a text/plain
// fallback. Binary data is base64-encoded, ready for the Jupyter wire.
func Bundle(v any) MIMEBundle {
	v = Unwrap(v)
	b := MIMEBundle{}
	switch x := v.(type) {
	case nil:
		b["text/plain"] = "<nil>"
	case MIMEBundle:
		for k, d := range x {
			b[k] = d
		}
	case *Rich:
		if x.HasHTML {
			b["text/html"] = x.HTML
		}
		if x.HasMD {
			b["text/markdown"] = x.Markdown
		}
		if x.HasSVG {
			b["image/svg+xml"] = x.SVG
		}
		if x.HasPNG {
			b["image/png"] = x.PNG
		}
		b["text/plain"] = x.Text
	case *plot.Plot:
		plotBundle(b, x)
	case HeatMap:
		heatMapBundle(b, x)
	case *HeatMap:
		heatMapBundle(b, *x)
	case *Table:
		// A table's text is its terminal rendering, kept whole however many rows it has: the bound of Text
		// is for values printed by accident.
		b["text/html"], b["text/plain"] = x.HTML(), x.String()
	case *Reproduction:
		b["text/html"], b["text/plain"] = x.HTML(), x.String()
	case mat.Matrix:
		b["text/html"] = MatrixHTML(x)
		b["text/plain"] = Text(x)
	case image.Image:
		var buf bytes.Buffer
		if err := png.Encode(&buf, x); err != nil {
			b["text/plain"] = fmt.Sprintf("<image: png encoding failed: %v>", err)
		} else {
			b["image/png"] = buf.Bytes()
			r := x.Bounds()
			b["text/plain"] = fmt.Sprintf("<image %dx%d>", r.Dx(), r.Dy())
		}
	default:
		if h, ok := v.(HTMLer); ok {
			b["text/html"] = h.HTML()
		} else if h, ok := summaryHTML(v); ok {
			b["text/html"] = h
		}
		if m, ok := v.(Markdowner); ok {
			b["text/markdown"] = m.Markdown()
		}
		if l, ok := v.(LaTeXer); ok {
			b["text/latex"] = l.LaTeX()
		}
		if p, ok := v.(PNGer); ok {
			b["image/png"] = p.PNG()
		}
		if s, ok := v.(SVGer); ok {
			b["image/svg+xml"] = s.SVG()
		}
		b["text/plain"] = Text(v)
	}
	for k, d := range b {
		if raw, ok := d.([]byte); ok {
			b[k] = base64.StdEncoding.EncodeToString(raw)
		}
	}
	if _, ok := b["text/plain"]; !ok {
		b["text/plain"] = Text(v)
	}
	return b
}

// maxText bounds the text/plain rendering of a value.
const maxText = 20000

// Text is the text/plain rendering of v: strings quoted, matrices formatted
// with their shape, everything else with fmt's %v; truncated when very long.
func Text(v any) string {
	v = Unwrap(v)
	var s string
	switch x := v.(type) {
	case string:
		s = strconv.Quote(x)
	case mat.Matrix:
		r, c := x.Dims()
		s = fmt.Sprintf("%d×%d matrix\n%v", r, c, mat.Formatted(x, mat.Excerpt(4), mat.Squeeze()))
	case error:
		s = x.Error()
	default:
		s = fmt.Sprintf("%v", v)
		if rv := reflect.ValueOf(v); rv.IsValid() && (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && s == "[]" {
			s = fmt.Sprintf("%#v", v)
		}
	}
	if len(s) > maxText {
		s = s[:maxText] + fmt.Sprintf("… (%d more bytes)", len(s)-maxText)
	}
	return s
}

// MatrixHTML renders m as an HTML table captioned with its shape; rows and
// columns beyond MaxTableSize are elided around the middle.
func MatrixHTML(m mat.Matrix) string {
	r, c := m.Dims()
	rows, cols := elide(r), elide(c)
	var sb strings.Builder
	fmt.Fprintf(&sb, "<table class=\"hm-matrix\"><caption>%d×%d %s</caption>\n", r, c, html.EscapeString(fmt.Sprintf("%T", m)))
	for _, i := range rows {
		sb.WriteString("<tr>")
		for _, j := range cols {
			switch {
			case i < 0 && j < 0:
				sb.WriteString("<td>⋱</td>")
			case i < 0:
				sb.WriteString("<td>⋮</td>")
			case j < 0:
				sb.WriteString("<td>…</td>")
			default:
				fmt.Fprintf(&sb, "<td>%.4g</td>", m.At(i, j))
			}
		}
		sb.WriteString("</tr>\n")
	}
	sb.WriteString("</table>")
	return sb.String()
}

// elide lists the indices 0..n-1 to draw, with -1 marking an ellipsis.
func elide(n int) []int {
	var idx []int
	if n <= MaxTableSize {
		for i := 0; i < n; i++ {
			idx = append(idx, i)
		}
		return idx
	}
	half := MaxTableSize / 2
	for i := 0; i < half; i++ {
		idx = append(idx, i)
	}
	idx = append(idx, -1)
	for i := n - half; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}
