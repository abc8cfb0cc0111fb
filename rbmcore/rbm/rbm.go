package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// RBM is a Restricted Boltzmann Machine with a visible and a hidden layer
// coupled by W: E(v, h) = U_v(v) + U_h(h) - vᵀ W h, with v and h in their
// one-hot row coding, so W is Width(Visible)×Width(Hidden): N×M, or (N·q)×M
// for a Potts visible layer with row i*q+a for colour a of unit i (and
// columns µ*q+b for a Potts hidden layer).
//
// The zero value is not usable; build one with New or Load.
type RBM struct {
	Visible, Hidden Layer
	W               *mat.Dense
}

// options collects what New accepts.
type options struct {
	seed  uint64
	scale float64
}

// Option configures New.
type Option func(*options)

// Seed sets the seed of the random initial weights (default 1).
func Seed(s uint64) Option { return func(o *options) { o.seed = s } }

// WeightScale sets the standard deviation of the Gaussian initial weights
// (default 0.01; 0 gives zero weights).
func WeightScale(s float64) Option { return func(o *options) { o.scale = s } }

// NewRNG returns the random generator used throughout rbmcore (PCG,
// seeded; stream selects an independent sequence for the same seed).
func NewRNG(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// New returns an RBM over the given layers with i.i.d. N(0, scale²) weights
// (see WeightScale and Seed). For Potts layers the initial weights are put
// in the zero-sum gauge. The layers are used as given (not copied).
func New(visible, hidden Layer, opts ...Option) *RBM {
	o := options{seed: 1, scale: 0.01}
	for _, f := range opts {
		f(&o)
	}
	nv, nh := Width(visible), Width(hidden)
	w := mat.NewDense(max(nv, 1), max(nh, 1), nil)
	if nv == 0 || nh == 0 {
		w = &mat.Dense{}
	} else if o.scale != 0 {
		rng := NewRNG(o.seed, 0)
		raw := w.RawMatrix().Data
		for i := range raw {
			raw[i] = o.scale * rng.NormFloat64()
		}
		centreWeights(w, visible.States(), hidden.States())
	}
	return &RBM{Visible: visible, Hidden: hidden, W: w}
}

// centreWeights subtracts from W the mean over the colours of each Potts
// unit (rows in blocks of qv, then columns in blocks of qh) and returns the
// amounts removed per column (rowShift, length cols) and per row (colShift,
// length rows): the input shifts they cause on the other layer.
func centreWeights(w *mat.Dense, qv, qh int) (hiddenShift, visibleShift []float64) {
	r, c := w.Dims()
	hiddenShift = make([]float64, c)
	visibleShift = make([]float64, r)
	if qv > 1 {
		for i := 0; i < r; i += qv {
			for j := 0; j < c; j++ {
				m := 0.0
				for a := 0; a < qv; a++ {
					m += w.At(i+a, j)
				}
				m /= float64(qv)
				for a := 0; a < qv; a++ {
					w.Set(i+a, j, w.At(i+a, j)-m)
				}
				hiddenShift[j] += m
			}
		}
	}
	if qh > 1 {
		for i := 0; i < r; i++ {
			for j := 0; j < c; j += qh {
				m := 0.0
				for b := 0; b < qh; b++ {
					m += w.At(i, j+b)
				}
				m /= float64(qh)
				for b := 0; b < qh; b++ {
					w.Set(i, j+b, w.At(i, j+b)-m)
				}
				visibleShift[i] += m
			}
		}
	}
	return hiddenShift, visibleShift
}

// shiftFields adds delta (one value per column of the layer's batch row) to
// every field parameter (theta, theta_plus, theta_minus) of l.
func shiftFields(l Layer, delta []float64) {
	names := l.ParamNames()
	for p, ps := range l.Params() {
		if isFieldName(names[p]) {
			for k := range ps {
				ps[k] += delta[k]
			}
		}
	}
}

// ZeroSumGauge puts the Potts layers of m in the zero-sum gauge
// Σ_a w_{ia,µ} = 0 and Σ_a θ_ia = 0 (the gauge Tubiana, Cocco & Monasson 2019 recommend) without
// changing the distribution: the removed colour means of the weights are
// absorbed into the fields of the other layer. It does nothing when neither
// layer is Potts.
func (m *RBM) ZeroSumGauge() {
	qv, qh := m.Visible.States(), m.Hidden.States()
	if qv == 1 && qh == 1 {
		return
	}
	// A constant c added to the input of every colour of a Potts unit
	// changes nothing but log Z, so the shift of rows (qv) only matters for
	// the hidden side and vice versa; centreWeights returns exactly the
	// input shifts each side must absorb.
	hs, vs := centreWeights(m.W, qv, qh)
	if qv > 1 {
		shiftFields(m.Hidden, hs)
	}
	if qh > 1 {
		shiftFields(m.Visible, vs)
	}
	ZeroSumFields(m.Visible)
	ZeroSumFields(m.Hidden)
}

// ZeroSumFields subtracts from the fields of every unit of a layer with
// colours (States() > 1, e.g. Potts) their mean over the colours, so that
// Σ_a θ_ia = 0. This changes the layer's distribution only through its
// normalisation. Layers of scalar units are left alone.
func ZeroSumFields(l Layer) {
	q := l.States()
	if q < 2 {
		return
	}
	names := l.ParamNames()
	for p, ps := range l.Params() {
		if !isFieldName(names[p]) {
			continue
		}
		for i := 0; i+q <= len(ps); i += q {
			s := 0.0
			for _, v := range ps[i : i+q] {
				s += v
			}
			for a := range ps[i : i+q] {
				ps[i+a] -= s / float64(q)
			}
		}
	}
}

// isFieldName reports whether a parameter name is a field (theta,
// theta_plus, theta_minus): the parameters that multiply h linearly.
func isFieldName(name string) bool { return len(name) >= 5 && name[:5] == "theta" }

// Validate checks the layers' parameters and that W has the shape
// Width(Visible)×Width(Hidden) with finite entries.
func (m *RBM) Validate() error {
	if m.Visible == nil || m.Hidden == nil || m.W == nil {
		return fmt.Errorf("rbm: model has a nil layer or weight matrix")
	}
	if err := m.Visible.Validate(); err != nil {
		return fmt.Errorf("visible: %w", err)
	}
	if err := m.Hidden.Validate(); err != nil {
		return fmt.Errorf("hidden: %w", err)
	}
	r, c := m.W.Dims()
	if r != Width(m.Visible) || c != Width(m.Hidden) {
		return fmt.Errorf("rbm: weights are %d×%d, layers need %d×%d", r, c, Width(m.Visible), Width(m.Hidden))
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := m.W.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("rbm: weights[%d][%d] = %v is not finite", i, j, v)
			}
		}
	}
	return nil
}

// Clone returns a deep copy of m.
func (m *RBM) Clone() *RBM {
	return &RBM{Visible: m.Visible.Clone(), Hidden: m.Hidden.Clone(), W: mat.DenseCopyOf(m.W)}
}

// String summarises the model, e.g. "RBM binary(784) × relu(500)".
func (m *RBM) String() string {
	name := func(l Layer) string {
		if l.States() > 1 {
			return fmt.Sprintf("%s(%d, q=%d)", l.Kind(), l.Len(), l.States())
		}
		return fmt.Sprintf("%s(%d)", l.Kind(), l.Len())
	}
	return "RBM " + name(m.Visible) + " × " + name(m.Hidden)
}

// gemm sets c = a·w (transW false) or a·wᵀ (transW true) on raw row-major
// slices: a is rows×k, c is rows×n.
func gemm(a []float64, rows int, w blas64.General, transW bool, c []float64) {
	k, n := w.Rows, w.Cols
	t := blas.NoTrans
	if transW {
		k, n = n, k
		t = blas.Trans
	}
	if rows == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:rows*n])
		return
	}
	blas64.Gemm(blas.NoTrans, t, 1,
		blas64.General{Rows: rows, Cols: k, Stride: k, Data: a}, w, 0,
		blas64.General{Rows: rows, Cols: n, Stride: n, Data: c})
}

// rowsData returns the contiguous row-major data of x, checking its width.
func rowsData(x *mat.Dense, width int, what string) ([]float64, int) {
	r, c := x.Dims()
	if c != width {
		panic(fmt.Sprintf("rbm: %s has %d columns, the layer width is %d", what, c, width))
	}
	raw := x.RawMatrix()
	if raw.Stride == c {
		return raw.Data[:r*c], r
	}
	return mat.DenseCopyOf(x).RawMatrix().Data, r
}

// HiddenInput returns I = v·W (B×Width(Hidden)) for visible states v.
func (m *RBM) HiddenInput(v *mat.Dense) *mat.Dense {
	d, b := rowsData(v, Width(m.Visible), "visible batch")
	out := make([]float64, b*Width(m.Hidden))
	gemm(d, b, m.W.RawMatrix(), false, out)
	return mat.NewDense(b, Width(m.Hidden), out)
}

// VisibleInput returns I = h·Wᵀ (B×Width(Visible)) for hidden states h.
func (m *RBM) VisibleInput(h *mat.Dense) *mat.Dense {
	d, b := rowsData(h, Width(m.Hidden), "hidden batch")
	out := make([]float64, b*Width(m.Visible))
	gemm(d, b, m.W.RawMatrix(), true, out)
	return mat.NewDense(b, Width(m.Visible), out)
}

func apply(in *mat.Dense, f func(in, out []float64)) *mat.Dense {
	r, c := in.Dims()
	out := mat.NewDense(r, c, nil)
	f(in.RawMatrix().Data, out.RawMatrix().Data)
	return out
}

// MeanHidden returns E[h | v] for each row of v.
func (m *RBM) MeanHidden(v *mat.Dense) *mat.Dense { return apply(m.HiddenInput(v), m.Hidden.Mean) }

// MeanVisible returns E[v | h] for each row of h.
func (m *RBM) MeanVisible(h *mat.Dense) *mat.Dense { return apply(m.VisibleInput(h), m.Visible.Mean) }

// ModeHidden returns the most probable h given each row of v.
func (m *RBM) ModeHidden(v *mat.Dense) *mat.Dense { return apply(m.HiddenInput(v), m.Hidden.Mode) }

// ModeVisible returns the most probable v given each row of h.
func (m *RBM) ModeVisible(h *mat.Dense) *mat.Dense { return apply(m.VisibleInput(h), m.Visible.Mode) }

// SampleHidden draws h ~ P(h | v) for each row of v.
func (m *RBM) SampleHidden(rng *rand.Rand, v *mat.Dense) (*mat.Dense, error) {
	in := m.HiddenInput(v)
	out := mat.NewDense(in.RawMatrix().Rows, Width(m.Hidden), nil)
	err := m.Hidden.Sample(rng, in.RawMatrix().Data, out.RawMatrix().Data, 1)
	return out, err
}

// SampleVisible draws v ~ P(v | h) for each row of h.
func (m *RBM) SampleVisible(rng *rand.Rand, h *mat.Dense) (*mat.Dense, error) {
	in := m.VisibleInput(h)
	out := mat.NewDense(in.RawMatrix().Rows, Width(m.Visible), nil)
	err := m.Visible.Sample(rng, in.RawMatrix().Data, out.RawMatrix().Data, 1)
	return out, err
}

// FreeEnergy returns F(v) = U_v(v) - Σ_µ Γ_µ(I_µ(v)) for each row of v, so
// that P(v) = exp(-F(v))/Z.
func (m *RBM) FreeEnergy(v *mat.Dense) []float64 {
	d, b := rowsData(v, Width(m.Visible), "visible batch")
	in := m.HiddenInput(v)
	f := make([]float64, b)
	g := make([]float64, b)
	m.Visible.Energy(d, f)
	m.Hidden.CGF(in.RawMatrix().Data, g)
	for k := range f {
		f[k] -= g[k]
	}
	return f
}

// Energy returns E(v, h) = U_v(v) + U_h(h) - vᵀWh for each pair of rows.
func (m *RBM) Energy(v, h *mat.Dense) []float64 {
	dv, b := rowsData(v, Width(m.Visible), "visible batch")
	dh, bh := rowsData(h, Width(m.Hidden), "hidden batch")
	if b != bh {
		panic(fmt.Sprintf("rbm: Energy: %d visible rows, %d hidden rows", b, bh))
	}
	in := m.HiddenInput(v).RawMatrix().Data
	e := make([]float64, b)
	eh := make([]float64, b)
	m.Visible.Energy(dv, e)
	m.Hidden.Energy(dh, eh)
	nh := Width(m.Hidden)
	for r := 0; r < b; r++ {
		s := 0.0
		for j, x := range dh[r*nh : (r+1)*nh] {
			s += x * in[r*nh+j]
		}
		e[r] += eh[r] - s
	}
	return e
}
