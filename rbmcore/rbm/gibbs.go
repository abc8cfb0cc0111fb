package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/bernoulli"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
)

// Chains is a set of B block-Gibbs chains of an RBM, persistent across calls
// (use it for PCD, sampling, conditional sampling). One sweep samples
// h ~ P(h | v) then v ~ P(v | h), both at inverse temperature Beta, i.e. from
// P_β(v, h) ∝ exp(-β E(v, h)); the two matrix products of a sweep are single
// BLAS calls over all chains and the sampling is spread over the cores.
//
// Units whose Clamp entry is true keep their current value (set them in V or
// H before running): this samples the conditional distribution of the other
// units. The random streams are fixed per block of 4 chains, so a run is
// reproducible from the seed whatever the number of cores: bitwise for
// binary and spin layers (their samples are certified against float64
// products) and, with the pure-Go BLAS, for every layer. OpenBLAS may round
// the float64 products of a row differently for different row splits
// (core counts), so continuous layers then agree to rounding only, and
// their chains drift apart over many sweeps.
type Chains struct {
	Model *RBM
	// V and H are the current states, B×Width(Visible) and B×Width(Hidden).
	V, H *mat.Dense
	// Beta is the inverse temperature (1 samples the model itself).
	Beta float64
	// ClampVisible and ClampHidden (nil, or one flag per unit) fix units.
	ClampVisible, ClampHidden []bool
	// Products selects the precision of a sweep's two matrix products:
	//
	//   - "" (default): single precision (sgemm, about twice the speed of
	//     dgemm) for binary and spin layers, double for the others. Binary
	//     and spin samples stay exact: a rigorous bound on the float32
	//     error of each input (γ_{k+2}·max_i|x_i|·Σ_i|w_iµ|, Higham's
	//     bound for a k-term dot product, plus float64 rounding slack) is
	//     carried into the Bernoulli decision, which is made for the whole
	//     interval, and the rare inputs whose interval straddles the
	//     decision (~1e-4 of the units) are recomputed in float64. The
	//     samples are then the very ones the float64 products give with
	//     the same seed.
	//   - "float64": double precision everywhere.
	//   - "float32": single precision for every layer. Continuous, Potts
	//     and Poisson samples are then exact draws given inputs perturbed
	//     by up to ~1e-7·Σ_i |x_i w_iµ| (a bias far below the sampling
	//     noise for typical models, but the engine's contract is exact
	//     conditional sampling, hence not the default).
	//
	// The weights are read (and converted) at the start of every Sweep and
	// Run call: updates between calls count, updates during a Run do not.
	Products string

	w32, x32, in32 []float32
	absIn          [2][]float64 // Σ|w| over the inputs of each hidden (0) and visible (1) unit
	maxW           float64      // max |w|
	recomputed     atomic.Int64 // certified inputs recomputed in float64
	rngs           []*rand.Rand
	inH            []float64 // hidden inputs of the last sweep (v·W)
	inV            []float64 // visible inputs of the last sweep (h·Wᵀ)
	sweeps         int
}

// NewChains returns b chains of m started from independent draws of each
// visible unit with zero input (its own field only) at inverse temperature
// 1, with H sampled given V. The model is used, not copied: parameter
// updates between runs take effect (persistent chains).
func NewChains(m *RBM, b int, seed uint64) (*Chains, error) {
	if b <= 0 {
		return nil, fmt.Errorf("rbm: NewChains: number of chains b = %d must be positive", b)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("rbm: NewChains: %w", err)
	}
	nv, nh := Width(m.Visible), Width(m.Hidden)
	c := &Chains{
		Model: m, Beta: 1,
		V:    mat.NewDense(b, nv, nil),
		H:    mat.NewDense(b, nh, nil),
		rngs: streams(seed, b, 1),
		inH:  make([]float64, b*nh),
		inV:  make([]float64, b*nv),
	}
	v := c.V.RawMatrix().Data
	zero := make([]float64, len(v))
	if err := forBlocks(b, c.rngs, func(r0, r1 int, rng *rand.Rand) error {
		return m.Visible.Sample(rng, zero[r0*nv:r1*nv], v[r0*nv:r1*nv], 1)
	}); err != nil {
		return nil, fmt.Errorf("rbm: NewChains: initial visible states: %w", err)
	}
	hid, _, _ := c.halves() // no clamps yet: no error
	if err := forRanges(b, func(r0, r1 int) error { return c.step(hid, r0, r1) }); err != nil {
		return nil, fmt.Errorf("rbm: NewChains: initial hidden states: %w", err)
	}
	return c, nil
}

// Len returns the number of chains B.
func (c *Chains) Len() int { r, _ := c.V.Dims(); return r }

// Sweeps returns the number of sweeps run so far.
func (c *Chains) Sweeps() int { return c.sweeps }

// clampCols returns the column ranges fixed by a per-unit clamp mask.
func clampCols(mask []bool, l Layer) ([]int, error) {
	if mask == nil {
		return nil, nil
	}
	if len(mask) != l.Len() {
		return nil, fmt.Errorf("rbm: clamp mask has %d entries, the %s layer has %d units", len(mask), l.Kind(), l.Len())
	}
	var cols []int
	q := l.States()
	for u, f := range mask {
		if f {
			for a := 0; a < q; a++ {
				cols = append(cols, u*q+a)
			}
		}
	}
	return cols, nil
}

// half is one half of a sweep: sampling the states x of layer l (width w,
// clamped columns keep) given the states src (width k) of the other layer,
// through the inputs in = src·W (trans false) or src·Wᵀ.
type half struct {
	l     Layer
	x     []float64
	w     int
	keep  []int
	src   []float64
	k     int
	trans bool
	in    []float64
	other Layer // the layer of src
	f32   bool  // products in float32
	// cert, for a sigmoid layer with f32 products, holds the per-unit
	// bounds of certified sampling (norm, exact and the count are set per
	// block); maxAbs is the largest Σ_i |w| of a unit's input.
	cert   *bernoulli.Certificate
	maxAbs float64
}

// halves returns the hidden (h | v) and visible (v | h) halves of a sweep.
func (c *Chains) halves() (hid, vis half, err error) {
	m := c.Model
	nv, nh := Width(m.Visible), Width(m.Hidden)
	v, h := c.V.RawMatrix().Data, c.H.RawMatrix().Data
	hid = half{l: m.Hidden, x: h, w: nh, src: v, k: nv, in: c.inH, other: m.Visible}
	vis = half{l: m.Visible, x: v, w: nv, src: h, k: nh, trans: true, in: c.inV, other: m.Hidden}
	if hid.keep, err = clampCols(c.ClampHidden, m.Hidden); err != nil {
		return hid, vis, fmt.Errorf("ClampHidden: %w", err)
	}
	if vis.keep, err = clampCols(c.ClampVisible, m.Visible); err != nil {
		return hid, vis, fmt.Errorf("ClampVisible: %w", err)
	}
	return hid, vis, nil
}

// step runs half s on the rows [r0, r1): their product, then their
// sampling block by block (each block with its own stream), keeping the
// clamped columns.
func (c *Chains) step(s half, r0, r1 int) error {
	var norm []float64
	if s.cert != nil {
		if _, unit := s.other.(sigmoidLayer); !unit {
			if norm = c.rowNorms(s, r0, r1); norm == nil { // too large for float32
				s.f32, s.cert = false, nil
			}
		}
	}
	in32 := c.product(s, r0, r1)
	return eachBlock(r0, r1, c.rngs, func(b0, b1 int, rng *rand.Rand) error {
		var kept []float64
		for r := b0; r < b1; r++ {
			for _, j := range s.keep {
				kept = append(kept, s.x[r*s.w+j])
			}
		}
		in, x := s.in[b0*s.w:b1*s.w], s.x[b0*s.w:b1*s.w]
		if s.cert != nil {
			theta, scale, lo, hi := s.l.(sigmoidLayer).SigmoidForm(c.Beta)
			bc := *s.cert
			if norm != nil {
				bc.Norm = norm[b0-r0 : b1-r0]
			}
			bc.Exact = func(r, u int) float64 { return c.exactInput(s, b0+r, u) }
			bernoulli.Sample(rng, theta, in32[(b0-r0)*s.w:(b1-r0)*s.w], x, scale, lo, hi, &bc)
			c.recomputed.Add(int64(bc.Recomputed))
		} else if err := s.l.Sample(rng, in, x, c.Beta); err != nil {
			return err
		}
		for r := b0; r < b1; r++ {
			for _, j := range s.keep {
				s.x[r*s.w+j], kept = kept[0], kept[1:]
			}
		}
		return nil
	})
}

// certify sets the per-unit bounds of half s (a sigmoid layer whose
// products run in float32, with abs[u] = Σ_i |w| over unit u's inputs; see
// bernoulli.NewCertificate), or leaves s.cert nil when the values are too
// large for float32 (the half then runs in float64).
func (c *Chains) certify(s *half, abs []float64) {
	s.maxAbs = 0
	for _, a := range abs {
		if a > s.maxAbs {
			s.maxAbs = a
		}
	}
	if !(c.maxW < 0x1p100) || !(s.maxAbs < 0x1p100) {
		s.f32 = false
		return
	}
	theta, scale, _, _ := s.l.(sigmoidLayer).SigmoidForm(c.Beta)
	_, unit := s.other.(sigmoidLayer)
	s.cert = bernoulli.NewCertificate(s.k, abs, theta, scale, unit)
}

// rowNorms returns max|x_r| for the source rows [r0, r1) of half s, or nil
// when a row holds NaN or is too large for float32 products.
func (c *Chains) rowNorms(s half, r0, r1 int) []float64 {
	norm := make([]float64, r1-r0)
	for r := r0; r < r1; r++ {
		xm := 0.0
		for _, x := range s.src[r*s.k : (r+1)*s.k] {
			if a := math.Abs(x); a > xm {
				xm = a
			} else if a != a { // NaN: leave it to float64
				return nil
			}
		}
		if !(xm*s.maxAbs < 0x1p100) {
			return nil
		}
		norm[r-r0] = xm
	}
	return norm
}

// exactInput returns the float64 input of unit u in row r of half s.
func (c *Chains) exactInput(s half, r, u int) float64 {
	w := c.Model.W.RawMatrix()
	x := s.src[r*s.k : (r+1)*s.k]
	sum := 0.0
	if s.trans {
		for j, wj := range w.Data[u*w.Stride : u*w.Stride+w.Cols] {
			sum += x[j] * wj
		}
		return sum
	}
	for i, xi := range x {
		sum += xi * w.Data[i*w.Stride+u]
	}
	return sum
}

// product computes the inputs of half s for rows [r0, r1): src·W (or
// src·Wᵀ) in float64 into s.in or, with s.f32, through sgemm on the float32
// copy of W made by prepare, with the float32 operands in the buffers x32
// and in32 (the row ranges of concurrent calls do not overlap). A
// certified half (s.cert set) samples from the float32 inputs, which are
// returned; the others get them converted into s.in.
func (c *Chains) product(s half, r0, r1 int) []float32 {
	rows := r1 - r0
	x, out := s.src[r0*s.k:r1*s.k], s.in[r0*s.w:r1*s.w]
	w := c.Model.W.RawMatrix()
	if !s.f32 {
		gemm(x, rows, w, s.trans, out)
		return nil
	}
	off := r0 * max(s.k, s.w)
	x32, in32 := c.x32[off:off+len(x)], c.in32[off:off+len(out)]
	switch {
	case rows == 0 || s.w == 0:
	case s.k == 0:
		clear(in32)
	default:
		for i, v := range x {
			x32[i] = float32(v)
		}
		t := blas.NoTrans
		if s.trans {
			t = blas.Trans
		}
		blas32.Gemm(blas.NoTrans, t, 1,
			blas32.General{Rows: rows, Cols: s.k, Stride: s.k, Data: x32},
			blas32.General{Rows: w.Rows, Cols: w.Cols, Stride: w.Cols, Data: c.w32}, 0,
			blas32.General{Rows: rows, Cols: s.w, Stride: s.w, Data: in32})
	}
	if s.cert == nil {
		for i, v := range in32 {
			out[i] = float64(v)
		}
	}
	return in32
}

// prepare returns the two halves of a sweep with their precision, making
// the float32 copy of W and the bounds that the float32 halves need.
func (c *Chains) prepare() (hid, vis half, err error) {
	if err := c.checkShapes(); err != nil {
		return hid, vis, err
	}
	if hid, vis, err = c.halves(); err != nil {
		return hid, vis, err
	}
	w := c.Model.W.RawMatrix()
	contiguous := w.Stride == w.Cols
	for _, s := range []*half{&hid, &vis} {
		_, sig := s.l.(sigmoidLayer)
		switch c.Products {
		case "":
			s.f32 = sig && contiguous
		case "float32":
			if !contiguous {
				return hid, vis, fmt.Errorf("rbm: chains: Products float32 needs contiguous weights (stride %d, %d columns)", w.Stride, w.Cols)
			}
			s.f32 = true
		case "float64":
		default:
			return hid, vis, fmt.Errorf("rbm: chains: Products = %q, want \"\", \"float64\" or \"float32\"", c.Products)
		}
	}
	if !hid.f32 && !vis.f32 {
		return hid, vis, nil
	}
	c.convertWeights()
	n := c.Len() * max(hid.w, vis.w, hid.k, vis.k)
	if len(c.x32) < n {
		c.x32, c.in32 = make([]float32, n), make([]float32, n)
	}
	for i, s := range []*half{&hid, &vis} {
		if _, sig := s.l.(sigmoidLayer); sig && s.f32 {
			c.certify(s, c.absIn[i])
		}
	}
	return hid, vis, nil
}

// convertWeights makes w32, the float32 copy of W, with absIn (the sums
// of |w| over the inputs of every hidden and visible unit) and maxW, in
// one pass split over the cores by rows of W.
func (c *Chains) convertWeights() {
	w := c.Model.W.RawMatrix()
	nv, nh := w.Rows, w.Cols
	if len(c.w32) != nv*nh {
		c.w32 = make([]float32, nv*nh)
	}
	if len(c.absIn[0]) != nh || len(c.absIn[1]) != nv {
		c.absIn = [2][]float64{make([]float64, nh), make([]float64, nv)}
	}
	var mu sync.Mutex
	clear(c.absIn[0])
	c.maxW = 0
	_ = workers.ForRanges(nv, 8, func(i0, i1 int) error {
		col := make([]float64, nh)
		mx := 0.0
		for i := i0; i < i1; i++ {
			row, row32 := w.Data[i*nh:(i+1)*nh], c.w32[i*nh:(i+1)*nh]
			s := 0.0
			for j, x := range row {
				row32[j] = float32(x)
				a := math.Abs(x)
				s += a
				col[j] += a
				mx = math.Max(mx, a)
			}
			c.absIn[1][i] = s
		}
		mu.Lock()
		for j, a := range col {
			c.absIn[0][j] += a
		}
		c.maxW = math.Max(c.maxW, mx)
		mu.Unlock()
		return nil
	})
}

// checkShapes verifies that V and H (which callers may replace) are
// contiguous matrices of the right shape.
func (c *Chains) checkShapes() error {
	b := len(c.inH) / max(1, Width(c.Model.Hidden))
	for _, x := range []struct {
		name string
		m    *mat.Dense
		w    int
	}{{"V", c.V, Width(c.Model.Visible)}, {"H", c.H, Width(c.Model.Hidden)}} {
		raw := x.m.RawMatrix()
		if raw.Rows != b || raw.Cols != x.w || raw.Stride != x.w {
			return fmt.Errorf("rbm: chains: %s is %d×%d (stride %d), want a contiguous %d×%d matrix", x.name, raw.Rows, raw.Cols, raw.Stride, b, x.w)
		}
	}
	return nil
}

// Sweep performs one block-Gibbs sweep (h | v, then v | h) on every chain.
// The chains are split into one range per core; each range runs its own
// two products and samplings.
func (c *Chains) Sweep() error {
	hid, vis, err := c.prepare()
	if err != nil {
		return fmt.Errorf("rbm: sweep %d: %w", c.sweeps+1, err)
	}
	return c.sweep(hid, vis)
}

func (c *Chains) sweep(hid, vis half) error {
	err := forRanges(c.Len(), func(r0, r1 int) error {
		if err := c.step(hid, r0, r1); err != nil {
			return fmt.Errorf("hidden: %w", err)
		}
		if err := c.step(vis, r0, r1); err != nil {
			return fmt.Errorf("visible: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rbm: sweep %d: %w", c.sweeps+1, err)
	}
	c.sweeps++
	return nil
}

// Run performs n sweeps, checking ctx between sweeps and calling progress
// (if not nil) at most every 100 ms and at the end. On cancellation the
// chains hold the state of the last complete sweep and ctx's error is
// returned. The model is read once, at the start.
func (c *Chains) Run(ctx context.Context, n int, progress func(done, total int)) error {
	ctx = ContextOrDefault(ctx)
	hid, vis, err := c.prepare()
	if err != nil {
		return fmt.Errorf("rbm: sweep %d: %w", c.sweeps+1, err)
	}
	last := time.Now()
	for k := 0; k < n; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.sweep(hid, vis); err != nil {
			return err
		}
		if progress != nil && (k == n-1 || time.Since(last) > 100*time.Millisecond) {
			progress(k+1, n)
			last = time.Now()
		}
	}
	return nil
}

// Energy returns E(v, h) of every chain's current state.
func (c *Chains) Energy() []float64 {
	return c.Model.Energy(c.V, c.H)
}

// checkFinite reports the first non-finite value of x, naming what.
func checkFinite(x []float64, what string) error {
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("rbm: %s[%d] = %v: the computation diverged", what, k, v)
		}
	}
	return nil
}
