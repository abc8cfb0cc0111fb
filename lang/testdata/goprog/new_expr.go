// new with an expression (Go 1.26): a pointer to a new variable holding the
// value.
package main

import "fmt"

type point struct{ x, y int }

func main() {
	p := new(42)
	fmt.Println(*p)
	*p++
	fmt.Println(*p)
	q := new(int)
	fmt.Println(*q)
	x := 2.5
	r := new(x * 2)
	fmt.Println(*r)
	s := new("hi" + "!")
	fmt.Println(*s)
	pt := new(point{1, 2})
	pt.x = 5
	fmt.Println(*pt)
	var z = new(point)
	fmt.Println(*z)
}
