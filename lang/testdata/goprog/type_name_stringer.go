// %T of a value of a cell's type with a String method.
package main

import "fmt"

type celsius struct {
	deg  float64
	unit string
}

func (c celsius) String() string { return fmt.Sprintf("%.1f°%s", c.deg, c.unit) }

func main() {
	fmt.Printf("%v %T %+v\n", celsius{21.5, "C"}, celsius{21.5, "C"}, celsius{3, "F"})
}
