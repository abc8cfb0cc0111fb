package rbm

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestBLASBackendRouting checks that BLASBackend names the implementation
// that blas64 and blas32 (float32 products of train) actually use.
func TestBLASBackendRouting(t *testing.T) {
	want := map[string]string{"gonum": "gonum.Implementation", "openblas": "netlib.Implementation"}[BLASBackend()]
	if want == "" {
		t.Fatalf("BLASBackend() = %q, want gonum or openblas", BLASBackend())
	}
	for name, impl := range map[string]any{"blas64": blas64.Implementation(), "blas32": blas32.Implementation()} {
		if got := fmt.Sprintf("%T", impl); got != want {
			t.Errorf("%s uses %s, BLASBackend() = %q wants %s", name, got, BLASBackend(), want)
		}
	}
}

// TestBLASKernel checks that the kernel name is empty exactly for the pure-Go
// backend, and that OpenBLAS reports the kernels it was told to use.
func TestBLASKernel(t *testing.T) {
	k := BLASKernel()
	if (k == "") != (BLASBackend() == "gonum") {
		t.Fatalf("BLASKernel() = %q with the %s backend", k, BLASBackend())
	}
	if want := os.Getenv("OPENBLAS_CORETYPE"); want != "" && BLASBackend() == "openblas" && !strings.EqualFold(k, want) {
		t.Errorf("BLASKernel() = %q, OPENBLAS_CORETYPE = %q", k, want)
	}
}
