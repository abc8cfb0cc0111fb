package lang

import (
	"strings"
	"testing"
)

func TestZZRepro(t *testing.T) {
	s := newSession(t)
	for _, cell := range []string{
		"import \"fmt\"\nfunc f() int { return undefinedThing }",
		"f()",
		"fmt.Println(f())",
		"func g() {\n\tvar a []int\n\tfmt.Println(a, zzz)\n}",
		"g()",
		"xs := []int{1,2,3}\nk := 5\n_ = k\n\nxs[k] = 1",
		"a := 1\nb := 0\n\n\n\nfmt.Println(a / b)",
		"var m map[string]int\nm[\"a\"] = 1",
		"func h(i int) int {\n\tpanic(\"boom\")\n}\n",
		"fmt.Println(1)\nfmt.Println(2)\nh(1)",
		"xs[k]",
		"%timeit zz := 3",
		"zz",
		"type T struct{A int}",
		"type T struct{B int}\nfmt.Printf(\"%T %v\\n\", T{}, T{})\nT{}",
		"package main\nimport \"fmt\"\nvar v = 3\nfunc main() { fmt.Println(\"MAIN\", v) }",
		"1+1",
		"main()",
		"math.Sqrt(2)",
	} {
		rec, res := run(t, s, cell)
		e := ""
		if res.Err != nil {
			e = res.Err.Name + ": " + res.Err.Value + "\n" + strings.Join(res.Err.Traceback, "\n")
		}
		t.Logf("CELL %q\n  out=%q err=%q res=%q\n  %s", cell, rec.stdout.String(), rec.stderr.String(), plain(res), e)
	}
}
