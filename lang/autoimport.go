package lang

import (
	"context"
	"fmt"
	"go/types"
	"strings"
)

// As goimports does, a cell using a standard-library package it has not
// imported (fmt.Println in the first cell) gets the import: an identifier
// the cell neither declares nor finds in the session, used as pkg.Name,
// that is the name of exactly one standard-library package (or of the
// package preferredImports names) is imported before the cell runs.

// preferredImports settles the standard-library names several packages
// share, as goimports does.
var preferredImports = map[string]string{
	"rand":     "math/rand",
	"template": "text/template",
	"pprof":    "runtime/pprof",
	"scanner":  "text/scanner",
}

// stdImportFor returns the import path of the standard-library package
// called name, if it is unambiguous or preferred.
func (s *Session) stdImportFor(name string) (string, bool) {
	if p, ok := preferredImports[name]; ok {
		_, have := s.exports[p]
		return p, have
	}
	found := ""
	for p, n := range s.names {
		if n != name || strings.Contains(strings.SplitN(p, "/", 2)[0], ".") || strings.Contains(p, "internal") {
			continue
		}
		if found != "" {
			return "", false
		}
		found = p
	}
	return found, found != ""
}

// autoImports imports the standard-library packages the items of src use
// without importing them.
func (s *Session) autoImports(ctx context.Context, src string, items []item) *Error {
	var own map[string]bool
	var globals map[string]bool
	for _, it := range items {
		for _, u := range unresolvedIn(src, it) {
			name := u.name
			if s.imports[name] != "" || s.decls[name] != "" || s.types[name] != nil || types.Universe.Lookup(name) != nil {
				continue
			}
			if rest := strings.TrimLeft(src[u.off+len(name):], " \t"); !strings.HasPrefix(rest, ".") {
				continue // not used as a package
			}
			p, ok := s.stdImportFor(name)
			if !ok {
				continue
			}
			if own == nil {
				own = cellNames(src, items)
				globals = globalNames(s)
			}
			if own[name] || globals[name] {
				continue
			}
			if _, e := s.eval(ctx, inCell(fmt.Sprintf("import %s %q", name, p)), src); e != nil {
				return e
			}
			s.imports[name] = p
		}
	}
	return nil
}

// globalNames lists the session's global variables and constants.
func globalNames(s *Session) map[string]bool {
	set := map[string]bool{}
	for n := range s.globals() {
		set[n] = true
	}
	return set
}

// cellNames lists the names the items of src declare at the top level.
func cellNames(src string, items []item) map[string]bool {
	own := map[string]bool{}
	for _, it := range items {
		text := src[it.start:it.end]
		switch it.kind {
		case itemDecl:
			for _, n := range declNames(text) {
				own[n] = true
			}
		case itemStmt:
			for _, n := range definedNames(text) {
				own[n] = true
			}
		}
	}
	return own
}
