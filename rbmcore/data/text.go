package data

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// LoadText reads a matrix from a text file: one sample per line, values
// separated by commas, semicolons, tabs or spaces; blank lines and lines
// starting with '#' are skipped. The kind is inferred from the values
// ("binary" for 0/1, "spin" for ±1, "real" otherwise). A bad value or a row
// of the wrong length gives an error naming the file, line and column.
func LoadText(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<28)
	var vals []float64
	width, rows, line := -1, 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		fields := strings.FieldsFunc(text, func(r rune) bool {
			return r == ',' || r == ';' || r == ' ' || r == '\t'
		})
		if width < 0 {
			width = len(fields)
		} else if len(fields) != width {
			return nil, fmt.Errorf("data: %s:%d: %d values, but earlier rows have %d", path, line, len(fields), width)
		}
		for k, fs := range fields {
			v, err := strconv.ParseFloat(fs, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("data: %s:%d: column %d: bad value %q", path, line, k+1, fs)
			}
			vals = append(vals, v)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("data: %s: after line %d: %w", path, line, err)
	}
	if rows == 0 {
		return nil, fmt.Errorf("data: %s: no data rows", path)
	}
	x := mat.NewDense(rows, width, vals)
	return &Set{X: x, Kind: inferKind(x), Q: 1, Source: path}, nil
}
