// Generic functions of package slices on the basic element types and on a
// cell's named float type.
package main

import (
	"fmt"
	"slices"
)

type celsius float64

func main() {
	strs := []string{"c", "a", "b"}
	slices.Sort(strs)
	fmt.Println("Strings:", strs)
	ints := []int{7, 2, 4}
	slices.Sort(ints)
	fmt.Println("Ints:   ", ints)
	fmt.Println("Sorted: ", slices.IsSorted(ints))
	fs := []float64{2.5, -1, 3}
	slices.Sort(fs)
	fmt.Println(fs, slices.Min(fs), slices.Max(fs))
	temps := []celsius{21.5, 19, 23}
	slices.Sort(temps)
	fmt.Println(temps, slices.Max(temps)+1)
	fmt.Println(slices.Contains(strs, "b"), slices.Index(ints, 4), slices.Index(ints, 5))
	i, found := slices.BinarySearch(ints, 4)
	fmt.Println(i, found)
	ints = slices.Insert(ints, 1, 9, 8)
	fmt.Println(ints)
	ints = slices.Delete(ints, 0, 2)
	fmt.Println(ints, len(ints))
	slices.Reverse(ints)
	fmt.Println(ints, slices.Equal(ints, []int{7, 4, 8}))
	fmt.Println(slices.Compact([]int{1, 1, 2, 2, 2, 3, 1}))
	bs := []byte("hello")
	slices.Sort(bs)
	fmt.Println(string(bs))
	rs := []rune("héllo")
	slices.Sort(rs)
	fmt.Println(string(rs), slices.Index(rs, 'l'))
	c := slices.Clone(strs)
	c[0] = "z"
	fmt.Println(strs, c, slices.Concat(strs, c))
}
