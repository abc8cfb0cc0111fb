package rbm

// BLASBackend names the BLAS implementation compiled in: "openblas" (the
// openblas build tag: every gonum blas64 and blas32 call of the process,
// rbmcore's and gonum/mat's, goes to OpenBLAS through cgo) or "gonum" (pure
// Go). It is a function rather than a constant so that interpreted code
// (Harmonium's symbol tables) reports the backend of the running binary.
func BLASBackend() string { return blasBackend }

// BLASKernel names the CPU kernels the BLAS backend runs, as OpenBLAS reports
// them at run time (for example "Haswell", "Zen" or "SkylakeX"; the
// OPENBLAS_CORETYPE environment variable overrides its choice), and is ""
// for the pure-Go backend. Kernels for different instruction sets may round
// differently in the last bits of a sum, so results are reproducible bit for
// bit only on the same backend and kernels.
func BLASKernel() string { return blasKernel() }
