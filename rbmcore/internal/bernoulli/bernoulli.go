// Package bernoulli draws binary and spin units, lo + (hi−lo)·Bernoulli(σ(t)),
// exactly and cheaply, for rbm's samplers and the trainer; it also
// certifies draws made from inputs known only within a bound (float32
// products).
//
// Exact Bernoulli(σ(t)) decisions with almost no exponentials and 10
// random bits per unit. The uniform of a unit is u = (c + r)/1024, with c
// 10 random bits (one of six 10-bit fields of a 64-bit word) and r a
// uniform in [0, 1) from 53 further bits, looked at only when needed. σ is
// increasing, so u < σ(t) for every r when σ(t) ≥ (c+1)/1024, that is when
// t ≥ logit((c+1)/1024), and for no r when t ≤ logit(c/1024). Only when t
// falls between the two logits of its cell (probability exactly 1/1024,
// whatever t: σ(t) lies in one cell of 1024) are r and e^{-t} evaluated.
// The decision is the one of u < σ(t) for a uniform u of 53-bit resolution
// or better: an exact draw. The end cells have logits ∓∞, so no range
// checks are needed; NaN inputs give lo.
//
// The same comparison decides for every t' of an interval [t-h, t+h] at
// once (t - h ≥ the upper logit, or t + h ≤ the lower one), which
// certifies decisions made from inputs known only to ±h (float32
// products, see Certificate).
package bernoulli

import (
	"math"
	"math/rand/v2"
)

const (
	sigBits    = 10
	sigCells   = 1 << sigBits
	sigPerWord = 64 / sigBits // 10-bit fields per 64-bit word
	// tableSlack bounds the rounding of the logits in sigCell (|logit| ≤
	// 7, a few ulps of 2⁻⁵⁰) and of t ± h; it widens every interval.
	tableSlack = 0x1p-44
	// extraBase is the position in a chunk's SplitMix64 sequence from
	// which the units' further bits are taken (the 10-bit fields use the
	// first ⌈256/6⌉ positions).
	extraBase = 1 << 32
)

// sigCell[c] holds logit(c/1024) and logit((c+1)/1024).
var sigCell [sigCells][2]float64

func init() {
	logit := func(c int) float64 {
		switch c {
		case 0:
			return math.Inf(-1)
		case sigCells:
			return math.Inf(1)
		}
		p := float64(c) / sigCells
		return math.Log(p) - math.Log1p(-p)
	}
	for c := range sigCell {
		sigCell[c] = [2]float64{logit(c), logit(c + 1)}
	}
}

// uniform returns u = (c + r)/1024 for the 10 random bits c and r the top
// 53 bits of x over 2⁵³.
func uniform(c, x uint64) float64 {
	return (float64(c) + float64(x>>11)*0x1p-53) / sigCells
}

// bernoulliUniform returns 1 if u < σ(t), else 0, for u in [0, 1).
func bernoulliUniform(u, t float64) float64 {
	// u < 1/(1+e^{-t})  ⇔  u(1+e^{-t}) < 1; +Inf for t → -∞ gives 0, NaN 0.
	if u*(1+math.Exp(-t)) < 1 {
		return 1
	}
	return 0
}

// Certificate describes inputs computed from float32 products (rbm.Chains'
// default for binary and spin layers, the trainer's visible inputs): the
// argument t = scale·(in + θ) of row r (of the call), unit u, is within
// half = Norm[r]·Slope[u] + Offset[u] of the one the float64 products give
// (Norm nil: all 1), and Exact(r, u) recomputes that float64 input. Sample
// decides on the whole interval and recomputes the rare inputs whose
// interval straddles the decision, so that every sample is the one the
// float64 inputs give (up to float64 rounding). Offset includes
// tableSlack.
type Certificate struct {
	Norm          []float64
	Slope, Offset []float64
	Exact         func(r, u int) float64
	Recomputed    int // number of exact recomputations
}

// NewCertificate returns the per-unit bounds for float32 products of k
// terms, abs[u] = Σ_i |w_iu| over unit u's inputs, with fields theta and
// scale of the sampled layer (t = scale·(in + θ)); unitSource tells that
// the source states are binary or spin (|x| ≤ 1). Norm and Exact are left
// to the caller. With unit roundoff u = 2⁻²⁴, converting x and w and the
// k-term dot product cost at most γ_{k+2}·Σ_i|x_i w_iu| ≤
// γ_{k+2}·max|x|·Σ_i|w_iu|, γ_n = nu/(1−nu) (Higham, Accuracy and
// Stability of Numerical Algorithms, §3.1); the float64 product is within
// k·2⁻⁵³ of the same sum; float32 underflow adds at most 2⁻¹²⁶ per
// conversion, product and sum (even where a BLAS kernel flushes subnormals
// to zero), bounded here by 2⁻¹²⁴ per term; roundSlack and tableSlack
// cover the float64 roundings of the decision. In units of t the
// half-width is max|x_r|·Slope_u + Offset_u; for a unit source
// max|x_r| ≤ 1 is folded into Offset. The caller keeps the values within
// float32 range (Σ|w|·max|x| < 2¹⁰⁰).
func NewCertificate(k int, abs, theta []float64, scale float64, unitSource bool) *Certificate {
	c := &Certificate{Slope: make([]float64, len(abs)), Offset: make([]float64, len(abs))}
	c.Set(k, abs, theta, scale, unitSource)
	return c
}

// Set recomputes the bounds of NewCertificate in place (same number of
// units), for weights that changed.
func (c *Certificate) Set(k int, abs, theta []float64, scale float64, unitSource bool) {
	kf := float64(k)
	g := (kf+2)*0x1p-24/(1-(kf+2)*0x1p-24) + kf*0x1p-52 + roundSlack
	tiny := kf * 0x1p-124
	sc := math.Abs(scale)
	for u, a := range abs {
		c.Slope[u] = sc * (g*a + tiny)
		c.Offset[u] = sc*(tiny*a+tiny+roundSlack*math.Abs(theta[u])) + roundSlack + tableSlack
		if unitSource {
			c.Offset[u] += c.Slope[u]
		}
	}
}

// roundSlack is a relative and absolute slack covering the float64
// roundings of t = scale·(in + θ).
const roundSlack = 0x1p-48

// exactSlack is the half-width of exactly known arguments: tableSlack.
var exactSlack = func() (h [sampleChunk]float64) {
	for k := range h {
		h[k] = tableSlack
	}
	return h
}()

// sampleChunk is the number of units Sample decides per pass; each
// chunk draws one 64-bit seed from rng.
const sampleChunk = 256

// Sample sets out[k] = lo + (hi-lo)·Bernoulli(σ(scale·(in[k] +
// theta[k mod n]))) for the rows of in (n = len(theta); float32 inputs come
// from certified float32 products), in chunks of up to
// sampleChunk units of a row. A chunk draws one 64-bit seed s from rng;
// its random bits are the SplitMix64 sequence from s (Steele, Lea & Flood
// 2014; it passes BigCrush): word j is splitmix(s + (j+1)·golden), unit k
// takes the 10-bit field k mod 6 of word ⌊k/6⌋ (low bits first) and, when
// undecided, its further bits from word extraBase + k. Every random bit of
// a unit is thus a fixed function of the chunk's seed and the unit's
// position, so the decisions do not depend on which other units were
// undecided: with a certificate (cert not nil: inputs known to an
// interval) the samples are those of the exact inputs with the same seed.
// Chunks start at independent random points of the 2⁶⁴-periodic sequence
// and use < 2³³ positions, so they overlap with negligible probability.
func Sample[F float32 | float64](rng *rand.Rand, theta []float64, in []F, out []float64, scale, lo, hi float64, cert *Certificate) {
	n := len(theta)
	var pend [sampleChunk]int32 // chunk indices of the undecided units
	var scaled [sampleChunk]float64
	for r, r0 := 0, 0; r0+n <= len(in) && n > 0; r, r0 = r+1, r0+n {
		row, orow := in[r0:r0+n], out[r0:r0+n]
		for c0 := 0; c0 < n; c0 += sampleChunk {
			c1 := min(c0+sampleChunk, n)
			x, o, th := row[c0:c1], orow[c0:c1], theta[c0:c1]
			half := exactSlack[:len(x)]
			if cert != nil {
				half = cert.Offset[c0:c1]
				if cert.Norm != nil {
					nr, sl, off := cert.Norm[r], cert.Slope[c0:c1], cert.Offset[c0:c1]
					for k := range x {
						scaled[k] = nr*sl[k] + off[k]
					}
					half = scaled[:len(x)]
				}
			}
			seed := rng.Uint64()
			np := decideSigmoid(x, th, o, half, seed, scale, lo, hi, &pend)
			for _, k32 := range pend[:np] {
				k := int(k32)
				c := (splitmix(seed+uint64(k/sigPerWord+1)*golden) >> (sigBits * (k % sigPerWord))) & (sigCells - 1)
				u := uniform(c, splitmix(seed+(extraBase+uint64(k))*golden))
				t := scale * (float64(x[k]) + th[k])
				var d float64
				switch {
				case cert == nil:
					d = bernoulliUniform(u, t)
				case bernoulliUniform(u, t-half[k]) == 1:
					d = 1
				case bernoulliUniform(u, t+half[k]) == 0:
					d = 0
				default:
					cert.Recomputed++
					d = bernoulliUniform(u, scale*(cert.Exact(r, c0+k)+th[k]))
				}
				o[k] = lo + d*(hi-lo)
			}
		}
	}
}

// decideSigmoid sets o[k] to hi or lo when the unit's 10 random bits decide
// Bernoulli(σ(t)) for every t within ±half[k] of t = scale·(x[k] + th[k]),
// and lists the other indices in pend (to be decided by the caller),
// returning their count. The decision, a coin flip for the branch
// predictor, selects the bits of lo or hi without a branch; the branch
// left (undecided) is taken with probability ~1/1024.
func decideSigmoid[F float32 | float64](x []F, th, o, half []float64, seed uint64, scale, lo, hi float64, pend *[sampleChunk]int32) int {
	np := 0
	loBits := math.Float64bits(lo)
	flip := loBits ^ math.Float64bits(hi)
	n := min(len(x), sampleChunk)
	x, th, o, half = x[:n], th[:n], o[:n], half[:n]
	for k0 := 0; k0 < n; k0 += sigPerWord {
		seed += golden
		w := splitmix(seed)
		for k := k0; k < min(k0+sigPerWord, n); k++ {
			cell := &sigCell[w&(sigCells-1)]
			w >>= sigBits
			t := scale * (float64(x[k]) + th[k])
			h := half[k]
			var d, lower uint64
			if t-h >= cell[1] {
				d = 1
			}
			if t+h <= cell[0] {
				lower = 1
			}
			o[k] = math.Float64frombits(loBits ^ (-d & flip))
			if d|lower == 0 {
				pend[np&(sampleChunk-1)] = int32(k)
				np++
			}
		}
	}
	return np
}

// golden is SplitMix64's increment, 2⁶⁴ divided by the golden ratio.
const golden = 0x9e3779b97f4a7c15

// splitmix is SplitMix64's output function: word i of the sequence started
// from seed s is splitmix(s + (i+1)·golden).
func splitmix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
