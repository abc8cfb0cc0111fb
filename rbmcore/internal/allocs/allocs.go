// Package allocs measures how much a call allocates, so that tests can
// assert that a loader given a tiny hostile file refuses it without first
// allocating what its header declares.
package allocs

import "runtime"

// Bytes returns the bytes allocated on the heap while f ran (by any
// goroutine: run it where nothing else allocates much).
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
