//go:build openblas

package rbm

/*
#cgo LDFLAGS: -lopenblas
char *openblas_get_corename(void);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// With the openblas build tag every gonum BLAS call of the process (rbmcore
// and gonum/mat alike, float64 and float32) goes to OpenBLAS through cgo.
func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}

// blasBackend is the BLAS implementation compiled in (see BLASBackend).
const blasBackend = "openblas"

// blasKernel is the name of the kernels OpenBLAS chose for this CPU (see
// BLASKernel).
func blasKernel() string { return C.GoString(C.openblas_get_corename()) }
