//go:build race

package lattice

// cancelSlack is how much the race detector's slowdown (5–10×) may add to
// the one second a cancelled call has to return, in milliseconds.
const cancelSlack = 4000
