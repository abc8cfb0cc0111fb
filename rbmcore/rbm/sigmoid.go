package rbm

import (
	"math"
	"math/rand/v2"
)

// Exact Bernoulli(σ(t)) decisions with few exponentials and 32 random bits
// per unit. σ is increasing, so for t in [t_k, t_{k+1}] of a fixed grid,
// σ(t_k) ≤ σ(t) ≤ σ(t_{k+1}). The uniform is u = (k + r)·2⁻³², with k 32
// random bits (half of a 64-bit word, see fillBits) and r a uniform in
// [0, 1) from 53 further bits, looked at only when needed: if (k+1)·2⁻³² is
// at most the (rounded-down) left value σ(t_k), u < σ(t) whatever r, a
// success; if k·2⁻³² is at least the (rounded-up) right value, a failure.
// Only when u's 2⁻³²-cell straddles [σ(t_k), σ(t_{k+1})] (probability
// ≤ max σ'·step + 2⁻³¹ ≈ 1/64) are r and e^{-t} evaluated. The decision is
// thus the one of u < σ(t) for a uniform u of the same 53-bit resolution as
// rand.Float64: an exact draw, with two units per 64-bit random word in the
// common case. Beyond the grid the end values bound σ(t) on the same side
// (σ(±32) is within 1.3e-14 of 1 or 0), so large inputs rarely need the
// exponential either. The same argument decides for every t of an interval
// [t-δ, t+δ] at once (the grid cells of both ends), which certifies
// decisions made from inputs known only to ±δ (float32 products).
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

// bernoulliSigmoid returns 1 with probability σ(t), else 0: it decides
// u < σ(t) for the uniform u = (k + r)·2⁻³² built from 32 random bits k
// (k < 2³²) and r, the top 53 bits of x as a uniform in [0, 1), which
// matter (and cost an exponential) only when k's cell straddles the grid
// bounds.
func bernoulliSigmoid(k, x uint64, t float64) float64 {
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
	return bernoulliUniform(uniform(k, x), t)
}

// uniform returns u = (k + r)·2⁻³², r the top 53 bits of x over 2⁵³.
func uniform(k, x uint64) float64 {
	return (float64(k) + float64(x>>11)*0x1p-53) * 0x1p-32
}

// bernoulliUniform returns 1 if u < σ(t), else 0, for u in [0, 1).
func bernoulliUniform(u, t float64) float64 {
	// u < 1/(1+e^{-t})  ⇔  u(1+e^{-t}) < 1; +Inf for t → -∞ gives 0, NaN 0.
	if u*(1+math.Exp(-t)) < 1 {
		return 1
	}
	return 0
}

// sigmoidLayer is implemented by the two-state layers whose units are
// lo + (hi-lo)·Bernoulli(σ(scale·(I + θ))) at inverse temperature β:
// binary and spin. Chains certifies their samples from float32 products.
type sigmoidLayer interface {
	sigmoidForm(beta float64) (theta []float64, scale, lo, hi float64)
}

// certificate describes inputs computed from float32 products (Chains'
// default for binary and spin layers): the argument t = scale·(in + θ) of
// row r (of the call), unit u, is within half = norm[r]·slope[u] +
// offset[u] of the one the float64 products give (norm nil: all 1), and
// exact(r, u) recomputes that float64 input. sampleSigmoid decides on the
// whole interval and recomputes the rare inputs whose interval straddles
// the decision, so that every sample is the one the float64 inputs give
// (up to float64 rounding).
type certificate struct {
	norm          []float64
	slope, offset []float64
	exact         func(r, u int) float64
	recomputed    int // number of exact recomputations
}

// roundSlack is a relative and absolute slack covering the float64
// roundings of t = scale·(in + θ) and of its interval bounds.
const roundSlack = 0x1p-48

// noSlack is the half-width of exactly known arguments.
var noSlack [sampleChunk]float64

// sampleSigmoid sets out[k] = lo + (hi-lo)·Bernoulli(σ(scale·(in[k] +
// theta[k mod n]))) for the rows of in (n = len(theta)). Each row is done in
// chunks of up to sampleChunk units in simple passes, each with few live
// values so that the compiler keeps them in registers: the random words
// into a local buffer (fillBits, from one 64-bit draw of rng per chunk),
// the arguments t into out, the table decisions (recording the few
// undecided units), and the undecided units. Every random bit of a unit is
// a fixed function of the chunk's draw and the unit's position, so the
// decisions do not depend on which other units were undecided: with a
// certificate (cert not nil: inputs known to an interval) the samples are
// those of the exact inputs with the same seed.
func sampleSigmoid(rng *rand.Rand, theta, in, out []float64, scale, lo, hi float64, cert *certificate) {
	n := len(theta)
	var buf [sampleChunk]uint32
	var pend [sampleChunk]int32 // chunk indices of the undecided units
	var scaled [sampleChunk]float64
	for r, r0 := 0, 0; r0+n <= len(in) && n > 0; r, r0 = r+1, r0+n {
		row, orow := in[r0:r0+n], out[r0:r0+n]
		for c0 := 0; c0 < n; c0 += sampleChunk {
			c1 := min(c0+sampleChunk, n)
			x, o, th := row[c0:c1], orow[c0:c1], theta[c0:c1]
			seed := rng.Uint64()
			fillBits(buf[:len(x)], seed)
			for k, xk := range x {
				o[k] = scale * (xk + th[k])
			}
			half := noSlack[:len(x)]
			if cert != nil {
				half = cert.offset[c0:c1]
				if cert.norm != nil {
					nr, sl, off := cert.norm[r], cert.slope[c0:c1], cert.offset[c0:c1]
					for k := range x {
						scaled[k] = nr*sl[k] + off[k]
					}
					half = scaled[:len(x)]
				}
			}
			np := decideSigmoid(o, half, &buf, &pend, lo, hi)
			for _, k32 := range pend[:np] {
				k := int(k32)
				b, extra := uint64(buf[k]), splitmix(seed+uint64(sampleChunk/2+1+k)*golden)
				t := scale * (x[k] + th[k])
				var d float64
				if cert == nil {
					d = bernoulliSigmoid(b, extra, t)
				} else {
					u := uniform(b, extra)
					switch {
					case bernoulliUniform(u, t-half[k]) == 1:
						d = 1
					case bernoulliUniform(u, t+half[k]) == 0:
						d = 0
					default:
						cert.recomputed++
						d = bernoulliUniform(u, scale*(cert.exact(r, c0+k)+th[k]))
					}
				}
				o[k] = lo + d*(hi-lo)
			}
		}
	}
}

// sampleChunk is the number of units sampleSigmoid decides per pass.
const sampleChunk = 256

// decideSigmoid replaces each t = o[k], known to within ±half[k], by hi or
// lo when the grid decides Bernoulli(σ(t)) from the 32 random bits buf[k]
// for the whole interval, and lists the other indices in pend (their o
// entries are then lo or hi, to be decided by the caller). It returns their
// count. The decision, a coin flip for the branch predictor, is made
// without a branch (integer compare to a 0/1 mask selecting the bits of lo
// or hi); the branches left are taken rarely.
func decideSigmoid(o, half []float64, buf *[sampleChunk]uint32, pend *[sampleChunk]int32, lo, hi float64) int {
	np := 0
	half = half[:len(o)]
	loBits := math.Float64bits(lo)
	flip := loBits ^ math.Float64bits(hi)
	for k, t := range o[:min(len(o), sampleChunk)] {
		b := uint64(buf[k&(sampleChunk-1)])
		h := half[k]
		fl := (t - h - sigGridLo) * (1 / sigGridStep)
		fh := (t + h - sigGridLo) * (1 / sigGridStep)
		if !(fl >= 0 && fh < sigGridN) {
			pend[np&(sampleChunk-1)] = int32(k)
			np++
			continue
		}
		// j1 ≤ j2 < sigGridN: no bounds checks
		lb, hb := sigLoBits[int(fl)&(sigGridN-1)], sigHiBits[int(fh)&(sigGridN-1)+1]
		var d uint64
		if b < lb {
			d = 1
		}
		o[k] = math.Float64frombits(loBits ^ (-d & flip))
		if b-lb < hb-lb { // lb ≤ b < hb: undecided
			pend[np&(sampleChunk-1)] = int32(k)
			np++
		}
	}
	return np
}

// golden is SplitMix64's increment, 2⁶⁴ divided by the golden ratio.
const golden = 0x9e3779b97f4a7c15

// splitmix is SplitMix64's output function (Steele, Lea & Flood 2014; the
// generator that seeds xoshiro): word i of the sequence started from seed
// s is splitmix(s + (i+1)·golden).
func splitmix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// fillBits fills buf with the 32-bit halves (high half first) of the
// SplitMix64 sequence started from seed: a few inlined integer operations
// per 64-bit word instead of a call through the rand.Source interface.
// SplitMix64 passes BigCrush; each chunk starts from a fresh 64-bit draw of
// the caller's stream (words 1..128 for the halves, words 129..384 for the
// undecided units' further bits), so runs stay reproducible from the seed,
// and chunks of 384 words from independent random starting points of a
// 2⁶⁴-periodic sequence overlap with negligible probability (< 2⁻³⁰ for
// 10¹² chunks).
func fillBits(buf []uint32, seed uint64) {
	for i := 0; i < len(buf); i += 2 {
		seed += golden
		z := splitmix(seed)
		buf[i] = uint32(z >> 32)
		if i+1 < len(buf) {
			buf[i+1] = uint32(z)
		}
	}
}
