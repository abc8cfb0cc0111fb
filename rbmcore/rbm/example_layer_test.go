package rbm_test

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// The truncated-exponential unit on [0, 1]: Γ(I) = log((e^x − 1)/x) with
// x = I + θ, mean ½ and variance 1/12 (uniform) at x = 0, and a mean that
// tends to 1 − 1/x (x → +∞) or −1/x (x → −∞) without overflow.
func ExampleTruncExpLayer() {
	l := rbm.TruncExp(1)
	in := []float64{0, 2, -1e4}
	g, m, v := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	l.UnitCGF(0, in, g)
	l.Mean(in, m)
	l.Var(in, v)
	for k := range in {
		fmt.Printf("I=%g Γ=%.6f mean=%.6g var=%.6g\n", in[k], g[k], m[k], v[k])
	}
	// An RBM with truncexp hidden units: log Z by enumerating the visible
	// layer, and a model file that names the kind.
	model := rbm.New(rbm.Binary(4), rbm.TruncExp(3), rbm.Seed(1))
	logZ, err := model.ExactLogZ(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	var file bytes.Buffer
	if err := model.WriteJSON(&file); err != nil {
		fmt.Println(err)
		return
	}
	back, err := rbm.ReadJSON(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := back.ExactLogZ(context.Background())
	fmt.Println(back, logZ == again)
	// Output:
	// I=0 Γ=0.000000 mean=0.5 var=0.0833333
	// I=2 Γ=1.161439 mean=0.656518 var=0.0689846
	// I=-10000 Γ=-9.210340 mean=0.0001 var=1e-08
	// RBM binary(4) × truncexp(3) true
}

// ising is a layer kind defined outside package rbm: ±1 units that behave
// as rbm.SpinLayer (whose methods, Discrete's UnitValues among them, it
// promotes) under a kind name of their own.
type ising struct{ *rbm.SpinLayer }

func (l ising) Kind() string { return "ising" }

func (l ising) Clone() rbm.Layer { return ising{l.SpinLayer.Clone().(*rbm.SpinLayer)} }

// A layer kind registers its name and constructor once, usually in an init
// function; model files can then hold it, and exact enumeration, sampling
// and the other algorithms use it through the Layer interface and the
// optional interfaces it implements.
func ExampleRegisterLayer() {
	if _, err := rbm.NewLayer("ising", 0, 0); err != nil { // not yet registered
		err := rbm.RegisterLayer(rbm.LayerKind{Name: "ising", New: func(n, _ int) (rbm.Layer, error) {
			return ising{rbm.Spin(n)}, nil
		}})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	m := rbm.New(ising{rbm.Spin(3)}, rbm.TruncExp(2), rbm.Seed(2))
	var file bytes.Buffer
	if err := m.WriteJSON(&file); err != nil {
		fmt.Println(err)
		return
	}
	back, err := rbm.ReadJSON(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	same := &rbm.RBM{Visible: back.Visible.(ising).SpinLayer, Hidden: back.Hidden, W: back.W}
	a, _ := back.ExactLogZ(context.Background())
	b, _ := same.ExactLogZ(context.Background())
	fmt.Println(back, math.Abs(a-b) < 1e-12)
	// Output: RBM ising(3) × truncexp(2) true
}

// The symmetric double well of Harsh, Tubiana, Cocco & Monasson 2020,
// U(h) = h²/2 + t|h| with the field θ = 0: at t = -2 the unit sits near
// h = ±2 (the most probable state at zero input is +2, the positive branch
// on ties) with ⟨h²⟩ = 1 - t⟨|h|⟩, at t = 0 it is a standard Gaussian, and
// ∂Γ/∂t = -⟨|h|⟩ is the gradient of its one trained parameter.
func ExampleDoubleWellLayer() {
	for _, t := range []float64{-2, 0} {
		l := rbm.DoubleWell(1)
		l.Threshold[0] = t
		in := []float64{0}
		mode, mean, vr := []float64{0}, []float64{0}, []float64{0}
		l.Mode(in, mode)
		l.Mean(in, mean)
		l.Var(in, vr)
		grads := rbm.NewGrads(l)
		l.GradCGF(in, grads)
		fmt.Printf("t=%g mode=%g mean=%g var=%.4f -<|h|>=%.4f\n", t, mode[0], mean[0], vr[0], grads[1][0])
	}
	// Output:
	// t=-2 mode=2 mean=0 var=5.1105 -<|h|>=-2.0552
	// t=0 mode=0 mean=0 var=1.0000 -<|h|>=-0.7979
}
