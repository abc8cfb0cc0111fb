//go:build !openblas

package rbm

// Backend names the BLAS implementation compiled in: "openblas" or "gonum"
// (pure Go, the default without the openblas build tag).
const Backend = "gonum"
