// %T and %v of values of types declared in the cell.
package main

import "fmt"

type point struct{ x, y int }

type shape interface{ area() float64 }

type rect struct{ w, h float64 }

func (r rect) area() float64 { return r.w * r.h }

func main() {
	p := point{1, 2}
	fmt.Printf("%v %T\n", p, p)
	fmt.Printf("%T %T\n", &p, []point{p})
	var s shape = rect{2, 3}
	fmt.Printf("%T %v\n", s, s.area())
	fmt.Println(fmt.Sprintf("%T", p) == "main.point")
	fmt.Printf("%T %T %T\n", 1, "a", []int{})
}
