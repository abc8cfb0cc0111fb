package mathx

import (
	"fmt"
	"math"
)

// Exp returns e^x, within about 1 ulp of the true value (the tests check
// ≤ 2 ulp against math.Exp over the whole normal range), without the
// branches and calls of math.Exp on the common path, so that the hot loops
// of the samplers and of the trainer (sigmoid of every hidden unit) stay
// cheap. Method (table-driven, Tang 1989): x = (256m + j)·ln2/256 + r
// with |r| ≤ ln2/512 (Cody–Waite reduction with ln2/256 split in two parts,
// the first with trailing zero bits so that k·ln2Hi is exact),
// e^x = 2^m · 2^(j/256) · e^r, e^r − 1 by its Taylor polynomial to r⁵
// (truncation error < r⁶/6! ≈ 9e-21; evaluated by Estrin's scheme, whose
// short dependency chains made the trainer's sigmoids about 30 % faster
// than the 64-entry table with a Horner polynomial to r⁶), the table
// 2^(j/256) correctly rounded at init from math.Exp2. Arguments whose
// result would be subnormal, overflow, or NaN go to math.Exp. (Exp stays
// finite up to the true overflow threshold 709.78; math.Exp on amd64
// returns +Inf from about 709.7.)
//
// Every product is rounded by an explicit float64 conversion before it is
// added: the Go specification lets a compiler fuse x*y + z into one FMA
// (it does on arm64, and on amd64 with GOAMD64=v3), and the conversion
// forbids it, so that Exp gives the same bits on every architecture and
// GOAMD64 level and the AVX2 assembly of SigmoidAdd, which performs the
// same operations in the same order, matches it bit for bit.
func Exp(x float64) float64 {
	if !(x > -708 && x < 709.78) {
		return math.Exp(x)
	}
	kd := float64(x*expInvLn2T) + expShift
	n := int32(uint32(math.Float64bits(kd)))
	kd -= expShift
	r := x - float64(kd*ln2HiT) - float64(kd*ln2LoT)
	// e^r − 1 to r⁵ (Estrin's scheme: short dependency chains).
	r2 := r * r
	q := r + float64(r2*(1.0/2+float64(r*(1.0/6)))) + float64(r2*r2*(1.0/24+float64(r*(1.0/120))))
	t := exp2Table[n&(expTable-1)]
	y := t + float64(t*q)
	return math.Float64frombits(math.Float64bits(y) + uint64(int64(n>>expBits))<<52)
}

// The table holds 2^(j/expTable), j < expTable = 2^expBits.
const (
	expBits  = 8
	expTable = 1 << expBits
)

// expInvLn2T is expTable/ln2; adding expShift = 1.5·2^52 to x·expInvLn2T
// rounds it to an integer k kept in the low mantissa bits.
const (
	expInvLn2T = expTable / math.Ln2
	expShift   = 0x1.8p52
)

// ln2/expTable in two parts: ln2HiT has its low 21 mantissa bits zero
// (fdlibm's ln2HI divided by a power of two), so kd·ln2HiT is exact for
// |kd| < 2^21 (here |kd| < 709.79·256/ln2 < 2^19).
const (
	ln2HiT = 6.93147180369123816490e-01 / expTable
	ln2LoT = 1.90821492927058770002e-10 / expTable
)

var exp2Table [expTable]float64

func init() {
	for j := range exp2Table {
		exp2Table[j] = math.Exp2(float64(j) / expTable)
	}
}

// SigmoidAdd sets out[i] = Sigmoid(x[i] + th[i]) for i < len(out), bit for
// bit (NaN, ±Inf and the tails included); x and th must be at least as long
// as out (it panics otherwise). out may be x or th itself but must not
// overlap them otherwise. On amd64 with AVX2 it does four elements at a time
// in assembly (about 4 times faster than the scalar loop); elsewhere it is
// the scalar loop.
func SigmoidAdd(out, x, th []float64) {
	if len(x) < len(out) || len(th) < len(out) {
		panic(fmt.Sprintf("mathx.SigmoidAdd: len(out) = %d but len(x) = %d, len(th) = %d", len(out), len(x), len(th)))
	}
	x, th = x[:len(out)], th[:len(out)]
	sigmoidAdd(out, x, th)
}

// sigmoidAddGo is the scalar loop of SigmoidAdd (x and th as long as out).
func sigmoidAddGo(out, x, th []float64) {
	for i, v := range x[:len(out)] {
		out[i] = Sigmoid(v + th[i])
	}
}
