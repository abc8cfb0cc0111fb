package train

import (
	"fmt"
	"math"
)

// An Optimiser turns the ascent direction of each update (the gradient of
// the log-likelihood minus the penalties' gradients) into a parameter
// step with the learning rate η of the Schedule. The optimisers are SGD,
// Momentum and Adam; a nil Optimiser given to Fit is SGD{}. The zero value
// of each is a usable default. The interface's other method is unexported:
// these types are its only implementations.
type Optimiser interface {
	// String names the optimiser ("SGD", "Momentum", "Adam", "RMSprop").
	String() string
	// newState checks the settings and returns the optimiser's state for
	// parameters shaped like params (nil: only the check).
	newState(params [][]float64) (optimiser, error)
}

// optimiser is the run state of an Optimiser.
type optimiser interface {
	// begin starts an update.
	begin()
	// apply adds the step of entries [lo, hi) of parameter slice p, x,
	// for the ascent direction g with learning rate lr (after begin).
	// Products are rounded before they are added (float64(...)), so that
	// no compiler fuses them into an FMA (Go does on arm64 and with
	// GOAMD64=v3): the same run gives the same bits on every architecture.
	apply(p, lo, hi int, x, g []float64, lr float64)
	// plain reports whether the step is θ ← θ + η g (weightPass then fuses
	// it with its scan, see sgdShadow).
	plain() bool
	// saved returns what a checkpoint keeps: the number of updates and
	// the moment estimates (nil where the optimiser has none).
	saved() (steps *int, m, v [][]float64)
}

// SGD is plain stochastic gradient ascent: θ ← θ + η g.
type SGD struct{}

// String returns "SGD".
func (SGD) String() string { return "SGD" }

func (SGD) newState([][]float64) (optimiser, error) { return &sgdState{}, nil }

type sgdState struct{ t int }

func (s *sgdState) begin() { s.t++ }
func (s *sgdState) apply(p, lo, hi int, x, g []float64, lr float64) {
	x, g = x[lo:hi], g[lo:hi:hi]
	for k, gk := range g {
		x[k] += float64(lr * gk)
	}
}
func (s *sgdState) plain() bool                             { return true }
func (s *sgdState) saved() (*int, [][]float64, [][]float64) { return &s.t, nil, nil }

// Momentum is gradient ascent with momentum: v ← µ v + g, θ ← θ + η v.
type Momentum struct {
	// Mu is the momentum coefficient µ in [0, 1) (0: 0.9).
	Mu float64
}

// String returns "Momentum".
func (Momentum) String() string { return "Momentum" }

func (o Momentum) newState(params [][]float64) (optimiser, error) {
	mu := o.Mu
	if mu == 0 {
		mu = 0.9
	}
	if !(mu >= 0 && mu < 1) {
		return nil, fmt.Errorf("train: Momentum.Mu = %v, want a value in [0, 1) (0: 0.9)", o.Mu)
	}
	return &momentumState{mu: mu, m: zerosLike(params)}, nil
}

type momentumState struct {
	mu float64
	m  [][]float64
	t  int
}

func (s *momentumState) begin() { s.t++ }
func (s *momentumState) apply(p, lo, hi int, x, g []float64, lr float64) {
	x, g = x[lo:hi], g[lo:hi:hi]
	m := s.m[p][lo:hi]
	for k, gk := range g {
		m[k] = float64(s.mu*m[k]) + gk
		x[k] += float64(lr * m[k])
	}
}
func (s *momentumState) plain() bool                             { return false }
func (s *momentumState) saved() (*int, [][]float64, [][]float64) { return &s.t, s.m, nil }

// Adam is the optimiser of Kingma & Ba (2015) with bias-corrected moment
// estimates: m ← β₁ m + (1−β₁) g, v ← β₂ v + (1−β₂) g²,
// θ ← θ + η m̂ / (√v̂ + ε).
type Adam struct {
	// Beta1 is the decay of the first moment, in [0, 1) (0: 0.9).
	Beta1 float64
	// Beta2 is the decay of the second moment, in [0, 1) (0: 0.999).
	Beta2 float64
	// Eps is the ε of the denominator, > 0 (0: 1e-8).
	Eps float64
}

// String returns "Adam".
func (Adam) String() string { return "Adam" }

func (o Adam) newState(params [][]float64) (optimiser, error) {
	s := &adamState{b1: o.Beta1, b2: o.Beta2, eps: o.Eps}
	if s.b1 == 0 {
		s.b1 = 0.9
	}
	if s.b2 == 0 {
		s.b2 = 0.999
	}
	if s.eps == 0 {
		s.eps = 1e-8
	}
	if !(s.b1 >= 0 && s.b1 < 1 && s.b2 >= 0 && s.b2 < 1 && s.eps > 0) {
		return nil, fmt.Errorf("train: Adam{Beta1: %v, Beta2: %v, Eps: %v}: want β₁, β₂ in [0, 1) and ε > 0", s.b1, s.b2, s.eps)
	}
	s.m, s.v = zerosLike(params), zerosLike(params)
	return s, nil
}

type adamState struct {
	b1, b2, eps float64
	m, v        [][]float64
	t           int
	c1, c2      float64 // the bias corrections of the current update
}

func (s *adamState) begin() {
	s.t++
	s.c1 = 1 - math.Pow(s.b1, float64(s.t))
	s.c2 = 1 - math.Pow(s.b2, float64(s.t))
}

func (s *adamState) apply(p, lo, hi int, x, g []float64, lr float64) {
	x, g = x[lo:hi], g[lo:hi:hi]
	m, v := s.m[p][lo:hi], s.v[p][lo:hi]
	for k, gk := range g {
		m[k] = float64(s.b1*m[k]) + float64((1-s.b1)*gk)
		v[k] = float64(s.b2*v[k]) + float64((1-s.b2)*gk*gk)
		x[k] += lr * (m[k] / s.c1) / (math.Sqrt(v[k]/s.c2) + s.eps)
	}
}
func (s *adamState) plain() bool                             { return false }
func (s *adamState) saved() (*int, [][]float64, [][]float64) { return &s.t, s.m, s.v }

// RMSprop scales the step by a running root mean square of the gradient,
// bias-corrected as Adam's second moment: v ← ρ v + (1−ρ) g²,
// θ ← θ + η g / (√(v / (1−ρᵗ)) + ε). It is Adam without a first moment
// (β₁ = 0), which is the step of Tubiana, Cocco & Monasson's reference code
// for their lattice-protein RBMs (its optimiser keeps no first moment for
// the RBM's parameters).
type RMSprop struct {
	// Rho is the decay of the mean square, in [0, 1) (0: 0.99).
	Rho float64
	// Eps is the ε of the denominator, > 0 (0: 1e-8).
	Eps float64
}

// String returns "RMSprop".
func (RMSprop) String() string { return "RMSprop" }

func (o RMSprop) newState(params [][]float64) (optimiser, error) {
	s := &rmspropState{rho: o.Rho, eps: o.Eps}
	if s.rho == 0 {
		s.rho = 0.99
	}
	if s.eps == 0 {
		s.eps = 1e-8
	}
	if !(s.rho >= 0 && s.rho < 1 && s.eps > 0) {
		return nil, fmt.Errorf("train: RMSprop{Rho: %v, Eps: %v}: want ρ in [0, 1) and ε > 0", o.Rho, o.Eps)
	}
	s.v = zerosLike(params)
	return s, nil
}

type rmspropState struct {
	rho, eps float64
	v        [][]float64
	t        int
	c        float64 // the bias correction of the current update
}

func (s *rmspropState) begin() {
	s.t++
	s.c = 1 - math.Pow(s.rho, float64(s.t))
}

func (s *rmspropState) apply(p, lo, hi int, x, g []float64, lr float64) {
	x, g = x[lo:hi], g[lo:hi:hi]
	v := s.v[p][lo:hi]
	for k, gk := range g {
		v[k] = float64(s.rho*v[k]) + float64((1-s.rho)*gk*gk)
		x[k] += lr * gk / (math.Sqrt(v[k]/s.c) + s.eps)
	}
}
func (s *rmspropState) plain() bool                             { return false }
func (s *rmspropState) saved() (*int, [][]float64, [][]float64) { return &s.t, nil, s.v }

func zerosLike(s [][]float64) [][]float64 {
	out := make([][]float64, len(s))
	for i, p := range s {
		out[i] = make([]float64, len(p))
	}
	return out
}
