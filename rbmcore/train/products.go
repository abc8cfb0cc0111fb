package train

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// buf is a row-major matrix buffer of the trainer (states, inputs, means)
// with, under Options.Float32, a float32 shadow of the same shape. Workers
// own disjoint row ranges of a buf, so no buffer is shared between them.
type buf struct {
	f    []float64
	s    []float32 // float32 shadow (nil in float64)
	cols int
}

func newBuf(rows, cols int, f32 bool) *buf {
	b := &buf{f: make([]float64, rows*cols), cols: cols}
	if f32 {
		b.s = make([]float32, rows*cols)
	}
	return b
}

// view returns a buf sharing rows [r0, r1) of b.
func (b *buf) view(r0, r1 int) *buf {
	v := &buf{f: b.f[r0*b.cols : r1*b.cols], cols: b.cols}
	if b.s != nil {
		v.s = b.s[r0*b.cols : r1*b.cols]
	}
	return v
}

// rows returns the float64 view of rows [r0, r1).
func (b *buf) rows(r0, r1 int) []float64 { return b.f[r0*b.cols : r1*b.cols] }

// sync32 copies rows [r0, r1) into the float32 shadow (no-op in float64).
func (b *buf) sync32(r0, r1 int) {
	if b.s == nil {
		return
	}
	dst := b.s[r0*b.cols : r1*b.cols]
	for k, x := range b.f[r0*b.cols : r1*b.cols] {
		dst[k] = float32(x)
	}
}

// products computes the matrix products of training with the model's
// weights: in float64; or (Options.Float32) all in float32 with a float32
// shadow copy of W refreshed after every update; or, in float64 runs of
// models whose two layers are binary or spin (vis32), with the visible
// inputs h·Wᵀ alone in float32 from the shadow, whose samples a
// certificate makes identical to those of float64 products (see
// sampler.visCert). Layers always see float64.
//
// Every product works on a range of its output, so that workers.ForRanges
// can give each core its own share, with BLAS single-threaded inside each
// worker: rows of the weight gradient (visible units), columns of the
// hidden and visible inputs. With gonum's pure-Go BLAS an output element
// does not depend on how the ranges are cut, so results do not depend on
// the number of cores; OpenBLAS picks kernels by shape and thread count,
// so there the split (the number of cores) changes the last bits.
type products struct {
	m      *rbm.RBM
	all32  bool      // every product in float32 (Options.Float32)
	w32    []float32 // float32 shadow of W (nil when every product is float64)
	absRow []float64 // with w32: Σ_j |w_ij| of every visible unit i
	g32    []float32 // float32 weight-gradient rows (all32 only)
	nv, nh int
}

func newProducts(m *rbm.RBM, all32, vis32 bool) *products {
	p := &products{m: m, all32: all32, nv: rbm.Width(m.Visible), nh: rbm.Width(m.Hidden)}
	if all32 {
		p.g32 = make([]float32, p.nv*p.nh)
	}
	if all32 || vis32 {
		p.w32 = make([]float32, p.nv*p.nh)
		p.absRow = make([]float64, p.nv)
		p.refresh(m.W.RawMatrix().Data, 0, p.nv)
	}
	return p
}

// refresh copies rows [i0, i1) of the weights w (W's array, or the one
// about to become W's) into the float32 shadow and sets their absRow (no-op
// without a shadow), in the lane order of sgdShadow (shadowRows).
func (p *products) refresh(w []float64, i0, i1 int) {
	if w32, abs := p.shadow(i0, i1); w32 != nil {
		shadowRows(w[i0*p.nh:i1*p.nh], w32, abs, p.nh)
	}
}

// shadow returns the float32 shadow and the absRow entries of rows
// [i0, i1), or nil, nil without a shadow.
func (p *products) shadow(i0, i1 int) ([]float32, []float64) {
	if p.w32 == nil {
		return nil, nil
	}
	return p.w32[i0*p.nh : i1*p.nh], p.absRow[i0:i1]
}

// visibleInput returns the float64 input h_r·w_u of visible unit u given
// row r of the hidden states h (the exact value a certified float32 input
// stands for).
func (p *products) visibleInput(h *buf, r, u int) float64 {
	s := 0.0
	w := p.m.W.RawMatrix().Data[u*p.nh : (u+1)*p.nh]
	for j, x := range h.f[r*p.nh : (r+1)*p.nh] {
		s += x * w[j]
	}
	return s
}

// inputs sets columns [c0, c1) of the first rows rows of out to those of
// x·W, the hidden units' inputs given visible states x (toVisible false:
// x has nv columns, out nh), or of x·Wᵀ, the visible units' inputs given
// hidden states (toVisible true: x has nh columns, out nv). With f32 the
// product runs in float32 on the shadows of x (which must be current) and
// W, into out's shadow, converted to float64 only when every product is
// float32 (certified visible inputs are sampled from the float32 values).
//
// The products are split by columns of the output, that is by columns of
// W or by rows of W, not by rows of x: each core then packs only its share
// of W. With the 50-row halves of a 100-row batch, packing all of W made
// the products about half as fast per flop (OpenBLAS, this machine).
func (p *products) inputs(x *buf, rows, c0, c1 int, toVisible, f32 bool, out *buf) {
	if c1 <= c0 || rows <= 0 {
		return
	}
	// out has n columns, x has k; W's part is columns [c0, c1) of W, or
	// rows [c0, c1) of W transposed: r×c values at offsets [lo, hi).
	k, n, t := p.nv, p.nh, blas.NoTrans
	r, c, lo, hi := p.nv, c1-c0, c0, (p.nv-1)*p.nh+c1
	if toVisible {
		k, n, t = p.nh, p.nv, blas.Trans
		r, c, lo, hi = c1-c0, p.nh, c0*p.nh, c1*p.nh
	}
	if !f32 {
		w := blas64.General{Rows: r, Cols: c, Stride: p.nh, Data: p.m.W.RawMatrix().Data[lo:hi]}
		blas64.Gemm(blas.NoTrans, t, 1, general(x.f, rows, k), w, 0, columns(out.f, rows, n, c0, c1))
		return
	}
	w := blas32.General{Rows: r, Cols: c, Stride: p.nh, Data: p.w32[lo:hi]}
	blas32.Gemm(blas.NoTrans, t, 1, general32(x.s, rows, k), w, 0, blas32.General{Rows: rows, Cols: c1 - c0, Stride: n, Data: out.s[c0 : (rows-1)*n+c1]})
	if !p.all32 {
		return
	}
	for row := 0; row < rows; row++ {
		for j, y := range out.s[row*n+c0 : row*n+c1] {
			out.f[row*n+c0+j] = float64(y)
		}
	}
}

// inputCols is the column block of allInputs: ranges of multiples of 8
// columns keep every range's rows 64-byte aligned.
const inputCols = 8

// allInputs sets the first rows rows of out to x·W (toVisible false) or
// x·Wᵀ, column ranges on the cores (workers.ForRanges); see inputs.
func (p *products) allInputs(x *buf, rows int, toVisible, f32 bool, out *buf) error {
	return workers.ForRanges(out.cols, inputCols, func(c0, c1 int) error {
		p.inputs(x, rows, c0, c1, toVisible, f32, out)
		return nil
	})
}

// term is one contribution vᵀh to the weight gradient: v has rows×nv
// entries, h rows×nh.
type term struct {
	v, h *buf
	rows int
}

// outer sets rows [i0, i1) (visible units) of g (nv×nh) to the sum of the
// terms' vᵀh. In float32 the shadows of v and h must be current.
func (p *products) outer(i0, i1 int, terms []term, g []float64) {
	cols := i1 - i0
	if cols <= 0 {
		return
	}
	out := g[i0*p.nh : i1*p.nh]
	if p.g32 == nil {
		beta := 0.0
		for _, t := range terms {
			if t.rows > 0 {
				blas64.Gemm(blas.Trans, blas.NoTrans, 1, columns(t.v.f, t.rows, p.nv, i0, i1), general(t.h.f, t.rows, p.nh), beta, general(out, cols, p.nh))
				beta = 1
			}
		}
		if beta == 0 {
			clear(out)
		}
		return
	}
	o32 := p.g32[i0*p.nh : i1*p.nh]
	first := true
	for _, t := range terms {
		if t.rows == 0 {
			continue
		}
		blas32.Gemm(blas.Trans, blas.NoTrans, 1,
			blas32.General{Rows: t.rows, Cols: cols, Stride: p.nv, Data: t.v.s[i0 : (t.rows-1)*p.nv+i1]},
			general32(t.h.s, t.rows, p.nh), 0, general32(o32, cols, p.nh))
		if first {
			for k, y := range o32 {
				out[k] = float64(y)
			}
		} else {
			for k, y := range o32 {
				out[k] += float64(y)
			}
		}
		first = false
	}
	if first {
		clear(out)
	}
}

func general(d []float64, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: d[:rows*cols]}
}

// columns is the rows×(c1−c0) block of columns [c0, c1) of d (rows×cols).
func columns(d []float64, rows, cols, c0, c1 int) blas64.General {
	return blas64.General{Rows: rows, Cols: c1 - c0, Stride: cols, Data: d[c0 : (rows-1)*cols+c1]}
}

func general32(d []float32, rows, cols int) blas32.General {
	return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: d[:rows*cols]}
}
