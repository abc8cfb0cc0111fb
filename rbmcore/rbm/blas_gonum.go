//go:build !openblas

package rbm

// blasBackend is the BLAS implementation compiled in (see BLASBackend):
// pure-Go gonum, the default without the openblas build tag.
const blasBackend = "gonum"

// blasKernel is "" for the pure-Go backend (see BLASKernel).
func blasKernel() string { return "" }
