// Package maps, its iterators collected with package slices.
package main

import (
	"fmt"
	"maps"
	"slices"
)

func main() {
	m := map[string]int{"k1": 7, "k2": 13, "k0": 1}
	keys := slices.Sorted(maps.Keys(m))
	fmt.Println(keys)
	vals := slices.Collect(maps.Values(m))
	slices.Sort(vals)
	fmt.Println(vals)
	n := maps.Clone(m)
	fmt.Println(maps.Equal(m, n))
	maps.DeleteFunc(n, func(k string, v int) bool { return v > 5 })
	fmt.Println(n, maps.Equal(m, n))
	sum := 0
	for k, v := range maps.All(m) {
		sum += v
		_ = k
	}
	fmt.Println(sum)
	for i, s := range slices.All([]string{"x", "y"}) {
		fmt.Println(i, s)
	}
	for v := range slices.Values([]int{3, 4}) {
		fmt.Println(v)
	}
}
