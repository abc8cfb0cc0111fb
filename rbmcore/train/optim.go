package train

import (
	"fmt"
	"math"
)

// Optimisers understood by Trainer.Optimizer.
const (
	SGD      = "sgd"      // θ ← θ + η g
	Momentum = "momentum" // v ← µv + g; θ ← θ + η v
	Adam     = "adam"     // Kingma & Ba (2015), bias-corrected
)

// optimizer turns an ascent direction into parameter steps; its state is
// one slice per parameter slice.
type optimizer struct {
	kind            string
	mu, b1, b2, eps float64
	m, v            [][]float64
	t               int
	c1, c2          float64 // Adam's bias corrections of the current update
}

func newOptimizer(t *Trainer, shapes [][]float64) (*optimizer, error) {
	o := &optimizer{kind: t.Optimizer, mu: t.Momentum, b1: t.Beta1, b2: t.Beta2, eps: t.Epsilon}
	switch o.kind {
	case "", SGD:
		o.kind = SGD
	case Momentum:
		if o.mu == 0 {
			o.mu = 0.9
		}
		if !(o.mu >= 0 && o.mu < 1) {
			return nil, fmt.Errorf("train: Momentum = %v, want a value in [0, 1)", t.Momentum)
		}
		o.m = zerosLike(shapes)
	case Adam:
		if o.b1 == 0 {
			o.b1 = 0.9
		}
		if o.b2 == 0 {
			o.b2 = 0.999
		}
		if o.eps == 0 {
			o.eps = 1e-8
		}
		if !(o.b1 >= 0 && o.b1 < 1 && o.b2 >= 0 && o.b2 < 1 && o.eps > 0) {
			return nil, fmt.Errorf("train: Adam parameters β1 = %v, β2 = %v, ε = %v out of range", o.b1, o.b2, o.eps)
		}
		o.m, o.v = zerosLike(shapes), zerosLike(shapes)
	default:
		return nil, fmt.Errorf("train: unknown Optimizer %q (want sgd, momentum or adam)", t.Optimizer)
	}
	return o, nil
}

func zerosLike(s [][]float64) [][]float64 {
	out := make([][]float64, len(s))
	for i, p := range s {
		out[i] = make([]float64, len(p))
	}
	return out
}

// begin starts an update (Adam's bias corrections).
func (o *optimizer) begin() {
	o.t++
	if o.kind == Adam {
		o.c1 = 1 - math.Pow(o.b1, float64(o.t))
		o.c2 = 1 - math.Pow(o.b2, float64(o.t))
	}
}

// apply adds the update of entries [lo, hi) of parameter slice p, x, for
// the ascent direction g with learning rate lr (after begin).
// Products are rounded before they are added (float64(...)), so that no
// compiler fuses them into an FMA (Go does on arm64 and with
// GOAMD64=v3): the same run gives the same bits on every architecture.
func (o *optimizer) apply(p, lo, hi int, x, g []float64, lr float64) {
	x, g = x[lo:hi], g[lo:hi:hi]
	switch o.kind {
	case SGD:
		for k, gk := range g {
			x[k] += float64(lr * gk)
		}
	case Momentum:
		m := o.m[p][lo:hi]
		for k, gk := range g {
			m[k] = float64(o.mu*m[k]) + gk
			x[k] += float64(lr * m[k])
		}
	case Adam:
		m, v := o.m[p][lo:hi], o.v[p][lo:hi]
		for k, gk := range g {
			m[k] = float64(o.b1*m[k]) + float64((1-o.b1)*gk)
			v[k] = float64(o.b2*v[k]) + float64((1-o.b2)*gk*gk)
			x[k] += lr * (m[k] / o.c1) / (math.Sqrt(v[k]/o.c2) + o.eps)
		}
	}
}
