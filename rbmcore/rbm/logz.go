package rbm

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/guard"
	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"gonum.org/v1/gonum/mat"
)

// MaxEnumerate is the largest number of configurations ExactLogZ sums over
// (2^26; about 25 binary units).
const MaxEnumerate = 1 << 26

// configs returns the number of configurations of a Discrete layer (0 if
// the layer is not Discrete or has more than MaxEnumerate).
func configs(l Layer) int {
	d, ok := l.(Discrete)
	if !ok {
		return 0
	}
	k := len(d.UnitValues())
	n := 1
	for i := 0; i < l.Len(); i++ {
		n *= k
		if n > MaxEnumerate {
			return 0
		}
	}
	return n
}

// fillConfig writes configuration number s of the Discrete layer l, whose
// unit values are vals, into row: unit i takes the value of digit i of s in
// base len(vals).
func fillConfig(l Layer, vals [][]float64, s int, row []float64) {
	q, k := l.States(), len(vals)
	for i := 0; i < l.Len(); i++ {
		copy(row[i*q:(i+1)*q], vals[s%k])
		s /= k
	}
}

// ExactLogZ returns log Z = log Σ_{v,h} exp(-E(v,h)) by enumerating the
// states of the smaller Discrete layer (binary, spin or Potts, at most
// MaxEnumerate configurations) and integrating the other one out
// through its Γ: log Z = log Σ_x exp(-U(x) + Σ Γ_other(I(x))). The sum runs
// on all cores in chunks, checking ctx between chunks. A non-finite term
// (an unnormalisable model) is an error.
func (m *RBM) ExactLogZ(ctx context.Context) (float64, error) {
	ctx = ContextOrDefault(ctx)
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("rbm: ExactLogZ: %w", err)
	}
	cv, ch := configs(m.Visible), configs(m.Hidden)
	if cv == 0 && ch == 0 {
		return 0, fmt.Errorf("rbm: ExactLogZ: neither layer (%s %d, %s %d) is a discrete layer with at most %d configurations",
			m.Visible.Kind(), m.Visible.Len(), m.Hidden.Kind(), m.Hidden.Len(), MaxEnumerate)
	}
	enum, other, trans, total := m.Visible, m.Hidden, false, cv
	if cv == 0 || (ch != 0 && ch < cv) {
		enum, other, trans, total = m.Hidden, m.Visible, true, ch
	}
	return logSumConfigs(ctx, m, enum, other, trans, total)
}

// logSumConfigs computes log Σ_x exp(-U_enum(x) + Σ Γ_other(I(x))).
func logSumConfigs(ctx context.Context, m *RBM, enum, other Layer, trans bool, total int) (float64, error) {
	const chunk = 2048
	we, wo := Width(enum), Width(other)
	vals := enum.(Discrete).UnitValues()
	nchunks := (total + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), nchunks)
	type acc struct{ max, sum float64 }
	accs := make([]acc, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	wmat := m.W.RawMatrix()
	cgf := other.CGF
	if b, ok := other.(*BinaryLayer); ok {
		cgf = func(in, out []float64) { softplusSums(b.Theta, in, out) }
	}
	// sumChunks accumulates worker w's chunks into accs[w].
	sumChunks := func(w int) error {
		x := make([]float64, chunk*we)
		in := make([]float64, chunk*wo)
		e := make([]float64, chunk)
		g := make([]float64, chunk)
		a := acc{math.Inf(-1), 0}
		for c := w; c < nchunks; c += workers {
			if err := ctx.Err(); err != nil {
				return err
			}
			s0 := c * chunk
			n := min(chunk, total-s0)
			for r := 0; r < n; r++ {
				fillConfig(enum, vals, s0+r, x[r*we:(r+1)*we])
			}
			gemm(x[:n*we], n, wmat, trans, in[:n*wo])
			enum.Energy(x[:n*we], e[:n])
			cgf(in[:n*wo], g[:n])
			for r := 0; r < n; r++ {
				t := g[r] - e[r]
				if math.IsNaN(t) || math.IsInf(t, 0) {
					return fmt.Errorf("rbm: ExactLogZ: term of configuration %d of the %s layer is %v: the model is not normalisable or overflows", s0+r, enum.Kind(), t)
				}
				if t > a.max {
					a.sum = a.sum*math.Exp(a.max-t) + 1
					a.max = t
				} else {
					a.sum += math.Exp(t - a.max)
				}
			}
		}
		accs[w] = a
		return nil
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = guard.Call(func() error { return sumChunks(w) })
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	mx := math.Inf(-1)
	for _, a := range accs {
		mx = math.Max(mx, a.max)
	}
	s := 0.0
	for _, a := range accs {
		if a.sum > 0 {
			s += a.sum * math.Exp(a.max-mx)
		}
	}
	return mx + math.Log(s), nil
}

// softplusSums sets out[r] = Σ_u softplus(in[r,u] + θ_u), the CGF of a
// binary layer, as Σ max(x, 0) + log Π (1 + e^{−|x|}): one exponential per
// unit and one logarithm per 512 units (each factor is in (1, 2], so the
// product stays below 2^512) instead of an exponential and a logarithm per
// unit, which dominate ExactLogZ over a wide binary visible layer. A NaN
// or infinite input gives a NaN or infinite sum, as the per-unit form does.
func softplusSums(theta, in, out []float64) {
	n := len(theta)
	for r := range out[:len(in)/n] {
		s, p := 0.0, 1.0
		for u, x := range in[r*n : (r+1)*n] {
			x += theta[u]
			if x > 0 {
				s += x
				x = -x
			}
			p *= 1 + mathx.Exp(x)
			if u&511 == 511 {
				s += math.Log(p)
				p = 1
			}
		}
		out[r] = s + math.Log(p)
	}
}

// LogLikelihood returns the average log-likelihood (nats per row) of the
// visible rows v under m given log Z (from ExactLogZ or an AIS estimate):
// mean_rows(-F(v)) - log Z.
func (m *RBM) LogLikelihood(v *mat.Dense, logZ float64) (float64, error) {
	f := m.FreeEnergy(v)
	if err := checkFinite(f, "free energy"); err != nil {
		return 0, fmt.Errorf("rbm: LogLikelihood: %w", err)
	}
	s := 0.0
	for _, x := range f {
		s -= x
	}
	return s/float64(len(f)) - logZ, nil
}
