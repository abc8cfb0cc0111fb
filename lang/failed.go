package lang

import (
	"fmt"
	"go/parser"
	"go/token"
)

// When a declaration fails to compile, yaegi has often registered its name
// already (its global type analysis runs before the compiler proper): a
// later cell calling the function then did nothing, or crashed inside the
// interpreter. The session remembers the names of failed declarations, and a
// later cell using one gets an error naming the earlier failure, until a
// cell declares the name again.

// failedDecl is the failure of a cell's declaration.
type failedDecl struct {
	cell int
	err  string
}

// recordFailedDecls remembers that the declarations items of cell n failed
// with e.
func (s *Session) recordFailedDecls(n int, src string, items []item, e *Error) {
	for _, it := range items {
		for _, name := range declNames(src[it.start:it.end]) {
			s.failed[name] = failedDecl{cell: n, err: e.Value}
		}
	}
}

// forgetFailedDecls drops the failures of the names the items declare
// (they have just been declared again, successfully).
func (s *Session) forgetFailedDecls(src string, items []item) {
	if len(s.failed) == 0 {
		return
	}
	for _, it := range items {
		text := src[it.start:it.end]
		names := declNames(text)
		if it.kind == itemStmt {
			names = definedNames(text)
		}
		for _, name := range names {
			delete(s.failed, name)
		}
	}
}

// useOfFailedDecl returns the error of the first use, among the items of
// src, of a name whose declaration failed in an earlier cell and that the
// cell does not declare itself.
func (s *Session) useOfFailedDecl(src string, items []item) *Error {
	if len(s.failed) == 0 {
		return nil
	}
	own := cellNames(src, items)
	for _, it := range items {
		for _, u := range unresolvedIn(src, it) {
			fd, failed := s.failed[u.name]
			if !failed || own[u.name] {
				continue
			}
			line, col := lineCol(src, u.off)
			msg := fmt.Sprintf("cell:%d:%d: undefined: %s (its declaration in cell %d failed: %s)", line, col, u.name, fd.cell, fd.err)
			return &Error{Name: "CompileError", Value: msg, Traceback: withSource(src, "CompileError: "+msg)}
		}
	}
	return nil
}

// unresolved is an identifier an item uses without declaring it, at byte
// offset off of the cell.
type unresolved struct {
	name string
	off  int
}

// unresolvedIn lists the identifiers a statement or declaration item uses
// without declaring them (go/parser's unresolved identifiers: globals,
// packages, predeclared names, struct literal keys).
func unresolvedIn(src string, it item) []unresolved {
	prefix, suffix := chunkPrefix, "\n}"
	switch it.kind {
	case itemDecl:
		prefix, suffix = declPrefix, ""
	case itemStmt:
	default:
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+src[it.start:it.end]+suffix, 0)
	if err != nil {
		return nil // the split or the rewrite reports it
	}
	var out []unresolved
	for _, id := range f.Unresolved {
		out = append(out, unresolved{id.Name, it.start + fset.Position(id.Pos()).Offset - len(prefix)})
	}
	return out
}
