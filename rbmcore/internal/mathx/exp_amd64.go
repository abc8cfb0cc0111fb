//go:build amd64 && !purego

package mathx

import "math"

// useAVX2 selects the AVX2 assembly in SigmoidAdd. It is set once from
// AVX2; the tests clear it to run the scalar loop.
var useAVX2 = AVX2

// sigmoidAddAVX2 sets out[i] = Sigmoid(x[i] + th[i]) four elements at a
// time from i = 0 (exp_amd64.s), the same operations in the same order as
// Exp and Sigmoid, and stops before the first group of four in which an
// argument of Exp is outside Exp's table range (−708, 709.78), NaN
// included, or when fewer than four elements remain. It returns the number
// of elements done, a multiple of 4. x and th must be as long as out.
//
//go:noescape
func sigmoidAddAVX2(out, x, th []float64) int

// avx2Consts holds the constants of Exp and Sigmoid read by
// sigmoidAddAVX2, each repeated in the 4 lanes of a YMM register, in the
// order of the offsets defined in exp_amd64.s. They are computed here from
// the Go constants of Exp so that both use the same float64 values.
//
//lint:ignore U1000 read by sigmoidAddAVX2 in exp_amd64.s, which staticcheck does not see.
var avx2Consts = func() (c [13][4]float64) {
	for i, v := range [...]float64{
		expInvLn2T, expShift, ln2HiT, ln2LoT, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1,
		-709.78, 708, // Exp(-a) is in range when -709.78 < a < 708
		math.Float64frombits(expTable - 1), // index mask
		math.Float64frombits(1 << 63),      // sign bit
	} {
		c[i] = [4]float64{v, v, v, v}
	}
	return c
}()

// sigmoidAdd runs the assembly over the groups of four it accepts and the
// scalar loop over the others and the tail.
func sigmoidAdd(out, x, th []float64) {
	if useAVX2 {
		for len(out) >= 4 {
			n := sigmoidAddAVX2(out, x, th)
			out, x, th = out[n:], x[n:], th[n:]
			if len(out) < 4 {
				break
			}
			sigmoidAddGo(out[:4], x, th)
			out, x, th = out[4:], x[4:], th[4:]
		}
	}
	sigmoidAddGo(out, x, th)
}
