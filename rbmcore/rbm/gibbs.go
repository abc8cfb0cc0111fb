package rbm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"
)

// Chains is a set of B block-Gibbs chains of an RBM, persistent across calls
// (use it for PCD, sampling, conditional sampling). One sweep samples
// h ~ P(h | v) then v ~ P(v | h), both at inverse temperature Beta, i.e. from
// P_β(v, h) ∝ exp(-β E(v, h)); the two matrix products of a sweep are single
// BLAS calls over all chains and the sampling is spread over the cores.
//
// Units whose Clamp entry is true keep their current value (set them in V or
// H before running): this samples the conditional distribution of the other
// units. The random streams are fixed per block of 16 chains, so a run is
// reproducible from the seed on any machine.
type Chains struct {
	Model *RBM
	// V and H are the current states, B×Width(Visible) and B×Width(Hidden).
	V, H *mat.Dense
	// Beta is the inverse temperature (1 samples the model itself).
	Beta float64
	// ClampVisible and ClampHidden (nil, or one flag per unit) fix units.
	ClampVisible, ClampHidden []bool
	// Float32, if set, computes the two matrix products of a sweep in single
	// precision (sgemm: about twice the speed of the default float64 dgemm).
	// The inputs are then accurate to about 1e-7 relative, far below the
	// sampling noise; states, sampling and everything else stay float64. The
	// weights are converted at every sweep, so updates between sweeps count.
	//
	// It is not the default, even for large binary–binary chains where it
	// nearly halves the sweep time: with float32 products a sample is an
	// exact draw given inputs perturbed by up to ~1e-7·Σ_i |v_i w_iµ|, not
	// given the model's inputs. For typical models the resulting bias of a
	// unit's probability (~1e-7 to 1e-5) is far below what any run can
	// detect, but with the large inputs the engine supports (|I| up to 1e4)
	// it reaches ~1e-4 near a unit's threshold, and the engine's contract is
	// exact conditional sampling. Set it for speed when that is acceptable.
	Float32 bool

	w32, x32, in32 []float32
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
}

// halves returns the hidden (h | v) and visible (v | h) halves of a sweep.
func (c *Chains) halves() (hid, vis half, err error) {
	m := c.Model
	nv, nh := Width(m.Visible), Width(m.Hidden)
	v, h := c.V.RawMatrix().Data, c.H.RawMatrix().Data
	hid = half{l: m.Hidden, x: h, w: nh, src: v, k: nv, in: c.inH}
	vis = half{l: m.Visible, x: v, w: nv, src: h, k: nh, trans: true, in: c.inV}
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
	c.product(s.src[r0*s.k:r1*s.k], r1-r0, s.trans, s.in[r0*s.w:r1*s.w], r0*max(s.k, s.w))
	return eachBlock(r0, r1, c.rngs, func(b0, b1 int, rng *rand.Rand) error {
		var kept []float64
		for r := b0; r < b1; r++ {
			for _, j := range s.keep {
				kept = append(kept, s.x[r*s.w+j])
			}
		}
		if err := s.l.Sample(rng, s.in[b0*s.w:b1*s.w], s.x[b0*s.w:b1*s.w], c.Beta); err != nil {
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

// product sets out = x·W (trans false) or x·Wᵀ for the rows of x, in
// float64 or, with Float32, through sgemm on the float32 copy of W made by
// Sweep, with the float32 operands in Sweep's buffers x32 and in32 from
// offset off (the ranges of concurrent calls do not overlap).
func (c *Chains) product(x []float64, rows int, trans bool, out []float64, off int) {
	w := c.Model.W.RawMatrix()
	if !c.Float32 {
		gemm(x, rows, w, trans, out)
		return
	}
	k, n, t := w.Rows, w.Cols, blas.NoTrans
	if trans {
		k, n, t = n, k, blas.Trans
	}
	if rows == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(out)
		return
	}
	x32, in32 := c.x32[off:off+len(x)], c.in32[off:off+len(out)]
	for i, v := range x {
		x32[i] = float32(v)
	}
	blas32.Gemm(blas.NoTrans, t, 1,
		blas32.General{Rows: rows, Cols: k, Stride: k, Data: x32},
		blas32.General{Rows: w.Rows, Cols: w.Cols, Stride: w.Cols, Data: c.w32}, 0,
		blas32.General{Rows: rows, Cols: n, Stride: n, Data: in32})
	for i, v := range in32 {
		out[i] = float64(v)
	}
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
	if err := c.checkShapes(); err != nil {
		return err
	}
	hid, vis, err := c.halves()
	if err != nil {
		return fmt.Errorf("rbm: sweep %d: %w", c.sweeps+1, err)
	}
	if c.Float32 {
		w := c.Model.W.RawMatrix()
		if w.Stride != w.Cols {
			return fmt.Errorf("rbm: chains: Float32 needs contiguous weights (stride %d, %d columns)", w.Stride, w.Cols)
		}
		c.w32 = toFloat32(c.w32, w.Data[:w.Rows*w.Cols])
		n := c.Len() * max(hid.w, vis.w)
		if len(c.x32) < n {
			c.x32, c.in32 = make([]float32, n), make([]float32, n)
		}
	}
	err = forRanges(c.Len(), func(r0, r1 int) error {
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
// returned.
func (c *Chains) Run(ctx context.Context, n int, progress func(done, total int)) error {
	ctx = ContextOrDefault(ctx)
	last := time.Now()
	for k := 0; k < n; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.Sweep(); err != nil {
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

// toFloat32 converts x into buf (grown as needed).
func toFloat32(buf []float32, x []float64) []float32 {
	if cap(buf) < len(x) {
		buf = make([]float32, len(x))
	}
	buf = buf[:len(x)]
	for i, v := range x {
		buf[i] = float32(v)
	}
	return buf
}
