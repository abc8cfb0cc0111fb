package train

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Gradient holds a log-likelihood gradient (or any ascent direction)
// shaped like a model's parameters: one slice per parameter of each layer,
// in the order of the layer's ParamNames, and a matrix shaped like W.
type Gradient struct {
	Visible [][]float64
	Hidden  [][]float64
	W       *mat.Dense
}

func newGradient(m *rbm.RBM) *Gradient {
	r, c := m.W.Dims()
	return &Gradient{Visible: rbm.NewGrads(m.Visible), Hidden: rbm.NewGrads(m.Hidden), W: mat.NewDense(r, c, nil)}
}

// slices returns every slice of g in the order of modelParams.
func (g *Gradient) slices() [][]float64 {
	out := append(append([][]float64{}, g.Visible...), g.Hidden...)
	return append(out, g.W.RawMatrix().Data)
}

// modelParams returns views of every trainable slice of m (visible layer
// parameters, hidden layer parameters, weights) and their names.
func modelParams(m *rbm.RBM) ([][]float64, []string) {
	var ps [][]float64
	var names []string
	for _, side := range []struct {
		name string
		l    rbm.Layer
	}{{"visible", m.Visible}, {"hidden", m.Hidden}} {
		for k, p := range side.l.Params() {
			ps = append(ps, p)
			names = append(names, side.name+"."+side.l.ParamNames()[k])
		}
	}
	raw := m.W.RawMatrix()
	if raw.Stride != raw.Cols {
		panic("train: the weight matrix must be contiguous (stride = columns)")
	}
	return append(ps, raw.Data[:raw.Rows*raw.Cols]), append(names, "weights")
}

// isField reports whether a layer parameter is a field: a parameter that
// enters the potential as −θh, so that shifting the unit's input by δ is the
// same as adding δ to it (theta, theta_plus, theta_minus).
func isField(name string) bool { return strings.HasPrefix(name, "theta") }

// accumulator sums sign × weighted averages of the sufficient statistics of
// batches of visible states into a Gradient, with reusable buffers.
type accumulator struct {
	m          *rbm.RBM
	p          *products
	g          *Gradient
	vMean      []float64 // Σ sign·c·v (for centring)
	hMean      []float64 // Σ sign·c·⟨h|v⟩
	in, hm, hc []float64
	tmpV, tmpH [][]float64
	// A layer whose only parameter is a field θ (U ∋ −θx: binary, spin,
	// Potts, Poisson) has ∂Γ/∂θ = Γ′ (hidden) and −∂U/∂θ = x (visible):
	// its gradients are the means already computed, no layer call needed.
	visFieldOnly, hidFieldOnly bool
}

func fieldOnly(l rbm.Layer) bool {
	n := l.ParamNames()
	return len(n) == 1 && n[0] == "theta"
}

func newAccumulator(m *rbm.RBM, p *products) *accumulator {
	return &accumulator{m: m, p: p, g: newGradient(m),
		vMean: make([]float64, rbm.Width(m.Visible)), hMean: make([]float64, rbm.Width(m.Hidden)),
		tmpV: rbm.NewGrads(m.Visible), tmpH: rbm.NewGrads(m.Hidden),
		visFieldOnly: fieldOnly(m.Visible), hidFieldOnly: fieldOnly(m.Hidden)}
}

func (a *accumulator) reset() {
	for _, s := range a.g.slices() {
		clear(s)
	}
	clear(a.vMean)
	clear(a.hMean)
}

func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// phase adds sign × Σ_b c_b s(v_b) for the sufficient statistics s of the
// b rows of v (row-major, Width(Visible) columns): v_b ⟨h|v_b⟩ᵀ for W, the
// visible layer's GradLogWeight and the hidden layer's GradCGF at the inputs.
// coef nil means c_b = 1/b. in, when non-nil, holds the precomputed hidden
// inputs v·W.
func (a *accumulator) phase(v []float64, b int, coef []float64, sign float64, in []float64) {
	m := a.m
	nv, nh := rbm.Width(m.Visible), rbm.Width(m.Hidden)
	if in == nil {
		a.in = grow(a.in, b*nh)
		in = a.in
		a.p.hiddenInput(v, b, in)
	}
	a.hm = grow(a.hm, b*nh)
	m.Hidden.Mean(in, a.hm)
	hm := a.hm
	alpha := sign / float64(b)
	if coef != nil {
		a.hc = grow(a.hc, b*nh)
		for r := 0; r < b; r++ {
			for j := 0; j < nh; j++ {
				a.hc[r*nh+j] = coef[r] * hm[r*nh+j]
			}
		}
		hm, alpha = a.hc, sign
	}
	a.p.accumulate(alpha, v, hm, b, a.g.W.RawMatrix().Data)
	// Phase means of v and ⟨h|v⟩ (centring, and field-only gradients).
	vs := make([]float64, nv)
	hs := make([]float64, nh)
	for r := 0; r < b; r++ {
		c := 1 / float64(b)
		if coef != nil {
			c = coef[r]
		}
		for i, x := range v[r*nv : (r+1)*nv] {
			vs[i] += c * x
		}
		for j, x := range a.hm[r*nh : (r+1)*nh] {
			hs[j] += c * x
		}
	}
	for i, x := range vs {
		a.vMean[i] += sign * x
	}
	for j, x := range hs {
		a.hMean[j] += sign * x
	}
	switch {
	case a.visFieldOnly:
		addScaled(a.g.Visible, [][]float64{vs}, sign)
	case coef == nil:
		m.Visible.GradLogWeight(v, a.tmpV)
		addScaled(a.g.Visible, a.tmpV, sign)
	default: // the layer gradients are batch means: weighted rows one by one
		for r := 0; r < b; r++ {
			m.Visible.GradLogWeight(v[r*nv:(r+1)*nv], a.tmpV)
			addScaled(a.g.Visible, a.tmpV, sign*coef[r])
		}
	}
	switch {
	case a.hidFieldOnly:
		addScaled(a.g.Hidden, [][]float64{hs}, sign)
	case coef == nil:
		m.Hidden.GradCGF(in, a.tmpH)
		addScaled(a.g.Hidden, a.tmpH, sign)
	default:
		for r := 0; r < b; r++ {
			m.Hidden.GradCGF(in[r*nh:(r+1)*nh], a.tmpH)
			addScaled(a.g.Hidden, a.tmpH, sign*coef[r])
		}
	}
}

func addScaled(dst, src [][]float64, s float64) {
	for p := range dst {
		for k, x := range src[p] {
			dst[p][k] += s * x
		}
	}
}

func general(d []float64, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: d[:rows*cols]}
}

// normalisedCoef returns c_b = w_b / Σw (nil for nil weights).
func normalisedCoef(w []float64) ([]float64, error) {
	if w == nil {
		return nil, nil
	}
	tot := 0.0
	for i, x := range w {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("train: weight %d is %v (want finite, ≥ 0)", i, x)
		}
		tot += x
	}
	if !(tot > 0) {
		return nil, fmt.Errorf("train: weights sum to %v", tot)
	}
	c := make([]float64, len(w))
	for i, x := range w {
		c[i] = x / tot
	}
	return c, nil
}

// LogLikelihoodGradient returns the gradient of the average log-likelihood
// ⟨log P(v)⟩_data with respect to every parameter of m: the data average
// minus the model average of the sufficient statistics (v⟨h|v⟩ᵀ for W, the
// visible layer's −∂U/∂ξ, the hidden layer's ∂Γ/∂ξ). The model average is
// taken over the rows of model with weights modelWeights: samples from
// Markov chains (nil weights), or every visible state weighted by its exact
// probability, which gives the exact gradient. Weights are normalised to sum
// to one; nil means uniform.
func LogLikelihoodGradient(m *rbm.RBM, data *mat.Dense, dataWeights []float64, model *mat.Dense, modelWeights []float64) (*Gradient, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("train: LogLikelihoodGradient: %w", err)
	}
	acc := newAccumulator(m, newProducts(m, false))
	for _, ph := range []struct {
		name string
		x    *mat.Dense
		w    []float64
		sign float64
	}{{"data", data, dataWeights, 1}, {"model", model, modelWeights, -1}} {
		b, c := ph.x.Dims()
		if c != rbm.Width(m.Visible) {
			return nil, fmt.Errorf("train: LogLikelihoodGradient: %s has %d columns, the visible layer needs %d", ph.name, c, rbm.Width(m.Visible))
		}
		if ph.w != nil && len(ph.w) != b {
			return nil, fmt.Errorf("train: LogLikelihoodGradient: %d %s weights for %d rows", len(ph.w), ph.name, b)
		}
		coef, err := normalisedCoef(ph.w)
		if err != nil {
			return nil, fmt.Errorf("train: LogLikelihoodGradient: %s: %w", ph.name, err)
		}
		acc.phase(mat.DenseCopyOf(ph.x).RawMatrix().Data, b, coef, ph.sign, nil)
	}
	return acc.g, nil
}
