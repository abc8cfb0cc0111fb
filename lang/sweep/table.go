package sweep

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"
)

// seSuffix names the standard-error column of an aggregated result.
const seSuffix = "_se"

// Table is a sweep's results: one row per task, parameter columns then
// result columns. It renders as HTML in a notebook (and as text), gives
// columns by name for gonum/plot (Column, XY, YErrors), and averages over
// repeated seeds (Aggregate).
type Table struct {
	// Params and Results are the column names; Seed is the repeated-seed
	// parameter ("" if none).
	Params, Results []string
	Seed            string
	Rows            []Row
	// Aggregated tables hold means; their result columns name_se hold
	// the standard errors.
	Aggregated bool
	// Note says where the table came from (the command, the grid, the
	// script): free text, written by WriteCSV as comment lines before the
	// header and read back by ReadCSV. Collect leaves it empty.
	Note string
	// ScriptSHA256 is the hex SHA-256 of the script that produced the
	// table ("": unknown). Collect takes it from the sweep's manifest,
	// WriteCSV and ReadCSV keep it, and CheckScript compares it with a
	// script's text, so that a notebook can refuse results of another
	// version of its script.
	ScriptSHA256 string
}

// Row is one task (or, aggregated, one group of tasks).
type Row struct {
	// Index is the task's index; -1 in an aggregated table.
	Index int
	// State is the task's state (see TaskStatus); an aggregated row is
	// "done".
	State  string
	Params Params
	// Values holds the results by name; a result the task did not record
	// is missing (NaN in Column).
	Values map[string]float64
	// N is the number of tasks averaged (1 for a task).
	N int
}

// Collect reads the table of the sweep in dir as it stands: every task,
// with results for those done (a running sweep gives a partial table).
func Collect(dir string) (*Table, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	t := &Table{Params: m.Names, Seed: m.Grid.SeedName(), ScriptSHA256: m.ScriptSHA256}
	seen := map[string]bool{}
	for i, p := range m.Tasks {
		ts := taskStatus(dir, i, p)
		row := Row{Index: i, State: ts.State, Params: p, Values: map[string]float64{}, N: 1}
		if ts.State == StatusDone {
			r, err := readResult(dir, i)
			if err != nil {
				return nil, fmt.Errorf("sweep: %s: task %d: %w", dir, i, err)
			}
			for _, v := range r.Values {
				row.Values[v.Name] = v.Value
				if !seen[v.Name] {
					seen[v.Name] = true
					t.Results = append(t.Results, v.Name)
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// Done returns the table of the rows whose tasks are done.
func (t *Table) Done() *Table {
	out := *t
	out.Rows = nil
	for _, r := range t.Rows {
		if r.State == StatusDone {
			out.Rows = append(out.Rows, r)
		}
	}
	return &out
}

// CheckDone reports an error naming the first row whose task is not done
// (failed, running or never run), so that a committed table with a hole in
// it cannot pass for a complete one.
func (t *Table) CheckDone() error {
	for _, r := range t.Rows {
		if r.State != StatusDone {
			params, _ := r.Params.MarshalJSON()
			return fmt.Errorf("sweep: task %d %s is %s, not done", r.Index, params, r.State)
		}
	}
	return nil
}

// CheckScript reports an error unless the table was produced by a script
// whose text is source (ScriptSHA256 is its SHA-256). Results of an edited
// script describe another experiment: the error says to run the sweep
// again.
func (t *Table) CheckScript(source string) error {
	want := scriptSHA256([]byte(source))
	switch t.ScriptSHA256 {
	case want:
		return nil
	case "":
		return fmt.Errorf("sweep: the table does not say which script produced it (no script SHA-256), want %s", want)
	}
	return fmt.Errorf("sweep: the table was produced by the script with SHA-256 %s, not by this one (%s): run the sweep again with this script", t.ScriptSHA256, want)
}

// Where returns the table of the rows whose parameter name equals v (an
// int matches an equal float).
func (t *Table) Where(name string, v any) *Table {
	out := *t
	out.Rows = nil
	want, _ := normalize(v)
	wf, wnum := paramFloat(want)
	for _, r := range t.Rows {
		got := r.Params[name]
		if gf, ok := paramFloat(got); ok && wnum {
			if gf == wf {
				out.Rows = append(out.Rows, r)
			}
		} else if got == want {
			out.Rows = append(out.Rows, r)
		}
	}
	return &out
}

// Aggregate averages the done rows over the repeated seeds: one row per
// combination of the other parameters, each result replaced by its mean
// over the seeds that recorded it, with a result column name_se holding the
// standard error of the mean (the sample standard deviation over √n; 0 for
// one seed) and N the number of tasks. Without seeds it returns the done
// rows.
func (t *Table) Aggregate() *Table {
	done := t.Done()
	if t.Seed == "" || t.Aggregated {
		return done
	}
	out := &Table{Seed: "", Aggregated: true, Note: t.Note, ScriptSHA256: t.ScriptSHA256}
	for _, p := range t.Params {
		if p != t.Seed {
			out.Params = append(out.Params, p)
		}
	}
	for _, r := range t.Results {
		out.Results = append(out.Results, r, r+seSuffix)
	}
	groups := map[string]int{}
	var members [][]Row
	for _, r := range done.Rows {
		key := make(Params, len(out.Params))
		for _, p := range out.Params {
			key[p] = r.Params[p]
		}
		kb, _ := key.MarshalJSON()
		g, ok := groups[string(kb)]
		if !ok {
			g = len(members)
			groups[string(kb)] = g
			members = append(members, nil)
			out.Rows = append(out.Rows, Row{Index: -1, State: StatusDone, Params: key, Values: map[string]float64{}})
		}
		members[g] = append(members[g], r)
	}
	for g, rows := range members {
		out.Rows[g].N = len(rows)
		for _, name := range t.Results {
			var xs []float64
			for _, r := range rows {
				if v, ok := r.Values[name]; ok {
					xs = append(xs, v)
				}
			}
			if len(xs) == 0 {
				continue
			}
			mean, se := meanSE(xs)
			out.Rows[g].Values[name] = mean
			out.Rows[g].Values[name+seSuffix] = se
		}
	}
	return out
}

// meanSE returns the mean of xs and its standard error s/√n, with s the
// sample standard deviation (n − 1 in the denominator); 0 for one value.
func meanSE(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}

// Column returns the named parameter or result column as numbers, one per
// row: NaN where a result is missing or a parameter is not numeric (a bool
// is 0 or 1). It panics for a name that is not a column, listing them.
func (t *Table) Column(name string) []float64 {
	isParam := t.hasParam(name)
	if !isParam && !t.hasResult(name) {
		panic(fmt.Sprintf("sweep: table has no column %q (columns: %s)", name, strings.Join(append(append([]string{}, t.Params...), t.Results...), ", ")))
	}
	out := make([]float64, len(t.Rows))
	for k, r := range t.Rows {
		if isParam {
			out[k], _ = paramFloat(r.Params[name])
			continue
		}
		v, ok := r.Values[name]
		if !ok {
			v = math.NaN()
		}
		out[k] = v
	}
	return out
}

func (t *Table) hasParam(name string) bool  { return containsString(t.Params, name) }
func (t *Table) hasResult(name string) bool { return containsString(t.Results, name) }

// XY returns the points (x, y) of two columns for plotter.NewLine,
// NewScatter, …, sorted by x, leaving out rows where either is NaN.
func (t *Table) XY(x, y string) plotter.XYs {
	xs, ys := t.Column(x), t.Column(y)
	var pts plotter.XYs
	for k := range xs {
		if !math.IsNaN(xs[k]) && !math.IsNaN(ys[k]) {
			pts = append(pts, plotter.XY{X: xs[k], Y: ys[k]})
		}
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
	return pts
}

// YErrors returns the standard errors of result y of an aggregated table,
// in the order of XY(x, y), for plotter.NewYErrorBars.
func (t *Table) YErrors(x, y string) plotter.YErrors {
	xs, ys, ses := t.Column(x), t.Column(y), t.Column(y+seSuffix)
	type pt struct{ x, se float64 }
	var pts []pt
	for k := range xs {
		if !math.IsNaN(xs[k]) && !math.IsNaN(ys[k]) {
			pts = append(pts, pt{xs[k], ses[k]})
		}
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
	errs := make(plotter.YErrors, len(pts))
	for k, p := range pts {
		errs[k].Low, errs[k].High = p.se, p.se
	}
	return errs
}

// cells returns the header and the text cells of the table; an aggregated
// result shows as "mean ± se".
func (t *Table) cells() ([]string, [][]string) {
	header := []string{"task"}
	if t.Aggregated {
		header[0] = "n"
	}
	header = append(header, t.Params...)
	var shown []string
	for _, r := range t.Results {
		if t.Aggregated && strings.HasSuffix(r, seSuffix) {
			continue
		}
		shown = append(shown, r)
	}
	header = append(header, shown...)
	if !t.Aggregated {
		header = append(header, "state")
	}
	rows := make([][]string, len(t.Rows))
	for k, r := range t.Rows {
		c := []string{strconv.Itoa(r.Index)}
		if t.Aggregated {
			c[0] = strconv.Itoa(r.N)
		}
		for _, p := range t.Params {
			c = append(c, formatParam(r.Params[p]))
		}
		for _, name := range shown {
			v, ok := r.Values[name]
			s := ""
			if ok {
				s = strconv.FormatFloat(v, 'g', 6, 64)
				if se, ok := r.Values[name+seSuffix]; ok && t.Aggregated {
					s += " ± " + strconv.FormatFloat(se, 'g', 2, 64)
				}
			}
			c = append(c, s)
		}
		if !t.Aggregated {
			c = append(c, r.State)
		}
		rows[k] = c
	}
	return header, rows
}

// HTML renders the table (how a notebook shows it).
func (t *Table) HTML() string {
	header, rows := t.cells()
	var b strings.Builder
	b.WriteString(`<table class="hm-sweep-table"><thead><tr>`)
	for _, h := range header {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, c := range r {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// String renders the table as aligned text columns.
func (t *Table) String() string {
	header, rows := t.cells()
	width := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for k, c := range r {
			width[k] = max(width[k], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{header}, rows...) {
		for k, c := range r {
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", width[k]-len([]rune(c))))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// schemaPrefix starts the first line of a table's CSV form, which names the
// parameter columns (the header alone cannot tell them from the results).
const schemaPrefix = "# harmonium sweep table: "

// WriteCSV writes the table as CSV: a comment line naming the parameter
// columns (and the seed parameter, whether the table is aggregated, and
// the script's SHA-256),
// the Note as comment lines ("# …"), a header, then one line per row, with
// full-precision numbers and empty cells for missing results. Readers that
// skip comment lines (pandas' comment="#", R's comment.char) read the rest
// as a plain CSV; ReadCSV reads all of it back.
func (t *Table) WriteCSV(w io.Writer) error {
	schema := schemaPrefix + "params=" + strings.Join(t.Params, ",")
	if t.Seed != "" {
		schema += "; seed=" + t.Seed
	}
	if t.Aggregated {
		schema += "; aggregated"
	}
	if t.ScriptSHA256 != "" {
		schema += "; script_sha256=" + t.ScriptSHA256
	}
	lines := []string{schema}
	if t.Note != "" {
		for _, l := range strings.Split(strings.TrimRight(t.Note, "\n"), "\n") {
			lines = append(lines, strings.TrimRight("# "+l, " "))
		}
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	header := append([]string{"task", "state"}, t.Params...)
	header = append(append(header, t.Results...), "n")
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range t.Rows {
		rec := []string{strconv.Itoa(r.Index), r.State}
		for _, p := range t.Params {
			rec = append(rec, csvParam(r.Params[p]))
		}
		for _, name := range t.Results {
			s := ""
			if v, ok := r.Values[name]; ok {
				s = strconv.FormatFloat(v, 'g', -1, 64)
			}
			rec = append(rec, s)
		}
		rec = append(rec, strconv.Itoa(r.N))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvParam writes a parameter so that ReadCSV reads back its type: a float
// always with a fraction or an exponent (1 → 1.0), as in JSON (formatFloat),
// and NaN and ±Inf unquoted.
func csvParam(v any) string {
	f, ok := v.(float64)
	if !ok {
		return fmt.Sprint(v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return formatFloat(f)
}

// maxCSVColumns bounds the columns ReadCSV accepts, so that a corrupt file
// fails before it allocates rows of that width.
const maxCSVColumns = 10000

// ReadCSV reads a table that WriteCSV wrote (`harmonium sweep collect DIR
// -o TABLE.csv`), with its parameter columns, seed parameter, aggregation,
// script hash and Note. A parameter cell reads back as an int64 when it is an integer,
// a float64 when it is another number, a bool for true and false, and a
// string otherwise (so a string parameter that looks like a number reads
// as one; Where compares ints and floats by value). Errors name the file
// and line.
func ReadCSV(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	defer f.Close()
	t, err := readCSV(f)
	if err != nil {
		return nil, fmt.Errorf("sweep: %s: %w", path, err)
	}
	return t, nil
}

// ReadChecked reads a committed table (ReadCSV) and checks it before any
// use: it must come from script (CheckScript) and every task must be done
// (CheckDone). Errors name the file. It is how a notebook reads the table
// of a sweep run once and committed next to it.
func ReadChecked(path, script string) (*Table, error) {
	t, err := ReadCSV(path)
	if err != nil {
		return nil, err
	}
	if err := t.CheckScript(script); err != nil {
		return nil, fmt.Errorf("%s: %w (the command is in its note)", path, err)
	}
	if err := t.CheckDone(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// readCSV parses the CSV form of a table (see ReadCSV).
func readCSV(r io.Reader) (*Table, error) {
	br := bufio.NewReader(r)
	first, err := br.ReadString('\n')
	if err != nil && first == "" {
		return nil, fmt.Errorf("line 1: empty file, want a line starting %q", schemaPrefix)
	}
	schema, ok := strings.CutPrefix(strings.TrimRight(first, "\r\n"), schemaPrefix)
	if !ok {
		return nil, fmt.Errorf("line 1: want a line starting %q (a table written by harmonium sweep collect -o FILE.csv)", schemaPrefix)
	}
	t := &Table{}
	var params []string
	for _, part := range strings.Split(schema, "; ") {
		key, val, _ := strings.Cut(part, "=")
		switch key {
		case "params":
			if val != "" {
				params = strings.Split(val, ",")
			}
		case "seed":
			t.Seed = val
		case "aggregated":
			t.Aggregated = true
		case "script_sha256":
			if _, err := hex.DecodeString(val); err != nil || len(val) != 2*sha256.Size {
				return nil, fmt.Errorf("line 1: script_sha256=%q is not a hex SHA-256", val)
			}
			t.ScriptSHA256 = val
		default:
			return nil, fmt.Errorf("line 1: unknown field %q", part)
		}
	}
	// The Note: the comment lines between the schema line and the header.
	skipped := 1
	var note []string
	for {
		b, err := br.Peek(1)
		if err != nil || b[0] != '#' {
			break
		}
		l, _ := br.ReadString('\n')
		skipped++
		l = strings.TrimPrefix(strings.TrimRight(l, "\r\n"), "#")
		note = append(note, strings.TrimPrefix(l, " "))
	}
	t.Note = strings.Join(note, "\n")
	cr := csv.NewReader(br)
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("line %d, the header: %w", skipped+1, err)
	}
	// lineOf is the file's line number of the record the csv reader read
	// last (it counts from the header).
	lineOf := func() int {
		l, _ := cr.FieldPos(0)
		return l + skipped
	}
	line := lineOf()
	np := len(params)
	if len(header) > maxCSVColumns {
		return nil, fmt.Errorf("line %d: %d columns, more than the %d a table may have", line, len(header), maxCSVColumns)
	}
	if len(header) < np+3 || header[0] != "task" || header[1] != "state" || header[len(header)-1] != "n" ||
		strings.Join(header[2:2+np], ",") != strings.Join(params, ",") {
		return nil, fmt.Errorf("line %d: header %q, want task, state, the parameters %q, the results, n", line, strings.Join(header, ","), strings.Join(params, ","))
	}
	t.Params = params
	t.Results = header[2+np : len(header)-1]
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("line %d: %w", pe.Line+skipped, pe.Err)
			}
			return nil, err
		}
		line := lineOf()
		row := Row{State: rec[1], Params: Params{}, Values: map[string]float64{}}
		if row.Index, err = strconv.Atoi(rec[0]); err != nil {
			return nil, fmt.Errorf("line %d: task %q is not an integer", line, rec[0])
		}
		if row.N, err = strconv.Atoi(rec[len(rec)-1]); err != nil {
			return nil, fmt.Errorf("line %d: n %q is not an integer", line, rec[len(rec)-1])
		}
		for k, name := range params {
			row.Params[name] = parseCSVParam(rec[2+k])
		}
		for k, name := range t.Results {
			cell := rec[2+np+k]
			if cell == "" {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: result %s = %q is not a number", line, name, cell)
			}
			row.Values[name] = v
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// parseCSVParam gives a parameter cell its type (see ReadCSV): a number
// the way a grid's are typed (normalize), then true and false, then a string.
func parseCSVParam(s string) any {
	if v, err := normalize(json.Number(s)); err == nil {
		return v
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	return s
}

// jsonRow is a row in the JSON form of a table.
type jsonRow struct {
	Index   int     `json:"task"`
	State   string  `json:"state"`
	N       int     `json:"n"`
	Params  Params  `json:"params"`
	Results []Value `json:"results"`
}

// WriteJSON writes the table as a JSON array of rows (task, state, n,
// params, results). Only the CSV form keeps the Note and ScriptSHA256.
func (t *Table) WriteJSON(w io.Writer) error {
	rows := make([]jsonRow, len(t.Rows))
	for k, r := range t.Rows {
		jr := jsonRow{Index: r.Index, State: r.State, N: r.N, Params: r.Params, Results: []Value{}}
		for _, name := range t.Results {
			if v, ok := r.Values[name]; ok {
				jr.Results = append(jr.Results, Value{Name: name, Value: v})
			}
		}
		rows[k] = jr
	}
	b, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Save writes the table to path, as CSV or JSON by its extension (.csv,
// .json), atomically.
func (t *Table) Save(path string) error {
	var b strings.Builder
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		err = t.WriteCSV(&b)
	case ".json":
		err = t.WriteJSON(&b)
	default:
		return fmt.Errorf("sweep: %s: want a .csv or .json file", path)
	}
	if err != nil {
		return fmt.Errorf("sweep: %s: %w", path, err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	return writeFileAtomic(path, []byte(b.String()))
}
