//go:build !race

package lattice

// cancelSlack is the extra time, in milliseconds, a cancelled call may take
// beyond one second (none without the race detector; see race_test.go).
const cancelSlack = 0
