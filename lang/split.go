package lang

import (
	"fmt"
	"go/scanner"
	"go/token"
	"regexp"
	"strings"
)

// itemKind classifies a top-level item of a cell.
type itemKind int

const (
	itemImport  itemKind = iota // import declaration
	itemDecl                    // func, method, type or const declaration
	itemStmt                    // statement, including var declarations
	itemPackage                 // package clause (ignored: cells are in package main)
)

// item is one top-level element of a cell: a declaration or a statement,
// delimited by a semicolon (explicit or automatic) at nesting depth zero.
type item struct {
	kind       itemKind
	start, end int // byte offsets in the cell
	line, col  int // position of start (1-based)
}

// scanTok is one scanned token.
type scanTok struct {
	pos token.Pos
	tok token.Token
}

// splitCell cuts src into top-level items, in source order. Go's automatic
// semicolon rules make this exact: an item ends at a semicolon outside any
// parentheses, brackets or braces, except the semicolons of the header of a
// for, if or switch statement (for i := 0; i < n; i++ {), which end at the
// brace that opens the statement's body. A composite literal in a header
// must be parenthesised in Go, so the first brace at depth zero after the
// keyword opens the body, unless it opens the body of a function literal in
// the header (if f := func() bool { … }; f() {).
func splitCell(src string) ([]item, error) {
	fset := token.NewFileSet()
	file := fset.AddFile("cell", -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, []byte(src), func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)

	var items []item
	var cur []scanTok
	depth := 0
	header := false // inside the header of a top-level for, if or switch
	funcLits := 0   // function literals opened in that header, bodies not yet seen
	flush := func(end int) {
		if len(cur) == 0 {
			return
		}
		start := file.Offset(cur[0].pos)
		p := file.Position(cur[0].pos)
		it := item{kind: itemStmt, start: start, end: end, line: p.Line, col: p.Column}
		switch cur[0].tok {
		case token.IMPORT:
			it.kind = itemImport
		case token.PACKAGE:
			it.kind = itemPackage
		case token.TYPE, token.CONST:
			it.kind = itemDecl
		case token.FUNC:
			if isFuncDecl(cur) {
				it.kind = itemDecl
			}
		}
		items = append(items, it)
		cur = cur[:0]
	}
	for {
		pos, t, _ := s.Scan()
		if t == token.EOF {
			flush(len(src))
			break
		}
		switch t {
		case token.FOR, token.IF, token.SWITCH:
			if depth == 0 {
				header, funcLits = true, 0
			}
		case token.FUNC:
			if depth == 0 && header {
				funcLits++
			}
		case token.LBRACE:
			if depth == 0 && header {
				if funcLits > 0 {
					funcLits--
				} else {
					header = false
				}
			}
			depth++
		case token.LPAREN, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
		case token.SEMICOLON:
			if depth == 0 && !header {
				flush(min(file.Offset(pos), len(src)))
				continue
			}
		}
		cur = append(cur, scanTok{pos, t})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return items, nil
}

// isFuncDecl tells a function or method declaration from a statement that
// starts with a function literal, by the tokens of the item.
func isFuncDecl(toks []scanTok) bool {
	if len(toks) < 2 {
		return false
	}
	if toks[1].tok == token.IDENT {
		return true
	}
	if toks[1].tok != token.LPAREN {
		return false
	}
	depth := 0
	for i := 1; i < len(toks); i++ {
		switch toks[i].tok {
		case token.LPAREN:
			depth++
		case token.RPAREN:
			depth--
			if depth == 0 {
				return i+1 < len(toks) && toks[i+1].tok == token.IDENT
			}
		}
	}
	return false
}

// lineCol returns the 1-based line and column of byte offset off in src.
func lineCol(src string, off int) (line, col int) {
	before := src[:off]
	line = strings.Count(before, "\n") + 1
	col = off - strings.LastIndex(before, "\n")
	return line, col
}

// lineDirective positions the code that follows at line:col of the cell.
// The file name stays empty: yaegi scopes imports by file name, so all code
// of a session must claim the same (empty) one. Messages get their "cell:"
// prefix from cellPos.
func lineDirective(line, col int) string {
	return fmt.Sprintf("\n//line :%d:%d\n", line, col)
}

var leadingPos = regexp.MustCompile(`^(\d+:\d+)(: )`)

// cellPos prefixes a message starting with "line:col: " with "cell:".
func cellPos(msg string) string {
	return leadingPos.ReplaceAllString(msg, "cell:$1$2")
}
