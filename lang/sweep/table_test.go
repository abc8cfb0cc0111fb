package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testTable() *Table {
	row := func(i int, g float64, seed int64, ll float64) Row {
		return Row{Index: i, State: StatusDone, Params: Params{"g": g, "seed": seed}, Values: map[string]float64{"ll": ll}, N: 1}
	}
	return &Table{Params: []string{"g", "seed"}, Results: []string{"ll"}, Seed: "seed", Rows: []Row{
		row(0, 0.5, 1, -1), row(1, 0.5, 2, -2), row(2, 0.5, 3, -6),
		row(3, 0.1, 1, 4), {Index: 4, State: StatusFailed, Params: Params{"g": 0.1, "seed": int64(2)}, Values: map[string]float64{}, N: 1},
	}}
}

func TestAggregate(t *testing.T) {
	a := testTable().Aggregate()
	if len(a.Rows) != 2 || !a.Aggregated || strings.Join(a.Params, ",") != "g" || strings.Join(a.Results, ",") != "ll,ll_se" {
		t.Fatalf("aggregate: %+v", a)
	}
	// g = 0.5: values -1, -2, -6: mean -3, sample variance ((2)²+(1)²+(3)²)/2 = 7, se √(7/3).
	r := a.Rows[0]
	if r.Params["g"] != 0.5 || r.N != 3 || r.Values["ll"] != -3 || math.Abs(r.Values["ll_se"]-math.Sqrt(7.0/3)) > 1e-15 {
		t.Errorf("g = 0.5 row %+v, want mean -3, se %v, n 3", r, math.Sqrt(7.0/3))
	}
	// g = 0.1: the failed seed is left out; one value has se 0.
	if r := a.Rows[1]; r.N != 1 || r.Values["ll"] != 4 || r.Values["ll_se"] != 0 {
		t.Errorf("g = 0.1 row %+v", r)
	}
	xy := a.XY("g", "ll")
	if len(xy) != 2 || xy[0].X != 0.1 || xy[0].Y != 4 || xy[1].X != 0.5 {
		t.Errorf("XY sorted by x: %v", xy)
	}
	if e := a.YErrors("g", "ll"); e[1].Low != a.Rows[0].Values["ll_se"] || e[0].High != 0 {
		t.Errorf("YErrors %v", e)
	}
	if s := a.String(); !strings.Contains(s, "-3 ± 1.5") {
		t.Errorf("text:\n%s", s)
	}
}

func TestTableColumns(t *testing.T) {
	tb := testTable()
	ll := tb.Column("ll")
	if ll[0] != -1 || !math.IsNaN(ll[4]) {
		t.Errorf("ll column %v", ll)
	}
	if s := tb.Column("seed"); s[2] != 3 {
		t.Errorf("seed column %v", s)
	}
	if w := tb.Where("g", 0.1); len(w.Rows) != 2 {
		t.Errorf("Where g = 0.1: %d rows", len(w.Rows))
	}
	if w := tb.Where("seed", 1); len(w.Rows) != 2 {
		t.Errorf("Where seed = 1 (an int): %d rows", len(w.Rows))
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `no column "l"`) {
			t.Errorf("Column of a missing name: %v", r)
		}
	}()
	tb.Column("l")
}

func TestTableRender(t *testing.T) {
	tb := testTable()
	tb.Rows[0].Params["g"] = 0.5
	tb.Results = append(tb.Results, "<b>")
	h := tb.HTML()
	if !strings.Contains(h, "<th>&lt;b&gt;</th>") || strings.Count(h, "<tr>") != 6 {
		t.Errorf("HTML %s", h)
	}
	var b strings.Builder
	if err := tb.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if lines[0] != "# harmonium sweep table: params=g,seed; seed=seed" || lines[1] != "task,state,g,seed,ll,<b>,n" ||
		lines[2] != "0,done,0.5,1,-1,,1" || lines[6] != "4,failed,0.1,2,,,1" {
		t.Errorf("CSV:\n%s", b.String())
	}
}

func TestCSVRoundTrip(t *testing.T) {
	tb := testTable()
	tb.Params = append(tb.Params, "kind", "on", "scale")
	for k := range tb.Rows {
		tb.Rows[k].Params["kind"] = []string{"real", "shuffled, with a comma"}[k%2]
		tb.Rows[k].Params["on"] = k%2 == 0
		tb.Rows[k].Params["scale"] = 2.0 // integral: must read back as a float
	}
	tb.Rows[1].Values["ll"] = math.NaN()
	tb.Note = "made by: harmonium sweep run s.go --grid g.json\n\nsecond line"
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := tb.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Note != tb.Note || got.Seed != "seed" || got.Aggregated || !reflect.DeepEqual(got.Params, tb.Params) || !reflect.DeepEqual(got.Results, tb.Results) {
		t.Fatalf("read back %+v, want %+v", got, tb)
	}
	if len(got.Rows) != len(tb.Rows) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(tb.Rows))
	}
	for k, r := range got.Rows {
		w := tb.Rows[k]
		if r.Index != w.Index || r.State != w.State || r.N != w.N || !reflect.DeepEqual(r.Params, w.Params) {
			t.Errorf("row %d: %+v, want %+v", k, r, w)
		}
		if len(r.Values) != len(w.Values) {
			t.Errorf("row %d values %v, want %v", k, r.Values, w.Values)
		}
		for name, v := range w.Values {
			if g := r.Values[name]; g != v && !(math.IsNaN(g) && math.IsNaN(v)) {
				t.Errorf("row %d %s = %v, want %v", k, name, g, v)
			}
		}
	}
	if w := got.Where("seed", 1.0); len(w.Rows) != 2 {
		t.Errorf("Where seed = 1.0 on the read table: %d rows", len(w.Rows))
	}
	// An aggregated table keeps its flag and its standard errors.
	agg := tb.Aggregate()
	if err := agg.Save(path); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadCSV(path); err != nil || !got.Aggregated || got.Seed != "" || got.Rows[0].Values["ll_se"] != agg.Rows[0].Values["ll_se"] {
		t.Errorf("aggregated table read back as %+v (%v)", got, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	dir := t.TempDir()
	schema := "# harmonium sweep table: params=g\n"
	for _, c := range []struct{ text, want string }{
		{"", "line 1: empty file"},
		{"task,state,g,ll,n\n0,done,1.0,2,1\n", "line 1: want a line starting"},
		{schema + "# a note\ntask,state,h,ll,n\n", `line 3: header "task,state,h,ll,n"`},
		{schema + "task,state,g,ll,n\n0,done,1.0,2,1\n1,done,2.0,x,1\n", "line 4: result ll = \"x\" is not a number"},
		{schema + "# a note\ntask,state,g,ll,n\n0,done,1.0,2,1\n1,done,2.0,1\n", "line 5: wrong number of fields"},
		{schema + "task,state,g,ll,n\nzero,done,1.0,2,1\n", `line 3: task "zero" is not an integer`},
		{"# harmonium sweep table: params=g; colour=red\n", `unknown field "colour=red"`},
	} {
		path := filepath.Join(dir, "t.csv")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadCSV(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: error %v, want one naming %s and containing %q", c.text, err, path, c.want)
		}
	}
}

func TestCheckScriptAndDone(t *testing.T) {
	const script = "sweep.Record(\"x\", 1)\n"
	sum := sha256.Sum256([]byte(script))
	tb := testTable()
	if err := tb.CheckScript(script); err == nil || !strings.Contains(err.Error(), "does not say") {
		t.Errorf("a table without a script hash: %v", err)
	}
	tb.ScriptSHA256 = hex.EncodeToString(sum[:])
	if err := tb.CheckScript(script); err != nil {
		t.Errorf("the table's own script: %v", err)
	}
	if err := tb.CheckScript(script + "// edited\n"); err == nil || !strings.Contains(err.Error(), tb.ScriptSHA256) {
		t.Errorf("an edited script: %v, want an error naming the table's hash", err)
	}
	// The hash survives the CSV form and averaging.
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := tb.Aggregate().Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.CheckScript(script) != nil {
		t.Errorf("read back with hash %q", back.ScriptSHA256)
	}
	// Task 4 of testTable failed.
	if err := tb.CheckDone(); err == nil || !strings.Contains(err.Error(), "task 4") || !strings.Contains(err.Error(), "failed") {
		t.Errorf("CheckDone with a failed task: %v", err)
	}
	if err := tb.Done().CheckDone(); err != nil {
		t.Errorf("CheckDone on the done rows: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("# harmonium sweep table: params=g; script_sha256=abc\ntask,state,g,n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCSV(bad); err == nil || !strings.Contains(err.Error(), "not a hex SHA-256") {
		t.Errorf("a malformed script hash: %v", err)
	}
	// ReadChecked: the done rows from their own script pass; another script, a failed task or a
	// missing file is an error naming the file.
	donePath := filepath.Join(t.TempDir(), "done.csv")
	done := tb.Done()
	if err := done.Save(donePath); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadChecked(donePath, script); err != nil || len(got.Rows) != len(done.Rows) {
		t.Errorf("ReadChecked of a complete table from its script: %v", err)
	}
	failedPath := filepath.Join(t.TempDir(), "failed.csv")
	if err := tb.Save(failedPath); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, script, want string }{
		{donePath, script + "// edited\n", "run the sweep again"},
		{failedPath, script, "task 4"},
		{filepath.Join(t.TempDir(), "missing.csv"), script, "missing.csv"},
	} {
		if _, err := ReadChecked(c.path, c.script); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Base(c.path)) {
			t.Errorf("ReadChecked(%s): %v, want an error naming the file and containing %q", filepath.Base(c.path), err, c.want)
		}
	}
}
