package lang

import (
	"go/scanner"
	"go/token"
	"reflect"
	"sort"
	"strings"
)

var goKeywords = []string{"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
	"for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select",
	"struct", "switch", "type", "var"}

var goBuiltins = []string{"append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
	"max", "min", "new", "panic", "print", "println", "real", "recover", "any", "bool", "byte", "comparable",
	"complex128", "complex64", "error", "false", "float32", "float64", "int", "int16", "int32", "int64", "int8",
	"iota", "nil", "rune", "string", "true", "uint", "uint16", "uint32", "uint64", "uint8", "uintptr"}

// Completion is a completion reply: matches replace code[Start:End] (byte
// offsets); Types gives each match's kind (function, variable, type, module,
// keyword, field, method).
type Completion struct {
	Matches    []string
	Start, End int
	Types      []string
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// Complete completes the identifier before cursor (a byte offset in code):
// names in scope, members of packages (fmt., mat., rbm.) and fields and
// methods of variables, including methods of types declared in cells. The
// imports and declarations of code itself count before code has run
// (`import "math"` in the cell: math.Sqr completes to math.Sqrt).
func (s *Session) Complete(code string, cursor int) Completion {
	s.mu.Lock()
	defer s.mu.Unlock()
	cursor = max(0, min(cursor, len(code)))
	start := cursor
	for start > 0 && isIdentByte(code[start-1]) {
		start--
	}
	end := cursor
	for end < len(code) && isIdentByte(code[end]) {
		end++
	}
	prefix := code[start:cursor]
	cands := map[string]string{}
	imports, declared := s.codeScope(code)
	for n, p := range s.imports {
		if _, own := imports[n]; !own { // the code's own import wins: it is what will run
			imports[n] = p
		}
	}
	if start > 0 && code[start-1] == '.' {
		b := start - 1
		for b > 0 && (isIdentByte(code[b-1]) || code[b-1] == '.') {
			b--
		}
		s.members(code[b:start-1], imports, cands)
	} else {
		for n, kind := range declared {
			cands[n] = kind
		}
		for _, n := range s.userNames() {
			cands[n] = "variable"
			if k := s.decls[n]; k == "func" {
				cands[n] = "function"
			} else if k == "type" || s.types[n] != nil {
				cands[n] = "type"
			}
		}
		for n := range imports {
			cands[n] = "module"
		}
		cands["ctx"] = "variable"
		for _, k := range goKeywords {
			cands[k] = "keyword"
		}
		for _, b := range goBuiltins {
			cands[b] = "function"
		}
	}
	c := Completion{Start: start, End: end}
	for n := range cands {
		if strings.HasPrefix(n, prefix) && !strings.HasPrefix(n, "__hm") {
			c.Matches = append(c.Matches, n)
		}
	}
	sort.Strings(c.Matches)
	for _, m := range c.Matches {
		c.Types = append(c.Types, cands[m])
	}
	return c
}

// members adds the members of base (a package name in imports or a
// variable expression).
func (s *Session) members(base string, imports map[string]string, cands map[string]string) {
	if p, ok := imports[base]; ok {
		for name, v := range s.exports[p] {
			kind := "variable"
			switch {
			case v.Kind() == reflect.Func:
				kind = "function"
			case v.Kind() == reflect.Pointer && v.IsNil() && v.Type().Elem().Kind() != reflect.Pointer:
				kind = "type"
			}
			cands[name] = kind
		}
		return
	}
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".") || base == "" {
		return
	}
	v, ok := s.probe(base)
	if !ok || !v.IsValid() {
		return
	}
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	t := v.Type()
	addMethods := func(t reflect.Type) {
		for i := 0; i < t.NumMethod(); i++ {
			cands[t.Method(i).Name] = "method"
		}
	}
	addMethods(t)
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	} else {
		addMethods(reflect.PointerTo(t))
	}
	if st.Kind() == reflect.Struct {
		for i := 0; i < st.NumField(); i++ {
			if f := st.Field(i); f.IsExported() || f.Anonymous {
				cands[f.Name] = "field"
			}
		}
	}
	// Methods of types declared in cells are invisible to reflect.
	if name := s.cellTypeOf(v); name != "" {
		for m := range s.types[name].methods {
			cands[m] = "method"
		}
	}
}

// cellTypeOf returns the (user-visible) name of the cell-declared type of v
// (or of what v points to), comparing reflect types with each type's zero
// value.
func (s *Session) cellTypeOf(v reflect.Value) string {
	t := v.Type()
	for _, name := range sortedKeys(s.types) {
		rec := s.types[name]
		z, ok := s.probe("*new(" + rec.internal + ")")
		if !ok || !z.IsValid() {
			continue
		}
		if zt := z.Type(); zt == t || reflect.PointerTo(zt) == t {
			return name
		}
	}
	return ""
}

// IsComplete tells a front end whether code is ready to run: "complete",
// "incomplete" (unclosed braces, parentheses, brackets or composite literals,
// or a trailing operator; indent is the indentation to continue with) or
// "invalid".
func IsComplete(code string) (status, indent string) {
	trimmed := strings.TrimSpace(code)
	if trimmed == "" || strings.HasPrefix(trimmed, "%") || strings.HasPrefix(trimmed, "!") {
		return "complete", ""
	}
	if _, _, help := helpQuery(code); help {
		return "complete", ""
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var s scanner.Scanner
	unterminated, invalid := false, false
	s.Init(file, []byte(code), func(_ token.Position, msg string) {
		if strings.Contains(msg, "not terminated") {
			unterminated = true
		} else {
			invalid = true
		}
	}, scanner.ScanComments)
	depth := 0
	last := token.ILLEGAL
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
			if depth < 0 {
				return "invalid", ""
			}
		case token.COMMENT:
			continue
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		last = tok
	}
	switch {
	case unterminated:
		return "incomplete", ""
	case invalid:
		return "invalid", ""
	case depth > 0:
		return "incomplete", strings.Repeat("    ", depth)
	case last.IsOperator() && last != token.RPAREN && last != token.RBRACK && last != token.RBRACE &&
		last != token.INC && last != token.DEC && last != token.SEMICOLON:
		return "incomplete", "    "
	}
	return "complete", ""
}
