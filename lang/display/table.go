package display

import (
	"strings"
	"unicode/utf8"
)

// Table is a table of text cells, shown as an HTML table in a notebook and as
// fixed-width text (cells padded, separated by " | ", a rule under the header)
// on a terminal. Rows shorter than Columns are padded with empty cells. Cells
// that read exactly "pass" or "fail" are coloured in the HTML rendering.
//
// Leave a Table as a cell's value, or pass it to Show.
type Table struct {
	Caption string // shown above the table; empty for none
	Columns []string
	Rows    [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// width is the number of columns drawn: the header's or the longest row's.
func (t *Table) width() int {
	n := len(t.Columns)
	for _, r := range t.Rows {
		n = max(n, len(r))
	}
	return n
}

func cell(r []string, j int) string {
	if j < len(r) {
		return r[j]
	}
	return ""
}

// HTML renders t as an HTML table: left-aligned, wrapping cells, the verdicts
// "pass" and "fail" in green and red.
func (t *Table) HTML() string {
	n := t.width()
	var sb strings.Builder
	sb.WriteString(`<table class="hm-table" style="border-collapse:collapse">`)
	if t.Caption != "" {
		sb.WriteString(`<caption style="text-align:left;caption-side:top">` + htmlEscape(t.Caption) + "</caption>")
	}
	sb.WriteString("\n<thead><tr>")
	for j := 0; j < n; j++ {
		sb.WriteString(`<th style="text-align:left;vertical-align:bottom;border-bottom:1px solid #888;padding:2px 8px">` +
			htmlEscape(cell(t.Columns, j)) + "</th>")
	}
	sb.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Rows {
		sb.WriteString("<tr>")
		for j := 0; j < n; j++ {
			c := cell(r, j)
			style := "text-align:left;vertical-align:top;padding:2px 8px"
			switch c {
			case "pass":
				style += ";color:#1a7f37;font-weight:bold;white-space:nowrap"
			case "fail":
				style += ";color:#cf222e;font-weight:bold;white-space:nowrap"
			}
			sb.WriteString(`<td style="` + style + `">` + htmlEscape(c) + "</td>")
		}
		sb.WriteString("</tr>\n")
	}
	sb.WriteString("</tbody></table>")
	return sb.String()
}

// String renders t as fixed-width text for a terminal: the caption, the
// header, a rule of dashes, then one line per row.
func (t *Table) String() string {
	n := t.width()
	widths := make([]int, n)
	measure := func(r []string) {
		for j := 0; j < n; j++ {
			widths[j] = max(widths[j], utf8.RuneCountInString(cell(r, j)))
		}
	}
	measure(t.Columns)
	for _, r := range t.Rows {
		measure(r)
	}
	var sb strings.Builder
	line := func(r []string) {
		for j := 0; j < n; j++ {
			c := cell(r, j)
			if j > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(c)
			if j < n-1 {
				sb.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)))
			}
		}
		sb.WriteString("\n")
	}
	if t.Caption != "" {
		sb.WriteString(t.Caption + "\n")
	}
	line(t.Columns)
	total := 3 * (n - 1)
	for _, w := range widths {
		total += w
	}
	sb.WriteString(strings.Repeat("-", total) + "\n")
	for _, r := range t.Rows {
		line(r)
	}
	return sb.String()
}

// The columns of a Reproduction table.
const (
	ColQuantity  = "quantity"
	ColPaper     = "paper (location)"
	ColMeasured  = "measured"
	ColCriterion = "our criterion"
	ColCheck     = "check"
)

// Reproduction is the table that closes a notebook reproducing a paper: for
// each quantity, the value the paper prints (with its figure, equation or
// page) or a prediction derived in the notebook from the paper's equations;
// the value measured in this run with its uncertainty; the pass criterion,
// which is ours and labelled as such; and the verdict.
type Reproduction struct {
	Table
}

// NewReproduction returns an empty reproduction table with the given caption.
func NewReproduction(caption string) *Reproduction {
	return &Reproduction{Table{Caption: caption, Columns: []string{ColQuantity, ColPaper, ColMeasured, ColCriterion, ColCheck}}}
}

// Check adds a row whose criterion is judged: pass is whether the measured
// value meets it.
func (r *Reproduction) Check(quantity, paper, measured, criterion string, pass bool) {
	verdict := "fail"
	if pass {
		verdict = "pass"
	}
	r.Add(quantity, paper, measured, criterion, verdict)
}

// Info adds a row reported without a criterion (check "-").
func (r *Reproduction) Info(quantity, paper, measured string) {
	r.Add(quantity, paper, measured, "-", "-")
}
