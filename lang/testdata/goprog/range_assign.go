// Assigning a range variable in the loop body changes that iteration's copy
// only: the loop still visits every element, for slices, maps and integers,
// at the top level of a cell and inside functions. A three-clause loop's
// variable, by contrast, is the loop's own.
package main

import "fmt"

func inFunc() {
	for i := range 3 {
		i += 10
		fmt.Print(i, " ")
	}
	fmt.Println()
}

func main() {
	betas := []float64{1, 2, 3, 4}
	for b, beta := range betas[1:] {
		b++
		fmt.Println(b, beta)
	}
	m := map[string]int{"a": 1}
	for k, v := range m {
		k += "!"
		v *= 2
		fmt.Println(k, v)
	}
	inFunc()
	for i := 0; i < 6; i++ {
		i++
		fmt.Print(i, " ")
	}
	fmt.Println()
}
