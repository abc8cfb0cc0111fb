//go:build race

package lang

// markFormat is the statement that records a fault site. Under the race
// detector it is a call of Session.mark, an atomic store, because the
// goroutines of a cell run marked code at the same time.
const markFormat = "__hm.Mark(%d); "

// raceDetector reports whether this is a race-detector build.
const raceDetector = true
