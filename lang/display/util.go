package display

import (
	"html"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func padPercent(p int) string {
	s := strconv.Itoa(p)
	for len(s) < 3 {
		s = " " + s
	}
	return s
}

func htmlEscape(s string) string { return html.EscapeString(s) }
