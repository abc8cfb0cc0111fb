// Sorting by functions: slices.SortFunc with a closure on a slice of a
// struct type declared in the cell, ties included, and cmp.Compare.
package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

type person struct {
	name string
	age  int
}

func main() {
	fruits := []string{"peach", "banana", "kiwi"}
	lenCmp := func(a, b string) int {
		return cmp.Compare(len(a), len(b))
	}
	slices.SortFunc(fruits, lenCmp)
	fmt.Println(fruits)

	people := []person{
		{name: "Jax", age: 37},
		{name: "TJ", age: 25},
		{name: "Alex", age: 72},
		{name: "Bo", age: 25},
		{name: "Cy", age: 37},
		{name: "Di", age: 25},
	}
	slices.SortFunc(people, func(a, b person) int {
		return cmp.Compare(a.age, b.age)
	})
	fmt.Println(people)
	slices.SortStableFunc(people, func(a, b person) int {
		return strings.Compare(a.name[:1], b.name[:1]) * 0
	})
	fmt.Println(people)
	oldest := slices.MaxFunc(people, func(a, b person) int { return a.age - b.age })
	fmt.Println(oldest.name, slices.IndexFunc(people, func(p person) bool { return p.name == "Bo" }))
	fmt.Println(cmp.Compare(2, 1), cmp.Compare("a", "b"), cmp.Compare(1.5, float64(len(fruits))), cmp.Less(2.5, -1.5))
	fmt.Println(slices.IsSortedFunc(people, func(a, b person) int { return cmp.Compare(a.age, b.age) }))
}
