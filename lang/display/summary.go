package display

import (
	"fmt"
	"html"
	"reflect"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// rbmcorePrefix is the import path prefix of the packages whose values get an
// HTML summary (models, trainers, results) unless they render themselves.
const rbmcorePrefix = "github.com/harmonium-rbm/harmonium/rbmcore/"

// maxSummaryFields bounds the rows of a summary table.
const maxSummaryFields = 40

// summaryHTML renders a struct (or pointer to one) from rbmcore as an HTML
// table of its exported fields: scalars with their values, matrices and
// slices with their shapes, nested values by type (and String() when they
// have one). ok is false for other values.
func summaryHTML(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	t := rv.Type()
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "", false
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct || !strings.HasPrefix(rv.Type().PkgPath(), rbmcorePrefix) {
		return "", false
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<table class=\"hm-summary\"><caption><b>%s</b></caption>\n", html.EscapeString(t.String()))
	if s, ok := v.(fmt.Stringer); ok {
		fmt.Fprintf(&sb, "<tr><td colspan=\"2\"><pre>%s</pre></td></tr>\n", html.EscapeString(s.String()))
	}
	rows := 0
	for i := 0; i < rv.NumField() && rows < maxSummaryFields; i++ {
		f := rv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		rows++
		fmt.Fprintf(&sb, "<tr><th style=\"text-align:left\">%s</th><td style=\"text-align:left\">%s</td></tr>\n",
			html.EscapeString(f.Name), html.EscapeString(fieldSummary(rv.Field(i))))
	}
	sb.WriteString("</table>")
	return sb.String(), true
}

// fieldSummary describes one field value in a line.
func fieldSummary(f reflect.Value) string {
	if !f.IsValid() {
		return "<nil>"
	}
	if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface || f.Kind() == reflect.Slice ||
		f.Kind() == reflect.Map || f.Kind() == reflect.Func) && f.IsNil() {
		return "nil"
	}
	if !f.CanInterface() {
		return f.Type().String()
	}
	x := f.Interface()
	if m, ok := x.(mat.Matrix); ok {
		r, c := m.Dims()
		return fmt.Sprintf("%d×%d %T", r, c, x)
	}
	switch f.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
		return Text(x)
	case reflect.Slice, reflect.Array:
		s := fmt.Sprintf("%s, len %d", f.Type(), f.Len())
		if f.Len() > 0 && f.Len() <= 8 && f.Type().Elem().Kind() <= reflect.Float64 {
			s += fmt.Sprintf(": %v", x)
		}
		return s
	case reflect.Func:
		return f.Type().String()
	}
	if s, ok := x.(fmt.Stringer); ok {
		str := s.String()
		if i := strings.IndexByte(str, '\n'); i >= 0 {
			str = str[:i] + " …"
		}
		return fmt.Sprintf("%T: %s", x, str)
	}
	return fmt.Sprintf("%T", x)
}
