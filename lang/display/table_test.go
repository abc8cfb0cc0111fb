package display

import (
	"fmt"
	"strings"
	"testing"
)

func TestTableText(t *testing.T) {
	tab := &Table{Caption: "c", Columns: []string{"a", "measured"}}
	tab.Add("x ≥ 1", "2")
	tab.Add("long quantity")
	want := "c\n" +
		"a             | measured\n" +
		"------------------------\n" +
		"x ≥ 1         | 2\n" +
		"long quantity | \n"
	if got := tab.String(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if Text(tab) != want {
		t.Errorf("Text(table) is not its fixed-width rendering")
	}
}

func TestReproductionHTML(t *testing.T) {
	r := NewReproduction("Paper 2020")
	r.Check("m <b>", "0.5 (Fig. 2)", "0.49 ± 0.01", "|m − 0.5| < 3 SE", true)
	r.Check("k", "5 (Fig. 3)", "4", "= 5", false)
	r.Info("t", "-", "1.5 s")
	b := Bundle(r)
	h := b["text/html"].(string)
	if strings.Count(h, "<tr>") != 4 || strings.Count(h, "<th ") != 5 || strings.Count(h, "<td ") != 15 {
		t.Errorf("HTML shape: %s", h)
	}
	for _, s := range []string{"m &lt;b&gt;", ">our criterion</th>", "#1a7f37;font-weight:bold;white-space:nowrap\">pass</td>",
		"#cf222e;font-weight:bold;white-space:nowrap\">fail</td>", "<caption"} {
		if !strings.Contains(h, s) {
			t.Errorf("HTML lacks %q:\n%s", s, h)
		}
	}
	lines := strings.Split(b["text/plain"].(string), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[1], "quantity | paper (location) | measured    | our criterion    | check") ||
		lines[5] != "t        | -                | 1.5 s       | -                | -" {
		t.Errorf("text:\n%s", strings.Join(lines, "\n"))
	}
}

func TestReproductionNull(t *testing.T) {
	r := NewReproduction("Paper 2020")
	r.Check("m", "0.5 (Fig. 2)", "0.49", "|m − 0.5| < 0.1", false)
	r.Null("shuffled data", "0.02", "|m − 0.5| < 0.1", false)
	r.Null("wrong model", "0.45", "|m − 0.5| < 0.1", true)
	if got := r.Rows[1]; strings.Join(got, "|") != "null: shuffled data|must fail|0.02||m − 0.5| < 0.1|fail" {
		t.Errorf("null row: %q", got)
	}
	h := Bundle(r)["text/html"].(string)
	rows := strings.Split(h, "<tr>")[2:] // after the header row
	if len(rows) != 3 {
		t.Fatalf("HTML rows: %d\n%s", len(rows), h)
	}
	for i, want := range []string{
		`#cf222e;font-weight:bold;white-space:nowrap">fail</td>`,
		`#1a7f37;font-weight:bold;white-space:nowrap" title="the null model fails, as it must">fail</td>`,
		`#cf222e;font-weight:bold;white-space:nowrap" title="the null model passes`,
	} {
		if !strings.Contains(rows[i], want) {
			t.Errorf("row %d lacks %q:\n%s", i, want, rows[i])
		}
	}
	if tab := r.Table.HTML(); strings.Contains(tab, "title=") {
		t.Errorf("a plain Table marks null rows:\n%s", tab)
	}
	if line := strings.Split(r.String(), "\n")[4]; !strings.HasPrefix(line, "null: shuffled data | must fail ") || !strings.HasSuffix(line, "| fail") {
		t.Errorf("text row: %q", line)
	}
}

// A long table keeps every row in its text/plain rendering, beyond the bound
// that Text puts on values printed by accident.
func TestBundleLongTable(t *testing.T) {
	r := NewReproduction("a long table")
	long := strings.Repeat("x", 200)
	for k := 0; k < 200; k++ {
		r.Check(fmt.Sprintf("row %d %s", k, long), "paper", "1.0", "> 0", true)
	}
	last := fmt.Sprintf("row %d %s", 199, long)
	for _, v := range []any{r, &r.Table} {
		b := Bundle(v)
		text, _ := b["text/plain"].(string)
		if len(text) <= maxText || !strings.Contains(text, last) || strings.Contains(text, "more bytes") {
			t.Errorf("%T: text/plain of %d bytes lacks the last row or is truncated", v, len(text))
		}
		if html, _ := b["text/html"].(string); !strings.Contains(html, last) {
			t.Errorf("%T: text/html lacks the last row", v)
		}
	}
}
