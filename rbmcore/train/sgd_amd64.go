//go:build amd64 && !purego

package train

import (
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// useAVX2 selects the AVX2 assembly of sgdShadow (mathx.AVX2: CPUID and
// XGETBV); the tests clear it to run the reference loop.
var useAVX2 = mathx.AVX2

// sgdShadowArch runs the assembly when the CPU has AVX2, else the
// reference loop.
func sgdShadowArch(w, d []float64, w32 []float32, absRow []float64, rows, n int, lr, l2, l1, lim float64) (int, float64) {
	if useAVX2 {
		return sgdShadowAVX2(w, d, w32, absRow, rows, n, lr, l2, l1, lim, l2 > 0 || l1 > 0)
	}
	return sgdShadowGo(w, d, w32, absRow, rows, n, lr, l2, l1, lim)
}

// shadowRowsArch runs the assembly when the CPU has AVX2, else the
// reference loop.
func shadowRowsArch(w []float64, w32 []float32, absRow []float64, rows, n int) {
	if useAVX2 {
		shadowAVX2(w, w32, absRow, rows, n)
		return
	}
	shadowRowsGo(w, w32, absRow, rows, n)
}

// shadowAVX2 is shadowRowsGo in AVX2 assembly (sgd_amd64.s). The slices
// must have been checked by shadowRows.
//
//go:noescape
func shadowAVX2(w []float64, w32 []float32, absRow []float64, rows, n int)

// sgdShadowAVX2 is sgdShadowGo in AVX2 assembly (sgd_amd64.s), four
// weights at a time, the last partial group of a row under a mask; pen
// says whether the penalties apply (l2 > 0 || l1 > 0), w32 of length 0
// that there is no shadow. The slices must have been checked by sgdShadow.
//
//go:noescape
func sgdShadowAVX2(w, d []float64, w32 []float32, absRow []float64, rows, n int, lr, l2, l1, lim float64, pen bool) (first int, s float64)

// sgdConsts holds the constants read by sgdShadowAVX2, each in the 4
// lanes of a YMM register, in the order of the offsets defined in
// sgd_amd64.s: the mask that clears the sign bit, 1, −1.
//
//lint:ignore U1000 read by the kernels in sgd_amd64.s, which staticcheck does not see.
var sgdConsts = func() (c [3][4]uint64) {
	for i, v := range [...]uint64{1<<63 - 1, math.Float64bits(1), math.Float64bits(-1)} {
		c[i] = [4]uint64{v, v, v, v}
	}
	return c
}()

// sgdTail64 and sgdTail32 are the masks of the last, partial group of a
// row of n weights, indexed by n mod 4: its first n mod 4 lanes, as
// float64 lanes (VMASKMOVPD) and as float32 lanes (VMASKMOVPS).
var (
	//lint:ignore U1000 read by the kernels in sgd_amd64.s.
	sgdTail64 = [4][4]uint64{{}, {^uint64(0)}, {^uint64(0), ^uint64(0)}, {^uint64(0), ^uint64(0), ^uint64(0)}}
	//lint:ignore U1000 read by the kernels in sgd_amd64.s.
	sgdTail32 = [4][4]uint32{{}, {^uint32(0)}, {^uint32(0), ^uint32(0)}, {^uint32(0), ^uint32(0), ^uint32(0)}}
)
