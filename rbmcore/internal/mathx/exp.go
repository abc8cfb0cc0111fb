package mathx

import "math"

// Exp returns e^x, within about 1 ulp of the true value (the tests check
// ≤ 2 ulp against math.Exp over the whole normal range), without the
// branches and calls of math.Exp on the common path, so that the hot loops
// of the samplers and of the trainer (sigmoid of every hidden unit) stay
// cheap. Method (table-driven, Tang 1989): x = (64m + j)·ln2/64 + r with
// |r| ≤ ln2/128 (Cody–Waite reduction with ln2/64 split in two parts, the
// first with trailing zero bits so that k·ln2Hi is exact),
// e^x = 2^m · 2^(j/64) · e^r, e^r - 1 by its Taylor polynomial to r⁶
// (truncation error < r⁷/7! ≈ 3e-21), the table 2^(j/64) correctly rounded
// at init from math.Exp2. Arguments whose result would be subnormal,
// overflow, or NaN go to math.Exp. (Exp stays finite up to the true
// overflow threshold 709.78; math.Exp on amd64 returns +Inf from about 709.7.)
func Exp(x float64) float64 {
	if !(x > -708 && x < 709.78) {
		return math.Exp(x)
	}
	const shift = 0x1.8p52 // adding it rounds to an integer kept in the low mantissa bits
	kd := x*(64/math.Ln2) + shift
	n := int32(uint32(math.Float64bits(kd)))
	kd -= shift
	r := x - kd*ln2Hi64 - kd*ln2Lo64
	q := r * (1 + r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	t := exp2Table[n&63]
	y := t + t*q
	return math.Float64frombits(math.Float64bits(y) + uint64(int64(n>>6))<<52)
}

// ln2/64 in two parts: ln2Hi64 has its low 21 mantissa bits zero (fdlibm's
// ln2HI/64), so kd·ln2Hi64 is exact for |kd| < 2^21 (here |kd| < 2^16).
const (
	ln2Hi64 = 6.93147180369123816490e-01 / 64
	ln2Lo64 = 1.90821492927058770002e-10 / 64
)

var exp2Table [64]float64

func init() {
	for j := range exp2Table {
		exp2Table[j] = math.Exp2(float64(j) / 64)
	}
}
