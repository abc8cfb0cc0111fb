package rbm

import (
	"math"
	"math/rand/v2"
)

// Exact Bernoulli(σ(t)) decisions with few exponentials and 32 random bits
// per unit. σ is increasing, so for t in [t_k, t_{k+1}] of a fixed grid,
// σ(t_k) ≤ σ(t) ≤ σ(t_{k+1}). The uniform is u = (k + r)·2⁻³², with k 32
// random bits (half of a 64-bit word, see fillBits) and r a uniform in
// [0, 1) drawn only when needed: if (k+1)·2⁻³² is at most the
// (rounded-down) left value σ(t_k), u < σ(t) whatever r, a success; if
// k·2⁻³² is at least the (rounded-up) right value, a failure. Only when u's
// 2⁻³²-cell straddles [σ(t_k), σ(t_{k+1})] (probability ≤ max σ'·step +
// 2⁻³¹ ≈ 1/64) is r drawn and e^{-t} evaluated. The decision is thus the
// one of u < σ(t) for a uniform u of the same 53-bit resolution as
// rand.Float64: an exact draw, with two units per 64-bit random word in the
// common case. Beyond the grid the end values bound σ(t) on the same side
// (σ(±32) is within 1.3e-14 of 1 or 0), so large inputs rarely need the
// exponential either.
const (
	sigGridLo   = -32.0
	sigGridStep = 1.0 / 16
	sigGridN    = 1024 // grid points t_k = sigGridLo + k*sigGridStep, k ≤ sigGridN
)

// sigLoBits[k] = ⌊σ(t_k)⁻·2³²⌋ and sigHiBits[k] = ⌈σ(t_k)⁺·2³²⌉, with σ(t_k)
// rounded down (⁻) and up (⁺) by one ulp.
var sigLoBits, sigHiBits [sigGridN + 1]uint64

func init() {
	for k := range sigLoBits {
		s := 1 / (1 + math.Exp(-(sigGridLo + float64(k)*sigGridStep)))
		sigLoBits[k] = uint64(math.Floor(math.Nextafter(s, 0) * 0x1p32))
		sigHiBits[k] = uint64(math.Ceil(math.Nextafter(s, 2) * 0x1p32))
	}
}

// bernoulliSigmoid returns 1 with probability σ(t), else 0, given 32
// random bits k (k < 2³²); rng supplies the further bits in the rare
// undecided case.
func bernoulliSigmoid(rng *rand.Rand, k uint64, t float64) float64 {
	f := (t - sigGridLo) * (1 / sigGridStep)
	if f >= 0 && f < sigGridN {
		j := int(f)
		if k < sigLoBits[j] {
			return 1
		}
		if k >= sigHiBits[j+1] {
			return 0
		}
	} else if f < 0 {
		if k >= sigHiBits[0] {
			return 0
		}
	} else if f >= sigGridN && k < sigLoBits[sigGridN] {
		return 1
	}
	return bernoulliSigmoidSlow(rng, k, t)
}

// bernoulliSigmoidSlow decides u < σ(t) for u = (k + r)·2⁻³², r uniform.
func bernoulliSigmoidSlow(rng *rand.Rand, k uint64, t float64) float64 {
	return bernoulliUniform((float64(k)+rng.Float64())*0x1p-32, t)
}

// bernoulliUniform returns 1 if u < σ(t), else 0, for u in [0, 1).
func bernoulliUniform(u, t float64) float64 {
	// u < 1/(1+e^{-t})  ⇔  u(1+e^{-t}) < 1; +Inf for t → -∞ gives 0, NaN 0.
	if u*(1+math.Exp(-t)) < 1 {
		return 1
	}
	return 0
}

// sampleSigmoid sets out[k] = lo + (hi-lo)·Bernoulli(σ(scale·(in[k] +
// theta[k mod n]))) for the rows of in (n = len(theta)), using 32 random
// bits per unit: one 64-bit word per two units of a row (high half first).
// Each row is done in chunks of up to sampleChunk units in simple passes,
// each with few live values so that the compiler keeps them in registers:
// the random words into a local buffer (fillBits: one draw from rng seeds
// the chunk's words), the arguments t into out, the table decisions
// (recording the few undecided units), and the undecided units, which draw
// their further bits from rng. Only the first and last passes make calls
// (every call spills the loop's registers).
func sampleSigmoid(rng *rand.Rand, theta, in, out []float64, scale, lo, hi float64) {
	n := len(theta)
	var buf [sampleChunk]uint32
	var pend [sampleChunk]int32 // chunk indices of the undecided units
	for r0 := 0; r0+n <= len(in) && n > 0; r0 += n {
		row, orow := in[r0:r0+n], out[r0:r0+n]
		for c0 := 0; c0 < n; c0 += sampleChunk {
			c1 := min(c0+sampleChunk, n)
			x, o, th := row[c0:c1], orow[c0:c1], theta[c0:c1]
			fillBits(buf[:len(x)], rng.Uint64())
			for k, xk := range x {
				o[k] = scale * (xk + th[k])
			}
			np := decideSigmoid(o, &buf, &pend, lo, hi)
			for _, k := range pend[:np] {
				b := uint64(buf[k])
				if bernoulliSigmoid(rng, b, scale*(x[k]+th[k])) != 0 {
					o[k] = hi
				} else {
					o[k] = lo
				}
			}
		}
	}
}

// sampleChunk is the number of units sampleSigmoid decides per pass.
const sampleChunk = 256

// decideSigmoid replaces each t = o[k] by hi or lo when the grid decides
// Bernoulli(σ(t)) from the 32 random bits buf[k], and lists the other indices in pend (their o
// entries are then lo, to be decided by the caller). It returns their count.
// The decision, a coin flip for the branch predictor, is made without a
// branch (integer compare to a 0/1 mask selecting the bits of lo or hi);
// the branches left are taken rarely.
func decideSigmoid(o []float64, buf *[sampleChunk]uint32, pend *[sampleChunk]int32, lo, hi float64) int {
	np := 0
	loBits := math.Float64bits(lo)
	flip := loBits ^ math.Float64bits(hi)
	for k, t := range o[:min(len(o), sampleChunk)] {
		b := uint64(buf[k&(sampleChunk-1)])
		f := (t - sigGridLo) * (1 / sigGridStep)
		if !(f >= 0 && f < sigGridN) {
			o[k] = lo
			pend[np&(sampleChunk-1)] = int32(k)
			np++
			continue
		}
		j := int(f) & (sigGridN - 1) // j < sigGridN: no bounds checks
		lb := sigLoBits[j]
		var d uint64
		if b < lb {
			d = 1
		}
		o[k] = math.Float64frombits(loBits ^ (-d & flip))
		if b-lb < sigHiBits[j+1]-lb { // lb ≤ b < hb: undecided
			pend[np&(sampleChunk-1)] = int32(k)
			np++
		}
	}
	return np
}

// fillBits fills buf with the 32-bit halves (high half first) of the
// SplitMix64 sequence (Steele, Lea & Flood 2014; the generator that seeds
// xoshiro) started from seed: a few
// inlined integer operations per 64-bit word instead of a call through the
// rand.Source interface. SplitMix64 passes BigCrush; each chunk starts from
// a fresh 64-bit draw of the caller's stream, so runs stay reproducible from
// the seed, and chunks of at most 128 words from independent random
// starting points of a 2⁶⁴-periodic sequence overlap with negligible
// probability (< 2⁻³⁰ for 10¹² chunks).
func fillBits(buf []uint32, seed uint64) {
	for i := 0; i < len(buf); i += 2 {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		buf[i] = uint32(z >> 32)
		if i+1 < len(buf) {
			buf[i+1] = uint32(z)
		}
	}
}
