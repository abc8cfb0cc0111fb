package rbm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
)

// refMoments computes, independently of the layer's closed forms, the log
// partition function, mean and variance of one scalar unit u at input x
// and inverse temperature beta: direct summation over the support for
// discrete units, adaptive-window Simpson quadrature of exp(beta(-U(h)+xh))
// (U taken from Energy) on each half line for continuous ones.
func refMoments(l Layer, u int, x, beta float64) (logZ, mean, variance float64) {
	n := l.Len()
	row := make([]float64, n)
	e := make([]float64, 1)
	logf := func(h float64) float64 {
		row[u] = h
		l.Energy(row, e)
		// Energy sums over all units; the others sit at 0 where U = 0.
		return beta * (-e[0] + x*h)
	}
	d, discrete := l.(Discrete)
	if discrete || latticeSupport(l) {
		var hs []float64
		if discrete {
			for _, v := range d.UnitValues() {
				hs = append(hs, v[0])
			}
		} else {
			lam := []float64{0} // the mean, only to bound the sum
			l.Mean([]float64{x}, lam)
			for h := 0.0; h <= lam[0]+60*math.Sqrt(lam[0])+60; h++ {
				hs = append(hs, h)
			}
		}
		lw := make([]float64, len(hs))
		for k, h := range hs {
			lw[k] = logf(h)
		}
		logZ = mathx.LogSumExp(lw)
		for k, h := range hs {
			p := math.Exp(lw[k] - logZ)
			mean += p * h
		}
		for k, h := range hs {
			p := math.Exp(lw[k] - logZ)
			variance += p * (h - mean) * (h - mean)
		}
		return
	}
	// Continuous: two concave branches, h ≥ 0 and h ≤ 0, each within the
	// support [sLo, sHi] (ReLU: only h ≥ 0).
	sLo, sHi := supportOf(l)
	type part struct{ lz, m1, v float64 }
	branch := func(sign float64) part {
		g := func(t float64) float64 { return logf(sign * t) } // t ≥ 0
		end := sHi                                             // the branch's support is t ∈ [0, end]
		if sign < 0 {
			end = -sLo
		}
		// ternary search for the peak of the concave g on [0, 1e9]
		lo, hi := 0.0, math.Min(1e9, end)
		for it := 0; it < 400; it++ {
			a, b := lo+(hi-lo)/3, hi-(hi-lo)/3
			if g(a) < g(b) {
				lo = a
			} else {
				hi = b
			}
		}
		p := 0.5 * (lo + hi)
		if g(0) >= g(p) {
			p = 0
		}
		gp := g(p)
		width := func(dir float64) float64 {
			s := 1e-12
			for p+dir*s > 0 && g(p+dir*s) > gp-60 {
				s *= 1.5
			}
			return s
		}
		a := math.Max(0, p-width(-1))
		b := math.Min(p+width(1), end)
		const k = 12000
		hstep := (b - a) / k
		// moments about the peak p, so large means do not cancel
		var z, s1, s2 float64
		for i := 0; i <= k; i++ {
			t := a + float64(i)*hstep
			w := 2.0
			if i == 0 || i == k {
				w = 1
			} else if i%2 == 1 {
				w = 4
			}
			f := w * math.Exp(g(t)-gp)
			z += f
			s1 += f * (t - p)
			s2 += f * (t - p) * (t - p)
		}
		d1, d2 := s1/z, s2/z
		return part{gp + math.Log(z*hstep/3), sign * (p + d1), d2 - d1*d1}
	}
	parts := []part{branch(1)}
	if sLo < 0 {
		parts = append(parts, branch(-1))
	}
	logZ = math.Inf(-1)
	for _, p := range parts {
		logZ = mathx.LogAddExp(logZ, p.lz)
	}
	for _, p := range parts {
		mean += math.Exp(p.lz-logZ) * p.m1
	}
	// law of total variance
	for _, p := range parts {
		d := p.m1 - mean
		variance += math.Exp(p.lz-logZ) * (p.v + d*d)
	}
	return
}

// supportOf returns the interval on which one unit of a scalar layer has
// finite energy, found by probing Energy outwards from 0 and bisecting.
func supportOf(l Layer) (lo, hi float64) {
	row := make([]float64, l.Len())
	e := []float64{0}
	finite := func(h float64) bool {
		row[0] = h
		l.Energy(row, e)
		return !math.IsInf(e[0], 0) && !math.IsNaN(e[0])
	}
	edge := func(dir float64) float64 {
		fin, inf := 0.0, 0.0
		for s := 1.0; ; s *= 2 {
			if s > 1e300 {
				return dir * math.Inf(1)
			}
			if !finite(dir * s) {
				inf = dir * s
				break
			}
			fin = dir * s
		}
		for it := 0; it < 200; it++ {
			if mid := (fin + inf) / 2; finite(mid) {
				fin = mid
			} else {
				inf = mid
			}
		}
		return fin
	}
	return edge(-1), edge(1)
}

// layerParamSets lists, per kind, parameter sets (in ParamNames order) that
// reach into the corners of the kinds' domains (values up to 50 in
// magnitude). Kinds without an entry are tested with their default
// parameters and fields −3, 0 and 2.5.
var layerParamSets = map[string][][]float64{
	"gaussian": curvatureFieldSets(),
	"relu":     curvatureFieldSets(),
	"drelu":    {{1, 1, 0, 0}, {0.1, 0.1, 1, -1}, {1, 20, 6, -25}, {2, 0.5, 1, -0.7}, {50, 0.2, -50, 40}, {1, 1, -2, 2}},
	// (θ, t): Gaussian, single wells with a cusp, double wells, a shifted deep double well
	"doublewell": {{0, 0}, {0, 0.8}, {0, -2}, {1.5, -0.5}, {-3, 4}, {0.5, -25}},
}

// curvatureFieldSets returns the (γ, θ) sets of the Gaussian and ReLU tests.
func curvatureFieldSets() [][]float64 {
	var sets [][]float64
	for _, g := range []float64{0.1, 1, 50} {
		for _, th := range []float64{-50, 0, 3} {
			sets = append(sets, []float64{g, th})
		}
	}
	return sets
}

// testLayers returns single-unit layers of every registered scalar kind,
// one per parameter set of layerParamSets (or the default field sets).
func testLayers() []Layer {
	var ls []Layer
	for _, kind := range LayerKinds() {
		proto := makeLayer(kind, 1)
		if proto.States() > 1 {
			continue // Potts: TestPottsLayer
		}
		sets, ok := layerParamSets[kind]
		if !ok {
			sets = nil
			for _, th := range []float64{-3, 0, 2.5} {
				var set []float64
				for p, name := range proto.ParamNames() {
					v := proto.Params()[p][0]
					if isFieldName(name) {
						v = th
					}
					set = append(set, v)
				}
				sets = append(sets, set)
			}
		}
		for _, set := range sets {
			l := proto.Clone()
			for p, ps := range l.Params() {
				ps[0] = set[p]
			}
			ls = append(ls, l)
		}
	}
	return ls
}

// inputsFor returns inputs from −1e4 to 1e4, or up to 9 for layers that
// sample only below an input bound (Poisson).
func inputsFor(l Layer) []float64 {
	if _, ok := l.(InputBound); ok {
		return []float64{-1e4, -30, -3, 0, 0.7, 5, 9}
	}
	return []float64{-1e4, -300, -30, -3, -0.5, 0, 0.7, 5, 40, 1e4}
}

func desc(l Layer) string {
	return fmt.Sprintf("%s%v", l.Kind(), l.Params())
}

func closeTo(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= abs+rel*math.Abs(want)
}

// TestScalarLayerMoments compares Γ, Γ′ (Mean), Γ″ (Var) and UnitCGF with
// quadrature/summation over a wide input range, extremes included.
func TestScalarLayerMoments(t *testing.T) {
	for _, l := range testLayers() {
		in := inputsFor(l)
		cg := make([]float64, len(in))
		mean := make([]float64, len(in))
		vr := make([]float64, len(in))
		ucgf := make([]float64, len(in))
		l.CGF(in, cg) // batch of len(in) rows of one unit
		l.Mean(in, mean)
		l.Var(in, vr)
		l.UnitCGF(0, in, ucgf)
		for k, x := range in {
			lz, m, v := refMoments(l, 0, x, 1)
			if cg[k] != ucgf[k] {
				t.Errorf("%s I=%v: CGF %v != UnitCGF %v", desc(l), x, cg[k], ucgf[k])
			}
			if !closeTo(cg[k], lz, 1e-10, 1e-10) {
				t.Errorf("%s I=%v: Γ = %.15g, quadrature %.15g", desc(l), x, cg[k], lz)
			}
			if !closeTo(mean[k], m, 1e-8, 1e-12) {
				t.Errorf("%s I=%v: Γ' = %.15g, quadrature %.15g", desc(l), x, mean[k], m)
			}
			if !closeTo(vr[k], v, 1e-7, 1e-14) {
				t.Errorf("%s I=%v: Γ″ = %.15g, quadrature %.15g", desc(l), x, vr[k], v)
			}
			if math.IsNaN(cg[k]) || math.IsNaN(mean[k]) || math.IsNaN(vr[k]) {
				t.Errorf("%s I=%v: NaN", desc(l), x)
			}
		}
	}
}

// TestScalarLayerFiniteDifferences checks Γ' and Γ″ against central
// differences of Γ and Γ', and GradCGF against differences of Γ with
// respect to every parameter.
func TestScalarLayerFiniteDifferences(t *testing.T) {
	for _, l := range testLayers() {
		for _, x := range inputsFor(l) {
			if math.Abs(x) > 1000 {
				continue // differences are meaningless next to Γ ~ 1e8
			}
			d := 1e-5 * math.Max(1, math.Abs(x))
			one := func(f func(in, out []float64), x float64) float64 {
				o := []float64{0}
				f([]float64{x}, o)
				return o[0]
			}
			m := one(l.Mean, x)
			fd := (one(l.CGF, x+d) - one(l.CGF, x-d)) / (2 * d)
			if !closeTo(m, fd, 1e-5, 1e-7) {
				t.Errorf("%s I=%v: Γ' = %v, finite difference %v", desc(l), x, m, fd)
			}
			v := one(l.Var, x)
			fd = (one(l.Mean, x+d) - one(l.Mean, x-d)) / (2 * d)
			if !closeTo(v, fd, 1e-5, 1e-7) {
				t.Errorf("%s I=%v: Γ″ = %v, finite difference %v", desc(l), x, v, fd)
			}
			grads := NewGrads(l)
			l.GradCGF([]float64{x}, grads)
			for p, ps := range l.Params() {
				old := ps[0]
				h := 1e-6 * math.Max(1, math.Abs(old))
				ps[0] = old + h
				up := one(l.CGF, x)
				ps[0] = old - h
				dn := one(l.CGF, x)
				ps[0] = old
				fd := (up - dn) / (2 * h)
				if !closeTo(grads[p][0], fd, 1e-5, 1e-6) {
					t.Errorf("%s I=%v: ∂Γ/∂%s = %v, finite difference %v", desc(l), x, l.ParamNames()[p], grads[p][0], fd)
				}
			}
		}
	}
}

// TestDoubleWellPotential anchors the double-well layer to the potential
// of Harsh, Tubiana, Cocco & Monasson 2020 (Sec. 2.1) written out here,
// U(h) = h²/2 + t|h| − θh, and at zero field and input to closed forms
// independent of the dReLU kernels: Z = 2e^{t²/2}√(2π)Φ(−t) and
// ⟨|h|⟩ = 1/(e^{t²/2}√(2π)Φ(−t)) − t, so Γ = ln Z and ∂Γ/∂t = −⟨|h|⟩.
// The generic tests check the layer's Γ, moments and gradients against
// quadrature of this U and finite differences.
func TestDoubleWellPotential(t *testing.T) {
	l := DoubleWell(1)
	for _, p := range [][2]float64{{0, 0}, {0.7, -1.5}, {-2, 3}} {
		l.Theta[0], l.Threshold[0] = p[0], p[1]
		for _, h := range []float64{-3, -0.4, 0, 0.25, 2} {
			e := []float64{0}
			l.Energy([]float64{h}, e)
			if want := h*h/2 + p[1]*math.Abs(h) - p[0]*h; math.Abs(e[0]-want) > 1e-14 {
				t.Errorf("θ=%v t=%v: U(%v) = %v, want %v", p[0], p[1], h, e[0], want)
			}
		}
	}
	l.Theta[0] = 0
	for _, th := range []float64{-6, -2, -0.5, 0, 0.8, 3} {
		l.Threshold[0] = th
		half := math.Exp(th*th/2) * math.Sqrt(2*math.Pi) * 0.5 * math.Erfc(th/math.Sqrt2) // ∫₀^∞ e^{−h²/2−th} dh
		g := []float64{0}
		l.CGF([]float64{0}, g)
		if want := math.Log(2 * half); !closeTo(g[0], want, 1e-12, 1e-12) {
			t.Errorf("t=%v: Γ(0) = %.15g, closed form %.15g", th, g[0], want)
		}
		grads := NewGrads(l)
		l.GradCGF([]float64{0}, grads)
		if want := -(1/half - th); !closeTo(grads[1][0], want, 1e-10, 1e-12) {
			t.Errorf("t=%v: ∂Γ/∂t = %.15g, closed form −⟨|h|⟩ = %.15g", th, grads[1][0], want)
		}
		if math.Abs(grads[0][0]) > 1e-14 {
			t.Errorf("t=%v: ∂Γ/∂θ = ⟨h⟩ = %v at zero input, want 0 by symmetry", th, grads[0][0])
		}
		mode := []float64{0}
		l.Mode([]float64{0}, mode)
		if want := math.Max(-th, 0); mode[0] != want {
			t.Errorf("t=%v: mode %v at zero input, want %v (the minima of U at ±|t|)", th, mode[0], want)
		}
	}
}

// TestDReLUReferenceValues checks dReLU values computed independently of
// this package, for units given in the thresholds of Tubiana, Cocco &
// Monasson 2019 converted to fields (θ = -θ_paper).
func TestDReLUReferenceValues(t *testing.T) {
	for _, c := range []struct {
		gp, gn, tp, tn, I, gamma, mean, variance, mode, dgp, dgn, dtp, dtn float64
	}{
		{1, 1, 0, 0, 0.5, 1.0439385332, 0.5, 1, 0.5, -0.520180369987, -0.104819630013, -0.697796557401, 0.197796557401},
		{0.1, 0.1, 1, -1, 0.5, 0.795336495042, 0.781077126099, 1.91482865628, 0, -1.15582487369, -0.10663019291, -0.959562337915, 0.178485211815},
		{1, 20, -6, 25, -3, 19.0210736324, -1.3999945556, 0.0500251381873, -1.4, -6.18912071586e-06, -1.00499875783, -3.71402102557e-06, 1.39999826962},
		{1, 20, -6, 25, 0, 18.9395238647, 5.85228197354, 2.0297789298, 6, -18.1230643497, -0.0164272641024, -5.87775060006, 0.0254686265246},
		{2, 0.5, -1, 0.7, 0, 1.88471195092, -1.12853565869, 2.30610979777, -1.4, -0.1175249305, -1.67232633486, -0.207324173984, 1.33585983268},
	} {
		l := DReLU(1)
		l.GammaPlus[0], l.GammaMinus[0], l.ThetaPlus[0], l.ThetaMinus[0] = c.gp, c.gn, -c.tp, -c.tn
		in := []float64{c.I}
		o := []float64{0}
		l.CGF(in, o)
		g := o[0]
		l.Mean(in, o)
		m := o[0]
		l.Var(in, o)
		v := o[0]
		l.Mode(in, o)
		md := o[0]
		grads := NewGrads(l)
		l.GradCGF(in, grads)
		got := []float64{g, m, v, md, grads[0][0], grads[1][0], -grads[2][0], -grads[3][0]}
		want := []float64{c.gamma, c.mean, c.variance, c.mode, c.dgp, c.dgn, c.dtp, c.dtn}
		for k := range got {
			if !closeTo(got[k], want[k], 1e-9, 1e-10) {
				t.Errorf("dReLU %v I=%v: quantity %d = %.12g, reference %.12g", [4]float64{c.gp, c.gn, c.tp, c.tn}, c.I, k, got[k], want[k])
			}
		}
	}
}

// TestSamplersMatchMoments draws 2e4 values per (layer, input, beta) and
// compares the sample mean and variance with the quadrature moments of the
// tempered distribution.
func TestSamplersMatchMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 20000
	for _, l := range testLayers() {
		for _, x := range []float64{-1e4, -3, 0.7, 5} {
			for _, beta := range []float64{1, 0.4} {
				if latticeSupport(l) && beta != 1 { // Poisson samples only at β = 1
					if err := l.Sample(rng, []float64{x}, []float64{0}, beta); err == nil {
						t.Errorf("poisson at beta=%v: no error", beta)
					}
					continue
				}
				_, m, v := refMoments(l, 0, x, beta)
				in := make([]float64, n)
				for k := range in {
					in[k] = x
				}
				out := make([]float64, n)
				if err := l.Sample(rng, in, out, beta); err != nil {
					t.Fatal(err)
				}
				var s, s2 float64
				for _, h := range out {
					s += h
				}
				sm := s / n
				for _, h := range out {
					s2 += (h - sm) * (h - sm)
				}
				sv := s2 / n
				se := math.Sqrt(v / n)
				// the variance's standard error is ≈ v√(2/n) for continuous
				// units and ≈ √(v/n) for rare binary events
				if math.Abs(sm-m) > 5*se+1e-12*math.Abs(m) || math.Abs(sv-v) > 0.05*v+6*math.Sqrt(v/n) {
					t.Errorf("%s I=%v beta=%v: sample mean %v var %v, want %v %v", desc(l), x, beta, sm, sv, m, v)
				}
			}
		}
	}
}

// TestPottsLayer compares the Potts layer with explicit sums over colours.
func TestPottsLayer(t *testing.T) {
	l := Potts(2, 3)
	copy(l.Theta, []float64{0.1, 0, -0.1, 50, -50, 3})
	in := []float64{1e4, -1e4, 0, 0.2, 0.3, -0.4, -2, 1, 0.5, 0, 0, 0}
	cg := make([]float64, 2)
	l.CGF(in, cg)
	mean := make([]float64, len(in))
	l.Mean(in, mean)
	vr := make([]float64, len(in))
	l.Var(in, vr)
	mode := make([]float64, len(in))
	l.Mode(in, mode)
	for r := 0; r < 2; r++ {
		want := 0.0
		for i := 0; i < 2; i++ {
			var zs []float64
			for a := 0; a < 3; a++ {
				zs = append(zs, in[r*6+i*3+a]+l.Theta[i*3+a])
			}
			lz := mathx.LogSumExp(zs)
			want += lz
			best := 0
			for a := 0; a < 3; a++ {
				p := math.Exp(zs[a] - lz)
				k := r*6 + i*3 + a
				if !closeTo(mean[k], p, 1e-12, 1e-300) || !closeTo(vr[k], p*(1-p), 1e-12, 1e-300) {
					t.Errorf("potts row %d unit %d colour %d: p=%v var=%v, want %v", r, i, a, mean[k], vr[k], p)
				}
				if zs[a] > zs[best] {
					best = a
				}
			}
			for a := 0; a < 3; a++ {
				w := 0.0
				if a == best {
					w = 1
				}
				if mode[r*6+i*3+a] != w {
					t.Errorf("potts mode row %d unit %d = %v", r, i, mode[r*6+i*3:r*6+i*3+3])
				}
			}
		}
		if !closeTo(cg[r], want, 1e-13, 0) {
			t.Errorf("potts CGF row %d = %v, want %v", r, cg[r], want)
		}
	}
	// sampler frequencies
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 100000
	row := []float64{0.2, 0.3, -0.4, -2, 1, 0.5}
	ins := make([]float64, 0, n*6)
	for k := 0; k < n; k++ {
		ins = append(ins, row...)
	}
	out := make([]float64, len(ins))
	if err := l.Sample(rng, ins, out, 1); err != nil {
		t.Fatal(err)
	}
	freq := make([]float64, 6)
	for k, v := range out {
		freq[k%6] += v / n
	}
	p := make([]float64, 6)
	l.Mean(row, p)
	for k := range p {
		if math.Abs(freq[k]-p[k]) > 5*math.Sqrt(p[k]*(1-p[k])/n)+1e-9 {
			t.Errorf("potts sample freq %d = %v, want %v", k, freq[k], p[k])
		}
	}
	// gradient identity: ∂Γ/∂θ_ia = p_ia
	grads := NewGrads(l)
	l.GradCGF(row, grads)
	for k := range p {
		if grads[0][k] != p[k] {
			t.Errorf("potts GradCGF[%d] = %v, want %v", k, grads[0][k], p[k])
		}
	}
}

// TestGradLogWeightIdentity checks ∂Γ/∂ξ = ⟨-∂U/∂ξ⟩ by averaging
// GradLogWeight over exact samples.
func TestGradLogWeightIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 50000
	for _, l := range testLayers() {
		x := 0.3
		in := make([]float64, n)
		for k := range in {
			in[k] = x
		}
		h := make([]float64, n)
		if err := l.Sample(rng, in, h, 1); err != nil {
			t.Fatal(err)
		}
		gw, gc := NewGrads(l), NewGrads(l)
		l.GradLogWeight(h, gw)
		l.GradCGF(in[:1], gc)
		for p := range gw {
			// loose statistical tolerance: 6 standard errors of a variable of
			// scale max(1, |value|, Var)
			_, _, v := refMoments(l, 0, x, 1)
			tol := 6 * math.Sqrt((1+v*v+gc[p][0]*gc[p][0])/n) * 3
			if math.Abs(gw[p][0]-gc[p][0]) > tol {
				t.Errorf("%s: ⟨-∂U/∂%s⟩ = %v, ∂Γ = %v", desc(l), l.ParamNames()[p], gw[p][0], gc[p][0])
			}
		}
	}
}
