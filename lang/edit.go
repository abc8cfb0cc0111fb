package lang

import (
	"fmt"
	"sort"
	"strings"
)

// edit replaces src[start:end] (an insertion when start == end) with the text
// produced by gen. gen is called lazily, after all edits are known, so a
// replacement can embed rewritten sub-spans through editor.span.
type edit struct {
	start, end int
	seq        int
	gen        func() string
}

// editor accumulates non-crossing edits of one source text. Edits may nest:
// an edit strictly inside a replaced span is applied only if the replacement
// embeds that sub-span through span.
//
// When cell is set (src is cell[base:…]), the edited text carries its source
// map: after each edit, a /*line :L:C*/ directive gives the source text that
// follows its position in the cell, so the interpreter's positions (compile
// errors, panics) are the cell's, whatever the edits inserted before them
// on the line.
type editor struct {
	src   string
	edits []*edit
	cell  string
	base  int
}

// resume returns the directive positioning what follows at offset off of
// src, or "" without a cell.
func (e *editor) resume(off int) string {
	if e.cell == "" {
		return ""
	}
	line, col := lineCol(e.cell, e.base+off)
	return fmt.Sprintf("/*line :%d:%d*/", line, col)
}

func (e *editor) replace(start, end int, gen func() string) {
	e.edits = append(e.edits, &edit{start: start, end: end, seq: len(e.edits), gen: gen})
}

func (e *editor) insert(at int, text string) {
	e.replace(at, at, func() string { return text })
}

// contains reports whether edit x lies inside replacement y.
func contains(y, x *edit) bool {
	if x == y || y.start == y.end {
		return false
	}
	if x.start == x.end { // insertion
		return y.start < x.start && x.start < y.end
	}
	if x.start == y.start && x.end == y.end {
		return x.seq < y.seq // the later replacement wraps the earlier one
	}
	return y.start <= x.start && x.end <= y.end
}

// span returns src[a:b] with the outermost edits inside [a, b) applied.
func (e *editor) span(a, b int) string {
	var in []*edit
	for _, x := range e.edits {
		if a <= x.start && x.end <= b {
			in = append(in, x)
		}
	}
	var top []*edit
	for _, x := range in {
		outer := false
		for _, y := range in {
			if contains(y, x) {
				outer = true
				break
			}
		}
		if !outer {
			top = append(top, x)
		}
	}
	sort.SliceStable(top, func(i, j int) bool {
		if top[i].start != top[j].start {
			return top[i].start < top[j].start
		}
		ii, ij := top[i].start == top[i].end, top[j].start == top[j].end
		if ii != ij {
			return ii // insertions before a replacement starting at the same place
		}
		return top[i].seq < top[j].seq
	})
	var sb strings.Builder
	pos := a
	for _, x := range top {
		if x.start < pos {
			continue // crossing edit: ignore rather than corrupt the text
		}
		sb.WriteString(e.src[pos:x.start])
		sb.WriteString(x.gen())
		sb.WriteString(e.resume(x.end))
		pos = x.end
	}
	sb.WriteString(e.src[pos:b])
	return sb.String()
}

// text returns the whole source with all edits applied.
func (e *editor) text() string { return e.span(0, len(e.src)) }
