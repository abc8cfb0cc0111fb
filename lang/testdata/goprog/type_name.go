// %T, %+v and %#v of values of types declared in the cell.
package main

import (
	"errors"
	"fmt"
)

type point struct{ x, y int }

type shape interface{ area() float64 }

type rect struct{ w, h float64 }

func (r rect) area() float64 { return r.w * r.h }

type named struct {
	Name string
	at   point
	tags []string
}

func main() {
	p := point{1, 2}
	fmt.Printf("%v %T\n", p, p)
	fmt.Printf("%T %T %T\n", &p, []point{p}, map[string]point{})
	fmt.Printf("%+v %#v %+v\n", p, p, &p)
	var s shape = rect{2, 3}
	fmt.Printf("%T %v\n", s, s.area())
	fmt.Println(fmt.Sprintf("%T", p) == "main.point")
	fmt.Printf("%T %T %T %d%%\n", 1, "a", []int{}, 5)
	n := named{"n", point{3, 4}, []string{"a"}}
	fmt.Printf("%+v\n%#v\n", n, n)
	err := fmt.Errorf("bad %T", p)
	fmt.Println(err, errors.Unwrap(err) == nil)
	fmt.Printf("%8T|%-12T|\n", 1, p)
}
