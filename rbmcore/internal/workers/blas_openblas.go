//go:build openblas

package workers

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
*/
import "C"

// blasThreads returns the number of threads OpenBLAS uses for a call.
func blasThreads() int { return int(C.openblas_get_num_threads()) }

// setBLASThreads sets the number of threads OpenBLAS uses for a call.
func setBLASThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
