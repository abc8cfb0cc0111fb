package lang

import (
	"go/ast"
	"go/scanner"
	"go/token"
	"regexp"
	"strings"
)

// helpPattern matches IPython's help syntax: a cell that is only a name
// (dotted for package members, fields and methods) with one or two question
// marks after it or before it: `rbm.NewChains?`, `f??`, `?x`.
var helpPattern = regexp.MustCompile(`^\s*(\?{0,2})([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\?{0,2})\s*$`)

// helpQuery parses code as a help request: the name and the detail level
// (0 for `x?`, the doc; 1 for `x??`, the source).
func helpQuery(code string) (name string, detail int, ok bool) {
	m := helpPattern.FindStringSubmatch(code)
	if m == nil || (m[1] == "") == (m[3] == "") {
		return "", 0, false
	}
	return m[2], len(m[1]+m[3]) - 1, true
}

// help answers a help request cell as IPython does: the text that
// inspection (Shift-Tab) shows for the name, or its source for `x??`,
// displayed as the cell's output. handled is false if code is not one.
func (s *Session) help(c *cell, code string) (handled bool) {
	name, detail, ok := helpQuery(code)
	if !ok {
		return false
	}
	text := s.describe(name, detail)
	if text == "" {
		c.out.Stream("stdout", "Object `"+name+"` not found.\n")
		return true
	}
	c.out.Display(map[string]any{"text/plain": strings.TrimRight(text, "\n")}, map[string]any{}, map[string]any{}, false)
	return true
}

// keepFuncSource records the source of the function name declared in decl
// (one declaration of a cell, as recordDecl parsed it with the prefix
// "package main;"), for `f??` and detailed inspection.
func (s *Session) keepFuncSource(name, decl string, f *ast.FuncDecl, prefix int) {
	start, end := int(f.Pos())-1-prefix, int(f.End())-1-prefix
	if f.Doc != nil {
		start = int(f.Doc.Pos()) - 1 - prefix
	}
	if start < 0 || end > len(decl) || start > end {
		return
	}
	if s.sources == nil {
		s.sources = map[string]string{}
	}
	s.sources[name] = decl[start:end]
}

// codeScope lists the imports and top-level names declared by code (a cell
// being edited, perhaps not yet run and not yet complete), so completion
// sees them before the cell runs. Names are what scanning finds: imports,
// func and type declarations, var and const names and := assignments.
func (s *Session) codeScope(code string) (imports map[string]string, names map[string]string) {
	imports, names = map[string]string{}, map[string]string{}
	toks := scanTokens(code)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := func(k int) scanned {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return scanned{}
		}
		switch t.tok {
		case token.IMPORT:
			i += s.scanImports(toks[i+1:], imports)
		case token.FUNC:
			if n := next(1); n.tok == token.IDENT {
				names[n.lit] = "function"
			}
		case token.TYPE:
			if n := next(1); n.tok == token.IDENT {
				names[n.lit] = "type"
			}
		case token.VAR, token.CONST:
			if n := next(1); n.tok == token.IDENT {
				names[n.lit] = "variable"
			}
		case token.DEFINE: // a, b := …
			for k := i - 1; k >= 0 && toks[k].tok == token.IDENT; k -= 2 {
				names[toks[k].lit] = "variable"
				if k == 0 || toks[k-1].tok != token.COMMA {
					break
				}
			}
		}
	}
	return imports, names
}

// scanImports reads the import specs after an import keyword (one spec or a
// parenthesised group) into imports and returns how many tokens it used.
func (s *Session) scanImports(toks []scanned, imports map[string]string) int {
	spec := func(i int) int { // one spec at toks[i]: [name] "path"
		alias := ""
		if i < len(toks) && (toks[i].tok == token.IDENT || toks[i].tok == token.PERIOD) {
			alias, i = toks[i].lit, i+1
		}
		if i < len(toks) && toks[i].tok == token.STRING {
			s.addImport(imports, alias, strings.Trim(toks[i].lit, "\"`"))
			return i + 1
		}
		return i
	}
	if len(toks) > 0 && toks[0].tok == token.LPAREN {
		i := 1
		for i < len(toks) && toks[i].tok != token.RPAREN {
			if j := spec(i); j > i {
				i = j
			} else {
				i++
			}
		}
		return i
	}
	return spec(0)
}

// addImport adds the import of path p to imports under the name cells use:
// alias, or the package's own name from the symbol tables. Paths without a
// symbol table cannot be completed and are left out.
func (s *Session) addImport(imports map[string]string, alias, p string) {
	if _, known := s.exports[p]; !known {
		return
	}
	name := s.names[p]
	if alias != "" {
		name = alias
	}
	if name != "_" && name != "." && name != "" {
		imports[name] = p
	}
}

// scanned is one token of a scanned cell.
type scanned struct {
	pos int // byte offset
	tok token.Token
	lit string
}

// scanTokens scans code (which may be incomplete) into tokens, without
// comments and automatic semicolons; scanning errors are ignored.
func scanTokens(code string) []scanned {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var sc scanner.Scanner
	sc.Init(file, []byte(code), func(token.Position, string) {}, 0)
	var toks []scanned
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			return toks
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		if lit == "" {
			lit = tok.String()
		}
		toks = append(toks, scanned{pos: file.Offset(pos), tok: tok, lit: lit})
	}
}

// enclosingCall returns the callee of the innermost call whose parentheses
// are still open at cursor, as a dotted name ("rbm.NewChains"), or "".
// Brackets of index expressions and literals inside the call are passed
// over: in `f(a, []int{1, |` the call is f.
func enclosingCall(code string, cursor int) string {
	toks := scanTokens(code[:cursor])
	var stack []string // callee of each open bracket ("" for non-calls)
	for i, t := range toks {
		switch t.tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			callee := ""
			if t.tok == token.LPAREN {
				callee = dottedBefore(toks, i)
			}
			stack = append(stack, callee)
		case token.RPAREN, token.RBRACK, token.RBRACE:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	for k := len(stack) - 1; k >= 0; k-- {
		if stack[k] != "" {
			return stack[k]
		}
	}
	return ""
}

// dottedBefore returns the dotted name (a.b.c) that ends just before token
// i, or "" if there is none (a parenthesised expression, a func literal).
func dottedBefore(toks []scanned, i int) string {
	var parts []string
	k := i - 1
	for k >= 0 && toks[k].tok == token.IDENT {
		parts = append([]string{toks[k].lit}, parts...)
		if k == 0 || toks[k-1].tok != token.PERIOD {
			break
		}
		k -= 2
	}
	return strings.Join(parts, ".")
}
