package lang

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
)

// A cell may hold a whole program: a package clause, imports, declarations
// and func main. yaegi runs a package main's func main after every later
// compilation once one is declared (each cell then ran it again), and as an
// init step of the compilation declaring it, before the cell's statements
// (package-level var declarations among them) have run. So a cell's
// func main is declared under an internal name, through the same renaming
// as redefined types (main() in later cells calls it), and the cell calls it
// once, after all of its declarations and statements.

// mainName is the interpreter's name of the cells' func main.
const mainName = "__hmMain"

// declaresMain returns the declaration item of func main (without
// receiver) among the items of src, before renaming.
func declaresMain(src string, items []item) (item, bool) {
	for _, it := range items {
		if it.kind != itemDecl {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", "package main;"+src[it.start:it.end], parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && (fd.Name.Name == "main" || fd.Name.Name == mainName) {
				return it, true
			}
		}
	}
	return item{}, false
}

// runMain calls the func main the cell declared at it, once.
func (s *Session) runMain(ctx context.Context, src string, it item) *Error {
	_, e := s.eval(ctx, "\n;"+lineDirective(it.line, it.col)+mainName+"()", src)
	return e
}
