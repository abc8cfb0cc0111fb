package rbm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The generic tests run over every registered layer kind (LayerKinds), so
// a new kind is tested by registering it; what they need to know about a
// kind they read from its optional interfaces or probe numerically. (A
// package-level variable would be initialised before the layers' init
// functions have registered them.)
func allKinds() []string {
	kinds := LayerKinds()
	if len(kinds) < 7 {
		panic("rbm tests: the registry holds only " + strings.Join(kinds, ", "))
	}
	return kinds
}

// makeLayer returns a layer of the registered kind with n units (3 colours
// for kinds with colours).
func makeLayer(kind string, n int) Layer {
	l, err := NewLayer(kind, n, 3)
	if err != nil {
		panic(err)
	}
	return l
}

// bounded reports a kind whose configurations can be enumerated.
func bounded(kind string) bool {
	_, ok := makeLayer(kind, 1).(Discrete)
	return ok
}

// explosive reports a kind whose Γ grows exponentially (Poisson):
// Γ(1000) overflows.
func explosive(kind string) bool {
	l := makeLayer(kind, 1)
	if l.States() > 1 {
		return false
	}
	g := []float64{0}
	l.UnitCGF(0, []float64{1000}, g)
	return math.IsInf(g[0], 1)
}

// growsBothWays reports a kind whose Γ grows faster than linearly towards
// negative inputs (Gaussian, dReLU: Γ(−1e4) ≫ 1e4), so that no Poisson
// unit can face it with weights of either sign.
func growsBothWays(kind string) bool {
	l := makeLayer(kind, 1)
	if l.States() > 1 {
		return false
	}
	g := []float64{0}
	l.UnitCGF(0, []float64{-1e4}, g)
	return g[0] > 100*1e4
}

// pairSetup returns the unit counts and weight sign for a layer pair, or
// ok = false when the pair is not normalisable for any weights of both
// signs (a Poisson unit facing a layer whose Γ grows quadratically both
// ways).
func pairSetup(vk, hk string) (nv, nh int, negative, ok bool) {
	if (explosive(vk) && growsBothWays(hk)) || (explosive(hk) && growsBothWays(vk)) {
		return 0, 0, false, false
	}
	negative = (explosive(vk) || explosive(hk)) && !bounded(vk) && !bounded(hk)
	switch {
	case bounded(vk):
		nv, nh = 4, 3
		if makeLayer(vk, 1).States() > 1 {
			nv = 2
		}
	case bounded(hk):
		nv, nh = 3, 3
		if makeLayer(hk, 1).States() > 1 {
			nh = 2
		}
	default:
		nv, nh = 1, 2
	}
	return nv, nh, negative, true
}

// discreteMarginal returns the exact distribution of the enumerable layer
// (visible if bounded, else hidden) of m, indexed like fillConfig.
func discreteMarginal(m *RBM, visible bool) []float64 {
	enum, other := m.Visible, m.Hidden
	if !visible {
		enum, other = m.Hidden, m.Visible
	}
	total := configs(enum)
	x := mat.NewDense(total, Width(enum), nil)
	for s := 0; s < total; s++ {
		fillConfig(enum, enum.(Discrete).UnitValues(), s, x.RawRowView(s))
	}
	var lw []float64
	if visible {
		f := m.FreeEnergy(x)
		for _, v := range f {
			lw = append(lw, -v)
		}
	} else {
		in := m.VisibleInput(x)
		g := make([]float64, total)
		e := make([]float64, total)
		other.CGF(in.RawMatrix().Data, g)
		enum.Energy(x.RawMatrix().Data, e)
		for k := range g {
			lw = append(lw, g[k]-e[k])
		}
	}
	lz := logSumExp(lw)
	p := make([]float64, total)
	for k := range p {
		p[k] = math.Exp(lw[k] - lz)
	}
	return p
}

// configIndex inverts fillConfig.
func configIndex(l Layer, row []float64) int {
	vals := l.(Discrete).UnitValues()
	s, mul := 0, 1
	q := l.States()
	for i := 0; i < l.Len(); i++ {
		d := -1
		for k, v := range vals {
			if slicesEqual(v, row[i*q:(i+1)*q]) {
				d = k
			}
		}
		if d < 0 {
			panic(fmt.Sprintf("unit %d: %v is not a value of a %s unit", i, row[i*q:(i+1)*q], l.Kind()))
		}
		s += d * mul
		mul *= len(vals)
	}
	return s
}

func slicesEqual(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// latticeSupport reports a scalar layer whose units take the integers
// (Poisson): finite energy at 0 and 1, infinite at ½.
func latticeSupport(l Layer) bool {
	if _, ok := l.(Discrete); ok || l.States() > 1 {
		return false
	}
	e := []float64{0}
	at := func(h float64) float64 {
		row := make([]float64, l.Len())
		row[0] = h
		l.Energy(row, e)
		return e[0]
	}
	return !math.IsInf(at(0), 0) && !math.IsInf(at(1), 0) && math.IsInf(at(0.5), 1)
}

// continuousMarginal bins the marginal of a single visible unit, computed by
// quadrature (or summation for Poisson) of exp(-U_v(v) + Σ_µ Γ_µ(v w_µ)).
// It returns bin edges (or nil for integer bins 0..K-1 with the tail in the
// last) and the bin probabilities.
func continuousMarginal(m *RBM) (edges, p []float64) {
	nh := m.Hidden.Len()
	logf := func(v float64) float64 {
		e := []float64{0}
		m.Visible.Energy([]float64{v}, e)
		s := -e[0]
		g := []float64{0}
		for mu := 0; mu < nh; mu++ {
			m.Hidden.UnitCGF(mu, []float64{v * m.W.At(0, mu)}, g)
			s += g[0]
		}
		return s
	}
	if latticeSupport(m.Visible) {
		var lw []float64
		for v := 0; v < 200; v++ {
			lw = append(lw, logf(float64(v)))
		}
		lz := logSumExp(lw)
		k := 0
		for k < len(lw) && lw[k]-lz > -12*math.Ln10 || k < 3 {
			k++
		}
		p = make([]float64, k+1)
		for v := range lw {
			p[min(v, k)] += math.Exp(lw[v] - lz)
		}
		return nil, p
	}
	// bulk: where log density is within 30 of its max, on a coarse grid
	mx := math.Inf(-1)
	for v := -60.0; v <= 60; v += 0.01 {
		mx = math.Max(mx, logf(v))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for v := -60.0; v <= 60; v += 0.01 {
		if logf(v) > mx-30 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	// A bounded support (truncexp) whose ends hold mass: bin up to its
	// ends, which the grid misses by up to one step.
	if sLo, sHi := supportOf(m.Visible); !math.IsInf(sLo, 0) && !math.IsInf(sHi, 0) {
		if lo-0.02 < sLo {
			lo = sLo
		}
		if hi+0.02 > sHi {
			hi = sHi
		}
	}
	d := (hi - lo) / 30
	k0, k1 := math.Floor(lo/d), math.Ceil(hi/d)
	for k := k0; k <= k1; k++ {
		edges = append(edges, k*d)
	}
	p = make([]float64, len(edges)-1)
	tot := 0.0
	for b := range p {
		a, c := edges[b], edges[b+1]
		const n = 200
		s := 0.0
		for i := 0; i <= n; i++ {
			w := 2.0
			if i == 0 || i == n {
				w = 1
			} else if i%2 == 1 {
				w = 4
			}
			s += w * math.Exp(logf(a+(c-a)*float64(i)/n)-mx)
		}
		p[b] = s * (c - a) / n / 3
		tot += p[b]
	}
	for b := range p {
		p[b] /= tot
	}
	return edges, p
}

func binOf(edges []float64, v float64) int {
	if v < edges[0] {
		return 0
	}
	for b := 1; b < len(edges); b++ {
		if v < edges[b] {
			return b - 1
		}
	}
	return len(edges) - 2
}

func tv(p, q []float64) float64 {
	s := 0.0
	for k := range p {
		s += math.Abs(p[k] - q[k])
	}
	return s / 2
}

// gibbsFrequencies runs chains and histograms the statistic idx of every
// chain after every sweep.
func gibbsFrequencies(t *testing.T, c *Chains, burn, sweeps, bins int, idx func(v, h []float64) int) []float64 {
	t.Helper()
	ctx := context.Background()
	if err := c.Run(ctx, burn, nil); err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, bins)
	b := c.Len()
	for s := 0; s < sweeps; s++ {
		if err := c.Sweep(); err != nil {
			t.Fatal(err)
		}
		for r := 0; r < b; r++ {
			counts[idx(c.V.RawRowView(r), c.H.RawRowView(r))]++
		}
	}
	for k := range counts {
		counts[k] /= float64(b * sweeps)
	}
	return counts
}

// TestGibbsMatchesExact: for every normalisable layer pair, 10⁶ Gibbs
// samples (1000 chains × 1000 sweeps) of the enumerable layer's marginal, or
// of a single continuous visible unit's binned marginal, are within total
// variation 0.01 of the exact distribution.
func TestGibbsMatchesExact(t *testing.T) {
	for _, vk := range allKinds() {
		for _, hk := range allKinds() {
			nv, nh, neg, ok := pairSetup(vk, hk)
			if !ok {
				continue
			}
			t.Run(vk+"-"+hk, func(t *testing.T) {
				t.Parallel()
				m := New(makeLayer(vk, nv), makeLayer(hk, nh), Seed(11), WeightScale(0.6))
				randomiseFields(m, 12)
				if neg {
					raw := m.W.RawMatrix().Data
					for k := range raw {
						raw[k] = -math.Abs(raw[k])
					}
				}
				c, err := NewChains(m, 1000, 13)
				if err != nil {
					t.Fatal(err)
				}
				var want, got []float64
				switch {
				case bounded(vk):
					want = discreteMarginal(m, true)
					got = gibbsFrequencies(t, c, 100, 1000, len(want), func(v, h []float64) int { return configIndex(m.Visible, v) })
				case bounded(hk):
					want = discreteMarginal(m, false)
					got = gibbsFrequencies(t, c, 100, 1000, len(want), func(v, h []float64) int { return configIndex(m.Hidden, h) })
				default:
					edges, p := continuousMarginal(m)
					want = p
					got = gibbsFrequencies(t, c, 100, 1000, len(p), func(v, h []float64) int {
						if edges == nil {
							return min(int(v[0]), len(p)-1)
						}
						return binOf(edges, v[0])
					})
				}
				if d := tv(got, want); d > 0.01 {
					t.Errorf("%v: TV(Gibbs, exact) = %.4f > 0.01\n got  %v\n want %v", m, d, got, want)
				} else {
					t.Logf("%v: TV = %.4f over %d bins", m, d, len(want))
				}
			})
		}
	}
}

// TestGibbsTemperatureClampAndPT checks sampling at β = 0.4 against the
// exact distribution of the equivalently scaled model, clamped sampling
// against the exact conditional, and parallel tempering's β = 1 replica.
func TestGibbsTemperatureClampAndPT(t *testing.T) {
	m := New(Binary(5), Binary(4), Seed(21), WeightScale(1.5))
	randomiseFields(m, 22)
	exact := discreteMarginal(m, true)
	idx := func(v, h []float64) int { return configIndex(m.Visible, v) }

	t.Run("beta", func(t *testing.T) {
		const beta = 0.4
		scaled := m.Clone()
		scaled.W.Scale(beta, scaled.W)
		for _, l := range []Layer{scaled.Visible, scaled.Hidden} {
			for _, ps := range l.Params() {
				for k := range ps {
					ps[k] *= beta
				}
			}
		}
		want := discreteMarginal(scaled, true)
		c, err := NewChains(m, 1000, 3)
		if err != nil {
			t.Fatal(err)
		}
		c.Beta = beta
		got := gibbsFrequencies(t, c, 100, 1000, len(want), idx)
		if d := tv(got, want); d > 0.01 {
			t.Errorf("beta=%v: TV = %v", beta, d)
		}
	})

	t.Run("float32", func(t *testing.T) {
		c, err := NewChains(m, 1000, 8)
		if err != nil {
			t.Fatal(err)
		}
		c.Products = "float32"
		got := gibbsFrequencies(t, c, 100, 1000, len(exact), idx)
		if d := tv(got, exact); d > 0.01 {
			t.Errorf("float32 products: TV = %v", d)
		}
	})

	t.Run("clamp", func(t *testing.T) {
		// clamp visible units 0 and 2 to (1, 0): exact conditional over the rest
		want := make([]float64, len(exact))
		z := 0.0
		for s, p := range exact {
			if s&1 == 1 && s&4 == 0 {
				want[s] = p
				z += p
			}
		}
		for s := range want {
			want[s] /= z
		}
		c, err := NewChains(m, 1000, 4)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < c.Len(); r++ {
			c.V.Set(r, 0, 1)
			c.V.Set(r, 2, 0)
		}
		c.ClampVisible = []bool{true, false, true, false, false}
		got := gibbsFrequencies(t, c, 100, 1000, len(want), idx)
		if d := tv(got, want); d > 0.01 {
			t.Errorf("clamped: TV = %v", d)
		}
	})

	t.Run("tempering", func(t *testing.T) {
		pt, err := NewTempering(m, []float64{0.25, 0.5, 0.75, 1}, 500, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := pt.Run(context.Background(), 100, nil); err != nil {
			t.Fatal(err)
		}
		counts := make([]float64, len(exact))
		const sweeps = 2000
		for s := 0; s < sweeps; s++ {
			if err := pt.Run(context.Background(), 1, nil); err != nil {
				t.Fatal(err)
			}
			top := pt.Replicas[len(pt.Replicas)-1]
			for r := 0; r < top.Len(); r++ {
				counts[idx(top.V.RawRowView(r), nil)]++
			}
		}
		for k := range counts {
			counts[k] /= float64(500 * sweeps)
		}
		if d := tv(counts, exact); d > 0.01 {
			t.Errorf("tempering: TV = %v", d)
		}
		for k, r := range pt.SwapRates() {
			if !(r > 0.05 && r <= 1) {
				t.Errorf("swap rate %d = %v", k, r)
			}
		}
		t.Logf("swap rates %v", pt.SwapRates())
	})
}

// TestChainsReproducible: same seed, same states, whatever GOMAXPROCS
// (the row ranges of the cores change, the streams of the row blocks and
// the states do not): bitwise for binary layers on either BLAS (their
// samples are certified against the float64 products, which a BLAS may
// round differently for different row splits), and for continuous layers
// with the pure-Go BLAS.
func TestChainsReproducible(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	models := []*RBM{New(Binary(784), Binary(500), Seed(3), WeightScale(0.05))}
	if BLASBackend() == "gonum" {
		models = append(models, New(Binary(20), ReLU(7), Seed(2)))
	}
	for _, m := range models {
		run := func(procs int) (*mat.Dense, *mat.Dense) {
			runtime.GOMAXPROCS(procs)
			c, err := NewChains(m, 70, 99)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Run(context.Background(), 5, nil); err != nil {
				t.Fatal(err)
			}
			return c.V, c.H
		}
		v1, h1 := run(1)
		for _, procs := range []int{2, 3} {
			v, h := run(procs)
			if !mat.Equal(v, v1) || !mat.Equal(h, h1) {
				t.Fatalf("%s-%s, GOMAXPROCS=%d: the states differ from GOMAXPROCS=1 with the same seed", m.Visible.Kind(), m.Hidden.Kind(), procs)
			}
		}
	}
}

// TestChainsCertifiedProducts: binary and spin chains with the default
// certified float32 products give exactly the states of float64 products
// from the same seed, over many sweeps, with small and with large weights
// (where the float32 error straddles decisions and inputs are recomputed),
// at β = 1 and 0.3, with a clamped unit.
func TestChainsCertifiedProducts(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     *RBM
		beta  float64
		clamp bool
	}{
		{"binary small", New(Binary(60), Binary(40), Seed(3), WeightScale(0.1)), 1, false},
		{"binary large", New(Binary(60), Binary(40), Seed(4), WeightScale(3)), 1, true},
		{"spin large β=0.3", New(Spin(50), Spin(30), Seed(5), WeightScale(4)), 0.3, false},
		{"binary-relu", New(Binary(30), ReLU(20), Seed(6), WeightScale(1)), 1, false},
		{"gaussian-binary", New(Gaussian(30), Binary(40), Seed(9), WeightScale(2)), 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(products string) (*Chains, error) {
				ch, err := NewChains(c.m, 64, 7)
				if err != nil {
					return nil, err
				}
				ch.Products, ch.Beta = products, c.beta
				if c.clamp {
					ch.ClampVisible = make([]bool, c.m.Visible.Len())
					ch.ClampVisible[3] = true
				}
				return ch, ch.Run(context.Background(), 300, nil)
			}
			a, err := run("")
			if err != nil {
				t.Fatal(err)
			}
			b, err := run("float64")
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(a.V, b.V) || !mat.Equal(a.H, b.H) {
				t.Fatalf("certified float32 chains differ from float64 chains with the same seed")
			}
			if strings.Contains(c.name, "large") && a.recomputed.Load() == 0 {
				t.Errorf("no input was recomputed in float64: the straddling case was not exercised")
			}
			t.Logf("%d inputs recomputed in float64", a.recomputed.Load())
		})
	}
	// the check is sensitive: uncertified float32 products (ReLU hidden
	// units sampled from perturbed inputs) drift away from float64.
	m := New(Binary(60), ReLU(40), Seed(8), WeightScale(1))
	var states []*mat.Dense
	for _, p := range []string{"float32", "float64"} {
		ch, err := NewChains(m, 64, 7)
		if err != nil {
			t.Fatal(err)
		}
		ch.Products = p
		if err := ch.Run(context.Background(), 50, nil); err != nil {
			t.Fatal(err)
		}
		states = append(states, ch.H)
	}
	if mat.Equal(states[0], states[1]) {
		t.Error("float32 ReLU chains equal float64 ones: the comparison cannot detect a difference")
	}
}

func ExampleChains() {
	m := New(Binary(6), Binary(3), Seed(1), WeightScale(0.5))
	c, err := NewChains(m, 100, 42)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := c.Run(context.Background(), 10, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Len(), c.Sweeps())
	// Output: 100 10
}

// TestChainsErrorsAndCancel: a Poisson overflow stops the run with an
// error naming the unit; a cancelled context stops it with ctx's error.
func TestChainsErrorsAndCancel(t *testing.T) {
	m := New(Binary(3), Poisson(2), Seed(1), WeightScale(0))
	m.Hidden.(*PoissonLayer).Theta[1] = 40 // mean e^40 > 1e15
	_, err := NewChains(m, 10, 1)
	if err == nil || !strings.Contains(err.Error(), "poisson unit 1") {
		t.Fatalf("want an overflow error naming poisson unit 1, got %v", err)
	}
	m2 := New(Binary(10), Binary(5), Seed(1))
	c, err := NewChains(m2, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = c.Run(ctx, 1000000, func(done, total int) { cancel() })
	if !errors.Is(err, context.Canceled) || c.Sweeps() >= 1000000 {
		t.Fatalf("after cancel: error %v, %d sweeps; want context.Canceled early", err, c.Sweeps())
	}
}
