//go:build !race

package lang

// markFormat is the statement that records a fault site: an interpreted
// assignment of the word-sized global. Goroutines of a cell that run marked
// code at the same time store to it without synchronisation, so a runtime
// error in one may be placed at a statement another goroutine entered
// (its message is unaffected); the alternative, a call of the atomic
// Session.mark for every marked statement, slows a loop that calls a
// function by about two thirds. Race-detector builds use the call
// (mark_race.go).
const markFormat = "__hmSite = %d; "

// raceDetector reports whether this is a race-detector build.
const raceDetector = false
