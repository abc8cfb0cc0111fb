//go:build openblas

package rbm

/*
#cgo LDFLAGS: -lopenblas
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
