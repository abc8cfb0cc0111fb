package lang

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Errors speak the user's names: a redefined type is T__7 in the
// interpreter (see types.go) and a cell's func main is mainName; messages,
// source lines and columns of errors are given back in the cell's own
// terms.

// internalName matches an internal name of a redefined type, T__7.
var internalName = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*?)__[0-9]+\b`)

// sourceLine and caretLine match the lines withSource adds.
var (
	sourceLine = regexp.MustCompile(`^ *(\d+) \| `)
	caretLine  = regexp.MustCompile(`^      \| *\^$`)
)

// userName is the name cells use for an internal name of the interpreter:
// T for a redefined type's T__7, main for mainName; other names are
// returned as they are. (Type names printed for users, %T's included,
// go through it.)
func (s *Session) userName(internal string) string {
	if internal == mainName {
		return "main"
	}
	if m := internalName.FindStringSubmatch(internal); m != nil && m[0] == internal {
		if _, ok := s.renames[m[1]]; ok {
			return m[1]
		}
		if _, ok := s.pending.renames[m[1]]; ok {
			return m[1]
		}
	}
	return internal
}

// userTerms rewrites e in the names of code, the cell's source.
func (s *Session) userTerms(e *Error, code string) {
	renames := map[string]string{}
	for k, v := range s.renames {
		renames[k] = v
	}
	for k, v := range s.pending.renames {
		renames[k] = v
	}
	if len(renames) == 0 {
		return
	}
	names := func(t string) string {
		return strings.ReplaceAll(internalName.ReplaceAllStringFunc(t, s.userName), mainName, "main")
	}
	lines := strings.Split(code, "\n")
	// The column of the message is one of the renamed line.
	line, col := 0, 0
	if m := posPattern.FindStringSubmatchIndex(e.Value); m != nil {
		line, _ = strconv.Atoi(e.Value[m[2]:m[3]])
		col, _ = strconv.Atoi(e.Value[m[4]:m[5]])
		if line >= 1 && line <= len(lines) {
			if c := userColumn(lines[line-1], col, renames); c != col {
				e.Value = e.Value[:m[0]] + fmt.Sprintf("cell:%d:%d", line, c) + e.Value[m[1]:]
				col = c
			}
		}
	}
	e.Value = names(e.Value)
	for i, l := range e.Traceback {
		switch {
		case sourceLine.MatchString(l):
			m := sourceLine.FindStringSubmatch(l)
			if n, _ := strconv.Atoi(m[1]); n >= 1 && n <= len(lines) {
				e.Traceback[i] = m[0] + lines[n-1]
			}
		case caretLine.MatchString(l) && col >= 1:
			e.Traceback[i] = "      | " + strings.Repeat(" ", col-1) + "^"
		default:
			e.Traceback[i] = names(l)
		}
	}
	if len(e.Traceback) > 0 && strings.HasPrefix(e.Traceback[0], e.Name+": ") {
		e.Traceback[0] = e.Name + ": " + e.Value
	}
}

// userColumn maps column col of line, once renamed, back to line.
func userColumn(line string, col int, renames map[string]string) int {
	shift := 0
	forIdents(line, func(off int, name string, afterDot bool) {
		to, ok := renames[name]
		if !ok || afterDot || off+shift >= col-1 {
			return
		}
		shift += len(to) - len(name)
	})
	return col - shift
}
