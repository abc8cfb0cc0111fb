package rbm

// BLASBackend names the BLAS implementation compiled in: "openblas" (the
// openblas build tag: every gonum blas64 and blas32 call of the process,
// rbmcore's and gonum/mat's, goes to OpenBLAS through cgo) or "gonum" (pure
// Go). It is a function rather than a constant so that interpreted code
// (Harmonium's symbol tables) reports the backend of the running binary.
func BLASBackend() string { return blasBackend }
