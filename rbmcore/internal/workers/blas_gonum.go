//go:build !openblas

package workers

// blasThreads reports 0: gonum's pure-Go BLAS has no thread setting (its
// goroutines share the cores through the Go scheduler).
func blasThreads() int { return 0 }

// setBLASThreads does nothing for gonum's pure-Go BLAS.
func setBLASThreads(int) {}
