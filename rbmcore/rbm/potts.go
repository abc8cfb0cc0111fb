package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// PottsLayer is a layer of categorical units with Q colours, one-hot coded.
// Theta has N*Q entries, the field of colour a of unit i at i*Q+a:
// U(h) = -Σ_a θ_ia h_ia, Γ_i(I_i·) = log Σ_a exp(I_ia + θ_ia).
//
// The model is invariant under adding a constant to θ_i· (and, through the
// hidden fields, to the weights of a unit); RBM.ZeroSumGauge fixes the
// zero-sum gauge Σ_a θ_ia = 0, Σ_a w_{ia,µ} = 0.
type PottsLayer struct {
	Q     int
	Theta []float64
}

// Potts returns n units with q colours and zero fields.
func Potts(n, q int) *PottsLayer { return &PottsLayer{Q: q, Theta: make([]float64, n*q)} }

// Kind returns "potts".
func (l *PottsLayer) Kind() string { return "potts" }

// Len returns the number of units.
func (l *PottsLayer) Len() int {
	if l.Q == 0 {
		return 0
	}
	return len(l.Theta) / l.Q
}

// States returns Q.
func (l *PottsLayer) States() int { return l.Q }

// UnitCGF panics: a Potts unit has a vector input; use CGF.
func (l *PottsLayer) UnitCGF(u int, in, out []float64) {
	panic("rbm: UnitCGF is not defined for Potts layers (vector input); use CGF")
}

// blocks calls f(row, unit, offset) for every unit block of a batch.
func (l *PottsLayer) blocks(n int, f func(r, i, off int)) {
	w := len(l.Theta)
	b := rowsOf(n, w)
	for r := 0; r < b; r++ {
		for i := 0; i < w/l.Q; i++ {
			f(r, i, r*w+i*l.Q)
		}
	}
}

// logits writes in + θ of one block into buf and returns its maximum.
func (l *PottsLayer) logits(in []float64, off, i int, beta float64, buf []float64) float64 {
	m := math.Inf(-1)
	for a := range buf {
		buf[a] = beta * (in[off+a] + l.Theta[i*l.Q+a])
		if buf[a] > m {
			m = buf[a]
		}
	}
	return m
}

// CGF sets out[b] = Σ_i log Σ_a exp(I_bia + θ_ia).
func (l *PottsLayer) CGF(in, out []float64) {
	buf := make([]float64, l.Q)
	clear(out)
	l.blocks(len(in), func(r, i, off int) {
		l.logits(in, off, i, 1, buf)
		out[r] += mathx.LogSumExp(buf)
	})
}

// softmax sets out block = softmax(beta*(in + θ)).
func (l *PottsLayer) softmax(in, out []float64, off, i int, beta float64, buf []float64) {
	m := l.logits(in, off, i, beta, buf)
	s := 0.0
	for a, x := range buf {
		buf[a] = math.Exp(x - m)
		s += buf[a]
	}
	for a := range buf {
		out[off+a] = buf[a] / s
	}
}

// Mean sets out to the colour probabilities softmax(in + θ) of every unit.
func (l *PottsLayer) Mean(in, out []float64) {
	buf := make([]float64, l.Q)
	l.blocks(len(in), func(r, i, off int) { l.softmax(in, out, off, i, 1, buf) })
}

// Var sets out to p(1-p), the diagonal of each unit's one-hot covariance.
func (l *PottsLayer) Var(in, out []float64) {
	l.Mean(in, out)
	for k, p := range out[:len(in)] {
		out[k] = p * (1 - p)
	}
}

// Mode sets each unit's block to the one-hot code of its most probable
// colour (the first one on ties).
func (l *PottsLayer) Mode(in, out []float64) {
	buf := make([]float64, l.Q)
	l.blocks(len(in), func(r, i, off int) {
		m := l.logits(in, off, i, 1, buf)
		done := false
		for a, x := range buf {
			if x == m && !done {
				out[off+a] = 1
				done = true
			} else {
				out[off+a] = 0
			}
		}
	})
}

// Sample draws one colour per unit from softmax(beta*(in + θ)) and writes
// its one-hot code.
func (l *PottsLayer) Sample(rng *rand.Rand, in, out []float64, beta float64) error {
	if err := checkBeta(beta); err != nil {
		return err
	}
	buf := make([]float64, l.Q)
	l.blocks(len(in), func(r, i, off int) {
		l.softmax(in, out, off, i, beta, buf)
		u := rng.Float64()
		pick := l.Q - 1
		c := 0.0
		for a := 0; a < l.Q; a++ {
			c += out[off+a]
			if u < c {
				pick = a
				break
			}
		}
		for a := 0; a < l.Q; a++ {
			out[off+a] = 0
		}
		out[off+pick] = 1
	})
	return nil
}

// Energy sets out[b] = -Σ_ia θ_ia x_bia.
func (l *PottsLayer) Energy(x, out []float64) {
	scalarCGF(len(l.Theta), x, out, func(u int, h float64) float64 { return -l.Theta[u] * h })
}

// ParamNames returns ["theta"].
func (l *PottsLayer) ParamNames() []string { return []string{"theta"} }

// Params returns [Theta] (N*Q entries).
func (l *PottsLayer) Params() [][]float64 { return [][]float64{l.Theta} }

// GradCGF sets grads[0] = batch mean of the colour probabilities.
func (l *PottsLayer) GradCGF(in []float64, grads [][]float64) {
	p := make([]float64, len(in))
	l.Mean(in, p)
	scalarGrad(len(l.Theta), p, grads, func(u int, x float64, g []float64) { g[0] = x })
}

// GradLogWeight sets grads[0] = batch mean of the one-hot states.
func (l *PottsLayer) GradLogWeight(x []float64, grads [][]float64) {
	scalarGrad(len(l.Theta), x, grads, func(u int, h float64, g []float64) { g[0] = h })
}

// Validate checks Q ≥ 2, the length of Theta and that it is finite.
func (l *PottsLayer) Validate() error {
	if l.Q < 2 {
		return fmt.Errorf("rbm: potts layer: q = %d must be at least 2", l.Q)
	}
	if len(l.Theta)%l.Q != 0 {
		return fmt.Errorf("rbm: potts layer: theta has %d entries, not a multiple of q = %d", len(l.Theta), l.Q)
	}
	return validateParams(l)
}

// Clone returns a deep copy.
func (l *PottsLayer) Clone() Layer { return &PottsLayer{Q: l.Q, Theta: cloneSlice(l.Theta)} }

func init() {
	mustRegister(LayerKind{Name: "potts", Colours: true, New: func(n, q int) (Layer, error) {
		if q < 2 {
			return nil, fmt.Errorf("rbm: potts layer needs q ≥ 2, got %d", q)
		}
		return Potts(n, q), nil
	}})
}

// UnitValues returns the Q one-hot codes, colour 0 first.
func (l *PottsLayer) UnitValues() [][]float64 {
	vals := make([][]float64, l.Q)
	for a := range vals {
		vals[a] = make([]float64, l.Q)
		vals[a][a] = 1
	}
	return vals
}

// FitData sets θ_ia to the log frequency of colour a of unit i,
// log((Sum + Eps)/(Rows + Q Eps)) (not centred; see ZeroSumFields).
func (l *PottsLayer) FitData(s DataStats) error {
	q := float64(l.Q)
	for j, x := range s.Sum {
		l.Theta[j] = math.Log((x + s.Eps) / (s.Rows + q*s.Eps))
	}
	return nil
}
