package train

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Gradient holds a log-likelihood gradient (or any ascent direction)
// shaped like a model's parameters: one slice per parameter of each layer,
// in the order of the layer's ParamNames, and a matrix shaped like W.
type Gradient struct {
	Visible [][]float64 // the visible layer's parameters
	Hidden  [][]float64 // the hidden layer's parameters
	W       *mat.Dense  // the weights
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

// phase is one side of the gradient: a batch of visible states (the data,
// or the model's samples) with their hidden inputs and means, weighted by
// coef (normalised to sum 1; nil means 1/rows each). sign is +1 for the
// data and −1 for the model. The buffers may have room for more rows than
// the current batch (a short last minibatch): the weighted means hw of the
// spare rows are kept at zero (zeroTail), so a product over all rows adds
// nothing for them.
type phase struct {
	v, in, hm *buf
	hw        *buf      // sign·c_b·⟨h|v_b⟩: the right factor of the weight gradient
	vs, hs    []float64 // the phase means Σ_b c_b v_b and Σ_b c_b ⟨h|v_b⟩
	coef      []float64
	rows      int
	sign      float64
	// With a hidden layer that computes its means and the terms of its
	// CGF gradient together (rbm.MeanGrader), gt holds those terms, one
	// slice of capacity()×nh values per hidden parameter, set by means
	// with the means (nil: the gradient comes from GradCGF).
	gt     [][]float64
	grader rbm.MeanGrader
}

// newPhase returns a phase of rows rows with new buffers, except for the
// visible states when v is not nil (rows×nv values, used in place).
func newPhase(v []float64, rows, nv, nh int, f32 bool, sign float64) *phase {
	vb := &buf{f: v, cols: nv}
	if v == nil {
		vb.f = make([]float64, rows*nv)
	}
	if f32 {
		vb.s = make([]float32, rows*nv)
	}
	return &phase{v: vb, in: newBuf(rows, nh, f32), hm: newBuf(rows, nh, false), hw: newBuf(rows, nh, f32),
		vs: make([]float64, nv), hs: make([]float64, nh), rows: rows, sign: sign}
}

// slice returns the phase made of rows [r0, r1) of ph's buffers (views).
func (ph *phase) slice(r0, r1 int, sign float64) *phase {
	s := &phase{v: ph.v.view(r0, r1), in: ph.in.view(r0, r1), hm: ph.hm.view(r0, r1), hw: ph.hw.view(r0, r1),
		vs: make([]float64, len(ph.vs)), hs: make([]float64, len(ph.hs)), rows: r1 - r0, sign: sign, grader: ph.grader}
	if ph.gt != nil {
		nh := ph.hm.cols
		s.gt = make([][]float64, len(ph.gt))
		for p, g := range ph.gt {
			s.gt[p] = g[r0*nh : r1*nh]
		}
	}
	return s
}

// fuseGradTerms makes means compute the terms of the hidden layer's CGF
// gradient with the means when the layer can (rbm.MeanGrader) and its
// gradient is not simply the means (a field-only layer), so that add
// needs no second pass over the inputs. The Gibbs methods use it: their
// phases are as large as a minibatch and a set of chains.
func (ph *phase) fuseGradTerms(hidden rbm.Layer) {
	mg, ok := hidden.(rbm.MeanGrader)
	if !ok || fieldOnly(hidden) {
		return
	}
	ph.grader = mg
	ph.gt = make([][]float64, len(hidden.Params()))
	for p := range ph.gt {
		ph.gt[p] = make([]float64, ph.capacity()*ph.hm.cols)
	}
}

// sumColumns sets the phase means of the visible columns [i0, i1) and the
// hidden columns [j0, j1). Each column is summed over the rows in order,
// so the means do not depend on how the columns are split.
func (ph *phase) sumColumns(i0, i1, j0, j1 int) {
	colSums(ph.vs, ph.v.f, len(ph.vs), ph.rows, ph.coef, i0, i1)
	colSums(ph.hs, ph.hm.f, len(ph.hs), ph.rows, ph.coef, j0, j1)
}

// capacity returns the number of rows the buffers hold.
func (ph *phase) capacity() int { return len(ph.hw.f) / ph.hw.cols }

// means sets rows [r0, r1) of the hidden means from the inputs, their
// weighted copies hw and the float32 shadows.
func (ph *phase) means(hidden rbm.Layer, r0, r1 int) {
	if r1 <= r0 {
		return
	}
	nh := ph.hm.cols
	if ph.gt != nil {
		terms := make([][]float64, len(ph.gt))
		for p, g := range ph.gt {
			terms[p] = g[r0*nh : r1*nh]
		}
		ph.grader.MeanGrad(ph.in.rows(r0, r1), ph.hm.rows(r0, r1), terms)
	} else {
		hidden.Mean(ph.in.rows(r0, r1), ph.hm.rows(r0, r1))
	}
	c := ph.sign / float64(ph.rows)
	for r := r0; r < r1; r++ {
		if ph.coef != nil {
			c = ph.sign * ph.coef[r]
		}
		for j, x := range ph.hm.f[r*nh : (r+1)*nh] {
			ph.hw.f[r*nh+j] = c * x
		}
	}
	ph.hw.sync32(r0, r1)
}

// zeroTail clears the weighted means of the rows beyond the current batch.
func (ph *phase) zeroTail() {
	clear(ph.hw.f[ph.rows*ph.hw.cols:])
	if ph.hw.s != nil {
		clear(ph.hw.s[ph.rows*ph.hw.cols:])
	}
}

// term returns the phase's contribution to the weight gradient (all rows
// of its buffers).
func (ph *phase) term() term {
	return term{v: ph.v, h: ph.hw, rows: ph.capacity()}
}

// fill computes the whole phase's inputs and means (PT, Exact,
// LogLikelihoodGradient).
func (ph *phase) fill(p *products) error {
	ph.v.sync32(0, ph.rows)
	if err := p.allInputs(ph.v, ph.rows, false, p.all32, ph.in); err != nil {
		return err
	}
	ph.means(p.m.Hidden, 0, ph.rows)
	return nil
}

// layerGrads holds the layers' part of a gradient and the phase means.
type layerGrads struct {
	m          *rbm.RBM
	vis, hid   [][]float64 // Σ sign × batch mean of the layers' statistics
	vMean      []float64   // Σ sign·c·v (for centring)
	hMean      []float64   // Σ sign·c·⟨h|v⟩
	tmpV, tmpH [][]float64
	// A layer whose only parameter is a field θ (U ∋ −θx: binary, spin,
	// Potts, Poisson) has ∂Γ/∂θ = Γ′ (hidden) and −∂U/∂θ = x (visible):
	// its gradients are the phase means, no layer call needed.
	visFieldOnly, hidFieldOnly bool
}

func fieldOnly(l rbm.Layer) bool {
	n := l.ParamNames()
	return len(n) == 1 && n[0] == "theta"
}

func newLayerGrads(m *rbm.RBM) *layerGrads {
	nv, nh := rbm.Width(m.Visible), rbm.Width(m.Hidden)
	return &layerGrads{m: m, vis: rbm.NewGrads(m.Visible), hid: rbm.NewGrads(m.Hidden),
		vMean: make([]float64, nv), hMean: make([]float64, nh),
		tmpV: rbm.NewGrads(m.Visible), tmpH: rbm.NewGrads(m.Hidden),
		visFieldOnly: fieldOnly(m.Visible), hidFieldOnly: fieldOnly(m.Hidden)}
}

func (a *layerGrads) reset() {
	for _, s := range append(append([][]float64{a.vMean, a.hMean}, a.vis...), a.hid...) {
		clear(s)
	}
}

// add adds the phase's layer statistics: sign × Σ_b c_b s(v_b) for the
// visible layer's GradLogWeight and the hidden layer's GradCGF at the
// inputs, and the phase means (ph.vs, ph.hs, which sumColumns must have
// set) to vMean and hMean.
func (a *layerGrads) add(ph *phase) {
	m := a.m
	b, sign, coef := ph.rows, ph.sign, ph.coef
	nv, nh := len(ph.vs), len(ph.hs)
	v, in := ph.v.f[:b*nv], ph.in.f[:b*nh]
	for i, x := range ph.vs {
		a.vMean[i] += sign * x
	}
	for j, x := range ph.hs {
		a.hMean[j] += sign * x
	}
	switch {
	case a.visFieldOnly:
		addScaled(a.vis, [][]float64{ph.vs}, sign)
	case coef == nil:
		m.Visible.GradLogWeight(v, a.tmpV)
		addScaled(a.vis, a.tmpV, sign)
	default: // the layer gradients are batch means: weighted rows one by one
		for r := 0; r < b; r++ {
			m.Visible.GradLogWeight(v[r*nv:(r+1)*nv], a.tmpV)
			addScaled(a.vis, a.tmpV, sign*coef[r])
		}
	}
	switch {
	case a.hidFieldOnly:
		addScaled(a.hid, [][]float64{ph.hs}, sign)
	case ph.gt != nil:
		a.addTerms(ph)
	case coef == nil:
		m.Hidden.GradCGF(in, a.tmpH)
		addScaled(a.hid, a.tmpH, sign)
	default:
		for r := 0; r < b; r++ {
			m.Hidden.GradCGF(in[r*nh:(r+1)*nh], a.tmpH)
			addScaled(a.hid, a.tmpH, sign*coef[r])
		}
	}
}

// addTerms adds sign × Σ_b c_b t_b for the gradient terms t of the hidden
// layer that means stored (phase.gt), in the order and with the roundings
// of GradCGF followed by addScaled: each unit's sum over the rows in order,
// times 1/rows, for uniform rows; one row at a time for weighted ones.
func (a *layerGrads) addTerms(ph *phase) {
	b, nh := ph.rows, len(ph.hs)
	for p, g := range ph.gt {
		if ph.coef != nil {
			dst := a.hid[p]
			for r := 0; r < b; r++ {
				c := ph.sign * ph.coef[r]
				for u, x := range g[r*nh : (r+1)*nh] {
					dst[u] += c * x
				}
			}
			continue
		}
		sum := a.tmpH[p]
		clear(sum)
		for r := 0; r < b; r++ {
			for u, x := range g[r*nh : (r+1)*nh] {
				sum[u] += x
			}
		}
		if b > 0 {
			inv := 1 / float64(b)
			for u := range sum {
				sum[u] *= inv
			}
		}
		for u, x := range sum {
			a.hid[p][u] += ph.sign * x
		}
	}
}

// colSums sets sums[c0:c1] to the weighted sums Σ_r c_r x_rc over the
// first rows rows of x (cols columns), c_r = coef[r] or 1/rows. Rows are
// added four at a time (one pass over the sums per four rows), always in
// the same order, so a sum does not depend on how the columns are split.
func colSums(sums, x []float64, cols, rows int, coef []float64, c0, c1 int) {
	if c1 <= c0 {
		return
	}
	out := sums[c0:c1]
	clear(out)
	c := func(r int) float64 {
		if coef != nil {
			return coef[r]
		}
		return 1 / float64(rows)
	}
	row := func(r int) []float64 { return x[r*cols+c0 : r*cols+c1] }
	r := 0
	for ; r+4 <= rows; r += 4 {
		a, b, e, f := c(r), c(r+1), c(r+2), c(r+3)
		x0, x1, x2, x3 := row(r), row(r+1), row(r+2), row(r+3)
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		for k, y := range x0 {
			out[k] += a*y + b*x1[k] + e*x2[k] + f*x3[k]
		}
	}
	for ; r < rows; r++ {
		a := c(r)
		for k, y := range row(r) {
			out[k] += a * y
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
	p := newProducts(m, false, false)
	lg := newLayerGrads(m)
	var terms []term
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
		f := newPhase(mat.DenseCopyOf(ph.x).RawMatrix().Data, b, p.nv, p.nh, false, ph.sign)
		f.coef = coef
		if err := f.fill(p); err != nil {
			return nil, fmt.Errorf("train: LogLikelihoodGradient: %w", err)
		}
		f.sumColumns(0, p.nv, 0, p.nh)
		lg.add(f)
		terms = append(terms, f.term())
	}
	g := newGradient(m)
	g.Visible, g.Hidden = lg.vis, lg.hid
	p.outer(0, p.nv, terms, g.W.RawMatrix().Data)
	return g, nil
}
