// Closures handed to compiled code (sync.WaitGroup.Go, sort.Slice) see the
// loop variable of their own iteration.
package main

import (
	"fmt"
	"sort"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var got []int
	for i := 1; i <= 5; i++ {
		wg.Go(func() {
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Ints(got)
	fmt.Println(got)

	got = nil
	for _, w := range []int{10, 20, 30} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			got = append(got, w)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Ints(got)
	fmt.Println(got)

	got = nil
	for i := range 3 {
		sq := i * i
		wg.Go(func() {
			mu.Lock()
			got = append(got, sq+i)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Ints(got)
	fmt.Println(got)
}
