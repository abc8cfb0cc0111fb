//go:build openblas

package train

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/netlib/blas/netlib"
)

// With the openblas build tag the rbm package routes blas64 to OpenBLAS;
// the float32 products of Trainer.Float32 need blas32 routed too.
func init() { blas32.Use(netlib.Implementation{}) }
