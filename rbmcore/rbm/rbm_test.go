package rbm

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// enumStates lists every state of a small discrete layer as rows.
func enumStates(l Layer) *mat.Dense {
	n, q := l.Len(), l.States()
	w := n * q
	vals := l.(Discrete).UnitValues()
	k := len(vals)
	total := 1
	for i := 0; i < n; i++ {
		total *= k
	}
	out := mat.NewDense(total, w, nil)
	for s := 0; s < total; s++ {
		c := s
		for i := 0; i < n; i++ {
			d := c % k
			c /= k
			for a, x := range vals[d] {
				out.Set(s, i*q+a, x)
			}
		}
	}
	return out
}

// TestFreeEnergyMatchesJointSum checks F(v) = -log Σ_h exp(-E(v,h)) by
// explicit summation over binary/spin/Potts hidden states, for every
// registered visible kind (4 units, 3 with colours).
func TestFreeEnergyMatchesJointSum(t *testing.T) {
	for _, hid := range []Layer{Binary(3), Spin(3), Potts(2, 3)} {
		for _, vk := range allKinds() {
			vis := makeLayer(vk, 4)
			if vis.States() > 1 {
				vis = makeLayer(vk, 3)
			}
			m := New(vis.Clone(), hid.Clone(), Seed(3), WeightScale(0.5))
			randomiseFields(m, 4)
			rng := NewRNG(9, 9)
			// some visible states: samples given random hidden states
			hs := enumStates(m.Hidden)
			v, err := m.SampleVisible(rng, hs)
			if err != nil {
				t.Fatal(err)
			}
			f := m.FreeEnergy(v)
			rows, _ := v.Dims()
			nh, _ := hs.Dims()
			for r := 0; r < rows; r++ {
				vr := mat.NewDense(nh, Width(m.Visible), nil)
				for k := 0; k < nh; k++ {
					vr.SetRow(k, v.RawRowView(r))
				}
				e := m.Energy(vr, hs)
				lw := make([]float64, nh)
				for k := range e {
					lw[k] = -e[k]
				}
				want := -logSumExp(lw)
				if !closeTo(f[r], want, 1e-12, 1e-12) {
					t.Errorf("%v: F(v_%d) = %v, joint sum %v", m, r, f[r], want)
				}
			}
		}
	}
}

func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// randomiseFields gives every parameter of both layers a random value
// (positive for γ's) so tests do not run at the symmetric defaults.
func randomiseFields(m *RBM, seed uint64) {
	rng := NewRNG(seed, 1)
	for _, l := range []Layer{m.Visible, m.Hidden} {
		for p, ps := range l.Params() {
			pos := l.ParamNames()[p][0] == 'g'
			for k := range ps {
				if pos {
					ps[k] = 0.5 + rng.Float64()*2
				} else {
					ps[k] = rng.NormFloat64() * 0.5
				}
			}
		}
	}
}

// TestZeroSumGaugeInvariance checks that the gauge leaves free-energy
// differences (hence the distribution) unchanged and zeroes the colour sums.
func TestZeroSumGaugeInvariance(t *testing.T) {
	for _, pair := range [][2]Layer{{Potts(3, 3), ReLU(2)}, {Potts(2, 3), Potts(2, 2)}, {Binary(3), Potts(2, 3)}} {
		m := New(pair[0], pair[1], Seed(5), WeightScale(0.7))
		randomiseFields(m, 2)
		raw := m.W.RawMatrix().Data
		for k := range raw {
			raw[k] += 0.3 // leave the gauge
		}
		vs := enumStates(m.Visible)
		if m.Visible.Kind() != "potts" && m.Visible.Kind() != "binary" {
			t.Fatal("test needs a discrete visible layer")
		}
		before := m.FreeEnergy(vs)
		m.ZeroSumGauge()
		after := m.FreeEnergy(vs)
		for k := range before {
			if d := (after[k] - after[0]) - (before[k] - before[0]); math.Abs(d) > 1e-12 {
				t.Fatalf("%v: gauge changed F(v_%d)-F(v_0) by %v", m, k, d)
			}
		}
		r, c := m.W.Dims()
		if q := m.Visible.States(); q > 1 {
			for i := 0; i < r; i += q {
				for j := 0; j < c; j++ {
					s := 0.0
					for a := 0; a < q; a++ {
						s += m.W.At(i+a, j)
					}
					if math.Abs(s) > 1e-12 {
						t.Fatalf("%v: colour sum of W rows %d.. col %d = %v", m, i, j, s)
					}
				}
			}
		}
	}
}

// TestEmptyBatches: every batched method accepts a batch of zero rows.
func TestEmptyBatches(t *testing.T) {
	rng := NewRNG(1, 1)
	for _, k := range allKinds() {
		l := makeLayer(k, 3)
		var in, out []float64
		l.CGF(in, out)
		l.Mean(in, out)
		l.Var(in, out)
		l.Mode(in, out)
		l.Energy(in, out)
		if err := l.Sample(rng, in, out, 1); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		l.GradCGF(in, NewGrads(l))
	}
	m := New(Binary(3), ReLU(2))
	if f := m.FreeEnergy(mat.NewDense(1, 3, nil)); len(f) != 1 {
		t.Errorf("FreeEnergy of one row: %v", f)
	}
}
