package mathx

import "math"

//go:generate python3 erfcx_gen.py

// erfcxTableMax is the end of the range of erfcxTable (Erfcx's asymptotic
// series takes over there).
const erfcxTableMax = 26.0

// erfcxTable returns erfcx(t) for 0 ≤ t < erfcxTableMax from the piecewise
// polynomials of erfcx_table.go (fitted by erfcx_gen.py): with K = 2 and
// y = (t − K)/(t + K) ∈ [−1, 6/7), (t + K)·erfcx(t) is a polynomial of
// degree 8 in the coordinate z ∈ [−1, 1] of each of 16 equal pieces of
// [−1, 1). One division and nine terms (Estrin's scheme), where Erfcx
// spends an exponential, math.Erfc's two more and a rational function.
func erfcxTable(t float64) float64 {
	r := 1 / (t + 2)
	s := ((t-2)*r + 1) * 8 // (y + 1)·8 ∈ [0, 16)
	i := int(s)
	z := 2*(s-float64(i)) - 1
	c := &erfcxPoly[i]
	z2 := z * z
	z4 := z2 * z2
	p := (c[0] + c[1]*z) + z2*(c[2]+c[3]*z) + z4*((c[4]+c[5]*z)+z2*(c[6]+c[7]*z)+z4*c[8])
	return p * r
}

// erfcxFast returns Erfcx(x) to a few ulp (TestErfcxFast) at a fraction of
// its cost: erfcxTable on [0, 26), the reflection erfcx(x) =
// 2e^{x²} − erfcx(−x) below 0 (with the table for −x, and the exponential
// of x² with the rounding of x² compensated), and Erfcx itself elsewhere
// (the asymptotic series, overflow, NaN). It is the error function of the
// dReLU kernels (TruncRatio, PhiRatio); Erfcx keeps its own formula, on
// which the results recorded for the other units depend bit for bit.
func erfcxFast(x float64) float64 {
	switch {
	case x >= 0 && x < erfcxTableMax:
		return erfcxTable(x)
	case x < 0 && x > -erfcxTableMax:
		hi := x * x
		lo := math.FMA(x, x, -hi)
		e := Exp(hi) * (1 + lo)
		return 2*e - erfcxTable(-x)
	}
	return Erfcx(x)
}
