package main

import (
	"fmt"
	"iter"
)

func count(name string, n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				fmt.Println(name, "stopped at", i)
				return
			}
		}
	}
}

func find() int {
	for i := range count("outer", 5) {
		for j := range count("inner", 5) {
			if i*j == 2 {
				return i*10 + j
			}
		}
	}
	return -1
}

func main() {
	fmt.Println(find())
}
