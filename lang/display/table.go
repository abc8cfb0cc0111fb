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
func (t *Table) HTML() string { return t.html(nil) }

// Verdict cell styles: the colour says whether the outcome is the expected one.
const (
	verdictGood = ";color:#1a7f37;font-weight:bold;white-space:nowrap"
	verdictBad  = ";color:#cf222e;font-weight:bold;white-space:nowrap"
)

// html renders t; the rows for which isNull (when not nil) holds are
// null-model rows, in which "fail" is the expected verdict (green) and "pass"
// the bad one (red).
func (t *Table) html(isNull func(row []string) bool) string {
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
		null := isNull != nil && isNull(r)
		sb.WriteString("<tr>")
		for j := 0; j < n; j++ {
			c := cell(r, j)
			style, title := "text-align:left;vertical-align:top;padding:2px 8px", ""
			switch {
			case c == "pass" && null:
				style += verdictBad
				title = "the null model passes: the criterion cannot tell the effect from its absence"
			case c == "fail" && null:
				style += verdictGood
				title = "the null model fails, as it must"
			case c == "pass":
				style += verdictGood
			case c == "fail":
				style += verdictBad
			}
			attrs := `style="` + style + `"`
			if title != "" {
				attrs += ` title="` + title + `"`
			}
			sb.WriteString(`<td ` + attrs + `>` + htmlEscape(c) + "</td>")
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
//
// Null-model rows (added with Null) apply a criterion to a model that lacks
// the effect, to show that the criterion can fail: there "fail" is the
// expected verdict and is coloured green, "pass" red.
type Reproduction struct {
	Table
}

// NewReproduction returns an empty reproduction table with the given caption.
func NewReproduction(caption string) *Reproduction {
	return &Reproduction{Table: Table{Caption: caption, Columns: []string{ColQuantity, ColPaper, ColMeasured, ColCriterion, ColCheck}}}
}

// NullPrefix starts the quantity of every null-model row, and NullPaper is
// its paper column.
const (
	NullPrefix = "null: "
	NullPaper  = "must fail"
)

// Null adds a null-model row: a criterion applied to a null (or wrong) model
// that must fail it, showing that the criterion can tell the effect from its
// absence. quantity describes the null model without a prefix ("null: " is
// added), the paper column reads "must fail", and pass is whether the measured
// value meets the criterion. The verdict reads "pass" or "fail" as for Check;
// in the HTML rendering "fail" is green (the expected outcome) and "pass" red.
func (r *Reproduction) Null(quantity, measured, criterion string, pass bool) {
	r.Check(NullPrefix+quantity, NullPaper, measured, criterion, pass)
}

// HTML renders r as Table.HTML does, with the verdicts of null-model rows
// coloured by whether they are the expected "fail".
func (r *Reproduction) HTML() string { return r.html(isNullRow) }

// isNullRow reports whether row is a null-model row, as Null writes them: its
// quantity starts with NullPrefix and its paper column reads NullPaper.
func isNullRow(row []string) bool {
	return strings.HasPrefix(cell(row, 0), NullPrefix) && cell(row, 1) == NullPaper
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
