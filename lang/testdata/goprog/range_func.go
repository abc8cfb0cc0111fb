// Range over functions: iter.Seq and iter.Seq2, break, continue, labels,
// return from inside the loop, an infinite iterator and a function literal.
package main

import (
	"fmt"
	"iter"
)

func count(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				fmt.Println("count stopped at", i)
				return
			}
		}
	}
}

func genFib() iter.Seq[int] {
	return func(yield func(int) bool) {
		a, b := 1, 1
		for {
			if !yield(a) {
				return
			}
			a, b = b, a+b
		}
	}
}

func pairs(words []string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i, w := range words {
			if !yield(i, w) {
				return
			}
		}
	}
}

func firstOver(limit int) int {
	for n := range genFib() {
		if n > limit {
			return n
		}
	}
	return -1
}

func main() {
	for x := range count(10) {
		if x == 1 {
			continue
		}
		if x == 4 {
			break
		}
		fmt.Println(x)
	}
	for n := range genFib() {
		if n >= 10 {
			break
		}
		fmt.Println(n)
	}
	for i, w := range pairs([]string{"a", "b", "c"}) {
		fmt.Println(i, w)
	}
	fmt.Println(firstOver(100))
outer:
	for i := range count(3) {
		for j := range count(3) {
			if j > i {
				continue outer
			}
			fmt.Println(i, j)
		}
	}
	total := 0
	for v := range func(yield func(int) bool) {
		for _, v := range []int{5, 6} {
			if !yield(v) {
				return
			}
		}
	} {
		total += v
	}
	fmt.Println(total)
	next, stop := iter.Pull(count(5))
	a, ok := next()
	b, _ := next()
	stop()
	fmt.Println(a, b, ok)
}
