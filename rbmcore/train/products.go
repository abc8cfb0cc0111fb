package train

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// products computes the matrix products of training with the model's
// weights, in float64 or (Trainer.Float32) in float32 with a float32 shadow
// copy of W refreshed after every update. Layers always see float64.
type products struct {
	m      *rbm.RBM
	f32    bool
	w32    []float32
	a, b   []float32
	c      []float32
	nv, nh int
}

func newProducts(m *rbm.RBM, f32 bool) *products {
	p := &products{m: m, f32: f32, nv: rbm.Width(m.Visible), nh: rbm.Width(m.Hidden)}
	if f32 {
		p.w32 = make([]float32, p.nv*p.nh)
		p.refresh()
	}
	return p
}

// refresh copies W into the float32 shadow (no-op in float64).
func (p *products) refresh() {
	if !p.f32 {
		return
	}
	for k, x := range p.m.W.RawMatrix().Data[:p.nv*p.nh] {
		p.w32[k] = float32(x)
	}
}

func grow32(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func to32(dst []float32, src []float64) {
	for k, x := range src {
		dst[k] = float32(x)
	}
}

// hiddenInput sets out (rows×nh) = v·W for v of rows×nv.
func (p *products) hiddenInput(v []float64, rows int, out []float64) {
	p.input(v, rows, p.nv, p.nh, blas.NoTrans, out)
}

// visibleInput sets out (rows×nv) = h·Wᵀ for h of rows×nh.
func (p *products) visibleInput(h []float64, rows int, out []float64) {
	p.input(h, rows, p.nh, p.nv, blas.Trans, out)
}

func (p *products) input(x []float64, rows, k, n int, t blas.Transpose, out []float64) {
	if !p.f32 {
		blas64.Gemm(blas.NoTrans, t, 1, general(x, rows, k), p.m.W.RawMatrix(), 0, general(out, rows, n))
		return
	}
	p.a = grow32(p.a, rows*k)
	p.c = grow32(p.c, rows*n)
	to32(p.a, x[:rows*k])
	blas32.Gemm(blas.NoTrans, t, 1, general32(p.a, rows, k), blas32.General{Rows: p.nv, Cols: p.nh, Stride: p.nh, Data: p.w32}, 0, general32(p.c, rows, n))
	for i, y := range p.c {
		out[i] = float64(y)
	}
}

// accumulate adds alpha·vᵀh (nv×nh) to g for v of rows×nv and h of rows×nh.
func (p *products) accumulate(alpha float64, v, h []float64, rows int, g []float64) {
	if !p.f32 {
		blas64.Gemm(blas.Trans, blas.NoTrans, alpha, general(v, rows, p.nv), general(h, rows, p.nh), 1, general(g, p.nv, p.nh))
		return
	}
	p.a = grow32(p.a, rows*p.nv)
	p.b = grow32(p.b, rows*p.nh)
	p.c = grow32(p.c, p.nv*p.nh)
	to32(p.a, v[:rows*p.nv])
	to32(p.b, h[:rows*p.nh])
	blas32.Gemm(blas.Trans, blas.NoTrans, 1, general32(p.a, rows, p.nv), general32(p.b, rows, p.nh), 0, general32(p.c, p.nv, p.nh))
	for k, y := range p.c {
		g[k] += alpha * float64(y)
	}
}

func general32(d []float32, rows, cols int) blas32.General {
	return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: d[:rows*cols]}
}
