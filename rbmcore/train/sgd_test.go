package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// sgdPath is one implementation of sgdShadow: use selects it and returns a
// function that restores the default.
type sgdPath struct {
	name string
	use  func() (restore func())
}

// sgdCase is the input of one call of sgdShadow.
type sgdCase struct {
	w, d           []float64
	rows, n        int
	lr, l2, l1     float64
	lim            float64
	shadow         bool
	w32Off, absOff int // offsets of the outputs in their arrays (alignment)
}

// sgdOut is the output of one call: d (the new weights), the shadow, the
// row sums, the first bad index and Σ g².
type sgdOut struct {
	d      []float64
	w32    []float32
	absRow []float64
	first  int
	s      float64
}

// run calls f (sgdShadow or sgdShadowGo's arguments) on copies of the
// inputs, in arrays offset by the case's offsets, and checks that w was
// not written.
func (c *sgdCase) run(t *testing.T, f func(w, d []float64, w32 []float32, absRow []float64, n int, lr, l2, l1, lim float64) (int, float64)) sgdOut {
	t.Helper()
	w := append([]float64(nil), c.w...)
	d := append([]float64(nil), c.d...)
	var w32 []float32
	var abs []float64
	if c.shadow {
		// Stale values in the outputs, which must all be overwritten.
		w32 = make([]float32, c.w32Off+len(w)+1)[c.w32Off : c.w32Off+len(w)]
		abs = make([]float64, c.absOff+c.rows+1)[c.absOff : c.absOff+c.rows]
		for k := range w32 {
			w32[k] = 7
		}
		for k := range abs {
			abs[k] = 7
		}
	}
	first, s := f(w, d, w32, abs, c.n, c.lr, c.l2, c.l1, c.lim)
	for k := range w {
		if math.Float64bits(w[k]) != math.Float64bits(c.w[k]) {
			t.Fatalf("w[%d] was written: %v, was %v", k, w[k], c.w[k])
		}
	}
	if c.shadow {
		// the guard elements after the outputs
		if g := w32[:len(w)+1][len(w)]; g != 0 {
			t.Fatalf("w32 written beyond its end: %v", g)
		}
		if g := abs[:c.rows+1][c.rows]; g != 0 {
			t.Fatalf("absRow written beyond its end: %v", g)
		}
	}
	return sgdOut{d, w32, abs, first, s}
}

// spread returns a value of random sign and magnitude 2^e·m, e uniform in
// [−60, 10], m in [1, 2); about one in 16 is ±0, one in 32 subnormal.
func spread(rng *rand.Rand) float64 {
	sgn := float64(1 - 2*rng.IntN(2))
	switch rng.IntN(32) {
	case 0, 1:
		return math.Copysign(0, sgn)
	case 2:
		return sgn * math.Float64frombits(1+rng.Uint64N(1<<52-1))
	}
	return sgn * math.Ldexp(1+rng.Float64(), rng.IntN(71)-60)
}

// randomSGDCase returns rows of length n of spread values, penalties on
// or off, a limit, and with probability 1/2 a few bad weights (the new
// weight beyond the limit, ±Inf or NaN, from w or from d) at random
// positions, the first and the last included.
func randomSGDCase(rng *rand.Rand, rows, n int) *sgdCase {
	off := rng.IntN(4) // unaligned input arrays
	c := &sgdCase{
		w: make([]float64, off+rows*n)[off:], d: make([]float64, off+rows*n)[off:],
		rows: rows, n: n, lr: math.Ldexp(1+rng.Float64(), -rng.IntN(8)),
		lim: 1e3, shadow: rng.IntN(5) != 0, w32Off: rng.IntN(8), absOff: rng.IntN(4),
	}
	switch rng.IntN(4) {
	case 1:
		c.l2 = 1e-3 * (1 + rng.Float64())
	case 2:
		c.l1 = 1e-4 * (1 + rng.Float64())
	case 3:
		c.l2, c.l1 = 1e-2*rng.Float64(), 1e-3*rng.Float64()
	}
	if rng.IntN(4) == 0 {
		c.lim = math.MaxFloat64
	}
	for k := range c.w {
		c.w[k], c.d[k] = spread(rng), spread(rng)
	}
	if rng.IntN(2) == 0 {
		bad := []float64{2e3, -5e3, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64}
		for range 1 + rng.IntN(3) {
			var k int
			switch rng.IntN(3) {
			case 0:
				k = 0
			case 1:
				k = len(c.w) - 1
			default:
				k = rng.IntN(len(c.w))
			}
			if rng.IntN(2) == 0 {
				c.w[k] = bad[rng.IntN(len(bad))]
			} else {
				c.d[k] = bad[rng.IntN(len(bad))] / c.lr
			}
		}
	}
	return c
}

// sameBits reports whether a and b have the same bits, or are both NaN:
// NaN payloads are not compared, since Go may swap the operands of a
// commutative operation and x86 then returns the other NaN's payload.
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

// diffSGD returns the first difference between two outputs, or "".
func diffSGD(got, want sgdOut) string {
	if got.first != want.first {
		return fmt.Sprintf("first = %d, want %d", got.first, want.first)
	}
	if !sameBits(got.s, want.s) {
		return fmt.Sprintf("Σg² = %v (%#x), want %v (%#x)", got.s, math.Float64bits(got.s), want.s, math.Float64bits(want.s))
	}
	for k := range want.d {
		if !sameBits(got.d[k], want.d[k]) {
			return fmt.Sprintf("d[%d] = %v (%#x), want %v (%#x)", k, got.d[k], math.Float64bits(got.d[k]), want.d[k], math.Float64bits(want.d[k]))
		}
	}
	for k := range want.w32 {
		if !sameBits(float64(got.w32[k]), float64(want.w32[k])) || (got.w32[k] == got.w32[k] && math.Float32bits(got.w32[k]) != math.Float32bits(want.w32[k])) {
			return fmt.Sprintf("w32[%d] = %v (%#x), want %v (%#x)", k, got.w32[k], math.Float32bits(got.w32[k]), want.w32[k], math.Float32bits(want.w32[k]))
		}
	}
	for k := range want.absRow {
		if !sameBits(got.absRow[k], want.absRow[k]) {
			return fmt.Sprintf("absRow[%d] = %v (%#x), want %v (%#x)", k, got.absRow[k], math.Float64bits(got.absRow[k]), want.absRow[k], math.Float64bits(want.absRow[k]))
		}
	}
	return ""
}

// sgdShadowRef calls sgdShadowGo with sgdShadow's arguments.
func sgdShadowRef(w, d []float64, w32 []float32, absRow []float64, n int, lr, l2, l1, lim float64) (int, float64) {
	return sgdShadowGo(w, d, w32, absRow, len(w)/n, n, lr, l2, l1, lim)
}

// sgdShapes are the block shapes (rows, row length) of the tests: rows of
// 1 to 37 weights (every remainder mod 4, short rows with no full group),
// and the trainer's blocks of 8 rows of 500.
func sgdShapes() [][2]int {
	var shapes [][2]int
	for n := 1; n <= 37; n++ {
		shapes = append(shapes, [2]int{1 + n%3, n})
	}
	return append(shapes, [2]int{8, 500}, [2]int{3, 500})
}

// TestSGDShadowPaths checks every implementation of sgdShadow on this
// machine against the reference sgdShadowGo, bit for bit, in every output,
// over random blocks (sgdShapes, randomSGDCase).
func TestSGDShadowPaths(t *testing.T) {
	var names []string
	for _, p := range sgdPaths() {
		names = append(names, p.name)
	}
	t.Logf("sgdShadow paths on this machine: %v", names)
	for _, p := range sgdPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			rng := rand.New(rand.NewPCG(3, 4))
			for rep := range 40 {
				for _, sh := range sgdShapes() {
					c := randomSGDCase(rng, sh[0], sh[1])
					want := c.run(t, sgdShadowRef)
					got := c.run(t, sgdShadow)
					if msg := diffSGD(got, want); msg != "" {
						t.Fatalf("rep %d, %d rows of %d (lr %v, l2 %v, l1 %v, lim %v, shadow %v): %s", rep, sh[0], sh[1], c.lr, c.l2, c.l1, c.lim, c.shadow, msg)
					}
				}
			}
		})
	}
}

// TestSGDShadowNoPenalty: without penalties the direction is d bit for
// bit, even where subtracting zero penalties would change it: 0·(±Inf) and
// 0·NaN are NaN, which would make Σ g² NaN; the new weight of x = −0 with
// d = −0 is −0.
func TestSGDShadowNoPenalty(t *testing.T) {
	for _, p := range sgdPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			negZero := math.Copysign(0, -1)
			w := []float64{math.Inf(1), math.NaN(), negZero, 1.5, math.Inf(-1)}
			d := []float64{2, 1, negZero, negZero, 0}
			first, s := sgdShadow(w, d, nil, nil, 5, 0.5, 0, 0, 10)
			want := []float64{math.Inf(1), math.NaN(), negZero, 1.5, math.Inf(-1)}
			for k := range d {
				if !sameBits(d[k], want[k]) || math.Signbit(d[k]) != math.Signbit(want[k]) {
					t.Errorf("new weight %d = %v (sign bit %v), want %v", k, d[k], math.Signbit(d[k]), want[k])
				}
			}
			if first != 0 || s != 5 {
				t.Errorf("first = %d, Σg² = %v; want 0, 5", first, s)
			}
		})
	}
}

// TestSGDShadowReference checks each implementation against the formulas
// computed independently, weight by weight: g = d − (l2·x + l1·sign x),
// x + lr·g, float32(x + lr·g), the first index not within the limit; and
// the sums Σ g² and Σ |x_new| against sums in one chain, to 1e−13
// relative (the order of the additions differs), on blocks of finite
// values.
func TestSGDShadowReference(t *testing.T) {
	for _, p := range sgdPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			rng := rand.New(rand.NewPCG(5, 6))
			for rep := range 200 {
				rows, n := 1+rng.IntN(4), 1+rng.IntN(40)
				c := randomSGDCase(rng, rows, n)
				c.shadow = true
				for k := range c.w { // finite values only; a few beyond the limit
					if !(math.Abs(c.w[k]) <= 1e10) || !(math.Abs(c.d[k]) <= 1e10) {
						c.w[k], c.d[k] = 1e4*float64(1-2*rng.IntN(2)), 0
					}
				}
				got := c.run(t, sgdShadow)
				first, s := -1, 0.0
				for i := range rows {
					abs := 0.0
					for j := range n {
						k := i*n + j
						x, g := c.w[k], c.d[k]
						if c.l2 > 0 || c.l1 > 0 {
							sg := 0.0
							if x > 0 {
								sg = 1
							} else if x < 0 {
								sg = -1
							}
							g = g - (float64(c.l2*x) + float64(c.l1*sg))
						}
						s += g * g
						y := x + float64(c.lr*g)
						abs += math.Abs(y)
						if !sameBits(got.d[k], y) || got.w32[k] != float32(y) {
							t.Fatalf("rep %d: weight %d: new %v, shadow %v; want %v, %v", rep, k, got.d[k], got.w32[k], y, float32(y))
						}
						if first < 0 && math.Abs(y) > c.lim {
							first = k
						}
					}
					if math.Abs(got.absRow[i]-abs) > 1e-13*abs {
						t.Fatalf("rep %d: absRow[%d] = %v, want %v", rep, i, got.absRow[i], abs)
					}
				}
				if got.first != first || math.Abs(got.s-s) > 1e-13*s {
					t.Fatalf("rep %d: first %d, Σg² %v; want %d, %v", rep, got.first, got.s, first, s)
				}
			}
		})
	}
}

// TestShadowRows checks every implementation of shadowRows (products.refresh)
// against shadowRow, the reference of both kernels, bit for bit, and
// against float32(x) and a sum in one chain (to 1e−13 relative, or both
// not finite), over random rows (sgdShapes, randomSGDCase's weights:
// spread values, ±0, a few ±Inf, NaN and large ones), at unaligned offsets.
func TestShadowRows(t *testing.T) {
	for _, p := range sgdPaths() {
		t.Run(p.name, func(t *testing.T) {
			defer p.use()()
			rng := rand.New(rand.NewPCG(13, 14))
			for rep := range 40 {
				for _, sh := range sgdShapes() {
					rows, n := sh[0], sh[1]
					c := randomSGDCase(rng, rows, n)
					w32 := make([]float32, c.w32Off+rows*n+1)[c.w32Off : c.w32Off+rows*n]
					abs := make([]float64, c.absOff+rows+1)[c.absOff : c.absOff+rows]
					shadowRows(c.w, w32, abs, n)
					if w32[:len(w32)+1][len(w32)] != 0 || abs[:rows+1][rows] != 0 {
						t.Fatalf("rep %d: written beyond the end of the outputs", rep)
					}
					for i := range rows {
						row := c.w[i*n : (i+1)*n]
						want32 := make([]float32, n)
						want := shadowRow(row, want32)
						sum := 0.0
						for k, x := range row {
							sum += math.Abs(x)
							if got := w32[i*n+k]; math.Float32bits(got) != math.Float32bits(want32[k]) && !(got != got && want32[k] != want32[k]) {
								t.Fatalf("rep %d, %d rows of %d: w32[%d] = %v, want %v", rep, rows, n, i*n+k, got, want32[k])
							}
							if got := w32[i*n+k]; got != float32(x) && x == x {
								t.Fatalf("rep %d: w32[%d] = %v, float32(%v) = %v", rep, i*n+k, got, x, float32(x))
							}
						}
						if !sameBits(abs[i], want) {
							t.Fatalf("rep %d, %d rows of %d: absRow[%d] = %v (%#x), want %v (%#x)", rep, rows, n, i, abs[i], math.Float64bits(abs[i]), want, math.Float64bits(want))
						}
						finite := !math.IsInf(sum, 0) && sum == sum
						if finite && math.Abs(abs[i]-sum) > 1e-13*sum || !finite && !math.IsInf(abs[i], 0) && abs[i] == abs[i] {
							t.Fatalf("rep %d: absRow[%d] = %v, one chain gives %v", rep, i, abs[i], sum)
						}
					}
				}
			}
		})
	}
}

// TestSGDShadowPathsTrain: plain-SGD training (the weight pass through
// sgdShadow, with the float32 shadow of a binary model's certified visible
// inputs) gives the same bits, parameters and gradient norms, on every
// path, with and without penalties; and a run whose weights go beyond
// MaxWeight stops with the same DivergenceError.
func TestSGDShadowPathsTrain(t *testing.T) {
	set := randomBinarySet(90, 37, 9)
	for _, tr := range []setup{
		{method: PCD{K: 1, Chains: 20}, Options: Options{Batch: 30, Epochs: 3, LR: 0.05, Seed: 4}},
		{method: CD{K: 1}, Options: Options{Batch: 30, Epochs: 3, LR: 0.05, Seed: 5, Regularisers: []Regulariser{L2{Lambda: 1e-3}, L1{Lambda: 1e-4}}}},
		{method: PCD{K: 1, Chains: 20}, Options: Options{Batch: 30, Epochs: 3, LR: 5, MaxWeight: 0.3, Seed: 6}},
	} {
		tr.Monitor = Monitor{PLEvery: -1, ReconEvery: -1}
		var want [][]float64
		var wantNorms []float64
		var wantErr string
		for i, p := range sgdPaths() {
			restore := p.use()
			m := rbm.New(rbm.Binary(37), rbm.Binary(23), rbm.Seed(3), rbm.WeightScale(0.1))
			var norms []float64
			tr.OnUpdate = func(u Update) { norms = append(norms, u.GradNorm) }
			_, err := tr.fit(context.Background(), m, set)
			restore()
			msg := fmt.Sprint(err)
			if tr.MaxWeight > 0 && err == nil {
				t.Fatalf("%s: no divergence with MaxWeight %v", p.name, tr.MaxWeight)
			} else if tr.MaxWeight == 0 && err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, %s, %v: %d updates, error %v", p.name, tr.method, tr.Regularisers, len(norms), err)
			if i == 0 {
				want, wantNorms, wantErr = paramsOf(m), norms, msg
				continue
			}
			if msg != wantErr {
				t.Errorf("%s: error %q, want %q", p.name, msg, wantErr)
			}
			if len(norms) != len(wantNorms) {
				t.Fatalf("%s: %d updates, want %d", p.name, len(norms), len(wantNorms))
			}
			for k := range norms {
				if math.Float64bits(norms[k]) != math.Float64bits(wantNorms[k]) {
					t.Fatalf("%s: gradient norm of update %d: %v, want %v", p.name, k+1, norms[k], wantNorms[k])
				}
			}
			got := paramsOf(m)
			for q := range want {
				for k := range want[q] {
					if math.Float64bits(got[q][k]) != math.Float64bits(want[q][k]) {
						t.Fatalf("%s (%v): parameter %d[%d] = %v, want %v", p.name, tr.Regularisers, q, k, got[q][k], want[q][k])
					}
				}
			}
		}
	}
}

// BenchmarkShadowRows times shadowRows (products.refresh) per weight,
// for each path, on a 784×500 weight matrix (larger than the caches).
func BenchmarkShadowRows(b *testing.B) {
	const nv, nh = 784, 500
	rng := rand.New(rand.NewPCG(7, 8))
	w := make([]float64, nv*nh)
	for k := range w {
		w[k] = rng.NormFloat64() * 0.01
	}
	w32, abs := make([]float32, nv*nh), make([]float64, nv)
	for _, p := range sgdPaths() {
		b.Run(p.name, func(b *testing.B) {
			defer p.use()()
			for i := 0; i < b.N; i++ {
				shadowRows(w, w32, abs, nh)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nv*nh), "ns/weight")
		})
	}
}

// BenchmarkSGDShadow times sgdShadow per weight, for each path, on the
// trainer's blocks (8 rows of 500, with the float32 shadow and no
// penalties, lr 0.1) over a whole 784×500 weight matrix (the trainer's
// Fashion-MNIST case: the arrays are larger than the caches), and over
// one block again and again (in cache).
func BenchmarkSGDShadow(b *testing.B) {
	const nv, nh = 784, 500
	rng := rand.New(rand.NewPCG(7, 8))
	w, d := make([]float64, nv*nh), make([]float64, nv*nh)
	for k := range w {
		w[k], d[k] = rng.NormFloat64()*0.01, rng.NormFloat64()*0.01
	}
	w32, abs := make([]float32, nv*nh), make([]float64, nv)
	for _, p := range sgdPaths() {
		for _, size := range []struct {
			name string
			rows int
		}{{"W", nv}, {"block", wBlock}} {
			b.Run(p.name+"/"+size.name, func(b *testing.B) {
				defer p.use()()
				for i := 0; i < b.N; i++ {
					for b0 := 0; b0 < size.rows; b0 += wBlock {
						lo, hi := b0*nh, min(b0+wBlock, size.rows)*nh
						sgdShadow(w[lo:hi], d[lo:hi], w32[lo:hi], abs[b0:hi/nh], nh, 0.1, 0, 0, 1e3)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size.rows*nh), "ns/weight")
			})
		}
	}
}
