package analysis

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func gaussianMatrix(rows, cols int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(rows, cols, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return x
}

// TestCovarianceTwoByTwo compares the spectrum and PCA of 2-D data with the
// closed-form eigenvalues of a 2×2 symmetric matrix computed by hand.
func TestCovarianceTwoByTwo(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{1, 2, 3, 3, 0, -1, 4, 8})
	// Centred moments by hand.
	mx, my := 2.0, 3.0
	var sxx, syy, sxy float64
	for r := 0; r < 4; r++ {
		dx, dy := x.At(r, 0)-mx, x.At(r, 1)-my
		sxx += dx * dx / 4
		syy += dy * dy / 4
		sxy += dx * dy / 4
	}
	tr, det := sxx+syy, sxx*syy-sxy*sxy
	l1 := tr/2 + math.Sqrt(tr*tr/4-det)
	l2 := tr/2 - math.Sqrt(tr*tr/4-det)
	sp, err := Spectrum(context.Background(), x, CovarianceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sp[0]-l1) > 1e-12 || math.Abs(sp[1]-l2) > 1e-12 {
		t.Errorf("spectrum %v, want [%v %v]", sp, l1, l2)
	}
	p, err := PCA(context.Background(), x, 1, CovarianceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The leading eigenvector of [[a,b],[b,c]] is ∝ (b, λ1 − a).
	ex, ey := sxy, l1-sxx
	nrm := math.Hypot(ex, ey)
	if d := math.Abs(p.Components.At(0, 0)*ex/nrm + p.Components.At(1, 0)*ey/nrm); math.Abs(d-1) > 1e-12 {
		t.Errorf("leading component %v not parallel to (%v, %v)", mat.Formatted(p.Components), ex, ey)
	}
	proj := p.Project(x)
	v := 0.0
	for r := 0; r < 4; r++ {
		v += proj.At(r, 0) * proj.At(r, 0) / 4
	}
	if math.Abs(v-l1) > 1e-12 {
		t.Errorf("variance of the projection %v, want λ1 = %v", v, l1)
	}
}

// TestCovarianceWeightedBlocks compares Covariance over more rows than one
// rank-update block, with weights, centred and uncentred, against the
// entrywise sums computed here, and checks that UnitVectors is wᵀ and that
// a cancelled context stops the computation.
func TestCovarianceWeightedBlocks(t *testing.T) {
	const rows, cols = covBlock + 517, 5
	x := gaussianMatrix(rows, cols, 21)
	rng := rand.New(rand.NewPCG(22, 22))
	w := make([]float64, rows)
	for r := range w {
		w[r] = rng.Float64() * 3
		for c := 0; c < cols; c++ { // a non-zero mean, so centring matters
			x.Set(r, c, x.At(r, c)+float64(c))
		}
	}
	for _, unc := range []bool{false, true} {
		got, err := Covariance(context.Background(), x, CovarianceOptions{Weights: w, Uncentred: unc})
		if err != nil {
			t.Fatal(err)
		}
		tot := 0.0
		mean := make([]float64, cols)
		for r := 0; r < rows; r++ {
			tot += w[r]
			for c := 0; c < cols; c++ {
				mean[c] += w[r] * x.At(r, c)
			}
		}
		for c := range mean {
			mean[c] /= tot
			if unc {
				mean[c] = 0
			}
		}
		for a := 0; a < cols; a++ {
			for b := 0; b < cols; b++ {
				want := 0.0
				for r := 0; r < rows; r++ {
					want += w[r] * (x.At(r, a) - mean[a]) * (x.At(r, b) - mean[b])
				}
				want /= tot
				if d := math.Abs(got.At(a, b) - want); d > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("uncentred=%v: C[%d][%d] = %v, want %v", unc, a, b, got.At(a, b), want)
				}
			}
		}
	}
	if _, err := Covariance(context.Background(), x, CovarianceOptions{Weights: w[:3]}); err == nil {
		t.Error("3 weights for many rows: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Spectrum(ctx, x, CovarianceOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Spectrum with a cancelled context: err = %v, want context.Canceled", err)
	}
	u := UnitVectors(x.Slice(0, 4, 0, cols).(*mat.Dense))
	if r, c := u.Dims(); r != cols || c != 4 || u.At(3, 1) != x.At(1, 3) {
		t.Errorf("UnitVectors of a 4×%d matrix: %d×%d, [3][1] = %v, want its transpose", cols, r, c, u.At(3, 1))
	}
}

// TestMarchenkoPastur checks the density by numerical integration (mass 1,
// mean σ²) and the top eigenvalue of a white Gaussian sample against the
// right edge.
func TestMarchenkoPastur(t *testing.T) {
	for _, c := range []struct{ r, s2 float64 }{{0.25, 1}, {0.6, 2.5}} {
		lo, hi := MarchenkoPasturEdges(c.r, c.s2)
		const steps = 200000
		mass, mean := 0.0, 0.0
		h := (hi - lo) / steps
		for k := 0; k < steps; k++ { // midpoint rule
			l := lo + (float64(k)+0.5)*h
			d := MarchenkoPasturDensity(l, c.r, c.s2)
			mass += d * h
			mean += l * d * h
		}
		if math.Abs(mass-1) > 1e-3 || math.Abs(mean-c.s2) > 1e-3*c.s2 {
			t.Errorf("r=%v σ²=%v: mass %v mean %v, want 1 and σ²", c.r, c.s2, mass, mean)
		}
	}
	x := gaussianMatrix(1600, 400, 3) // r = 0.25: edges 0.25 and 2.25
	sp, err := Spectrum(context.Background(), x, CovarianceOptions{Uncentred: true})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := MarchenkoPasturEdges(0.25, 1)
	if math.Abs(sp[0]-hi) > 0.1 || math.Abs(sp[len(sp)-1]-lo) > 0.05 {
		t.Errorf("extreme eigenvalues %v, %v; MP edges %v, %v", sp[0], sp[len(sp)-1], lo, hi)
	}
}

// TestSingularValuesAndRank compares singular values with the square roots
// of the eigenvalues of WᵀW and counts the rank of a rank-3 matrix plus noise.
func TestSingularValuesAndRank(t *testing.T) {
	a, b := gaussianMatrix(30, 3, 4), gaussianMatrix(3, 12, 5)
	w := mat.NewDense(30, 12, nil)
	w.Mul(a, b)
	noise := gaussianMatrix(30, 12, 6)
	noise.Scale(1e-4, noise)
	w.Add(w, noise)
	sv, err := SingularValues(w)
	if err != nil {
		t.Fatal(err)
	}
	g := mat.NewSymDense(12, nil)
	g.SymOuterK(1, w.T())
	var es mat.EigenSym
	es.Factorize(g, false)
	ev := es.Values(nil)
	sort.Sort(sort.Reverse(sort.Float64Slice(ev)))
	for j := 0; j < 3; j++ {
		if math.Abs(sv[j]-math.Sqrt(ev[j])) > 1e-9*sv[0] {
			t.Errorf("σ_%d = %v, √eig = %v", j, sv[j], math.Sqrt(ev[j]))
		}
	}
	if r, _ := Rank(w, 0.02); r != 3 {
		t.Errorf("rank %d, want 3", r)
	}
}

func TestParticipationRatios(t *testing.T) {
	x := []float64{0, 2, -2, 0, 2, 0}
	for _, e := range []float64{1, 2, 3} {
		if v := PR(x, e); math.Abs(v-3) > 1e-12 {
			t.Errorf("PR_%v of three equal moduli = %v, want 3", e, v)
		}
	}
	y := []float64{1, 2, 3}
	want := 36.0 / 14 // (1+2+3)²/(1+4+9), e = 1
	if v := PR(y, 1); math.Abs(v-want) > 1e-12 {
		t.Errorf("PR_1(1,2,3) = %v, want %v", v, want)
	}
	if v := PR([]float64{2, 4, 6}, 1); math.Abs(v-want) > 1e-12 {
		t.Errorf("PR not scale invariant: %v", v)
	}
	// Two identical units with ω = ½ count as one.
	if v := WeightedPR([]float64{1, 1}, []float64{0.5, 0.5}, 3); math.Abs(v-1) > 1e-12 {
		t.Errorf("weighted PR of duplicates %v, want 1", v)
	}
}

// TestSparsityOverlapsPotts builds Potts weights whose per-site norms are
// known: unit 0 uses 2 of 4 sites with equal norms (p_0 = 2/4), unit 1 all 4
// sites (p_1 = 1).
func TestSparsityOverlapsPotts(t *testing.T) {
	const n, q = 4, 3
	w := mat.NewDense(n*q, 3, nil)
	// Unit 0: sites 1 and 3, zero-sum over states.
	for _, i := range []int{1, 3} {
		w.Set(i*q+0, 0, 1)
		w.Set(i*q+1, 0, -1)
	}
	for i := 0; i < n; i++ {
		w.Set(i*q+2, 1, 2)
		w.Set(i*q+0, 1, -2)
	}
	// Unit 2 = −unit 0 scaled: overlap −1 with unit 0.
	for r := 0; r < n*q; r++ {
		w.Set(r, 2, -3*w.At(r, 0))
	}
	p, per, err := Sparsity(w, q)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(per[0]-0.5) > 1e-12 || math.Abs(per[1]-1) > 1e-12 || math.Abs(p-(0.5+1+0.5)/3) > 1e-12 {
		t.Errorf("sparsity %v per unit %v", p, per)
	}
	o := Overlaps(w)
	// Units 0 and 1 share sites 1 and 3: Σ w0·w1 = 2·(1·(−2)) = −4; norms √4 and √32.
	if v := o.At(0, 1); math.Abs(v-(-4/math.Sqrt(4*32))) > 1e-12 {
		t.Errorf("O_01 = %v", v)
	}
	if o.At(0, 0) != 1 || math.Abs(o.At(0, 2)+1) > 1e-12 {
		t.Errorf("O_00 = %v, O_02 = %v; want 1 and −1", o.At(0, 0), o.At(0, 2))
	}
	om := MaxOverlaps(o)
	if math.Abs(om[0]-1) > 1e-12 || math.Abs(om[1]-4/math.Sqrt(128)) > 1e-12 {
		t.Errorf("O_max = %v", om)
	}
	dw := DuplicateWeights(o, 0.9)
	if dw[0] != 0.5 || dw[1] != 1 || dw[2] != 0.5 {
		t.Errorf("duplicate weights %v, want [0.5 1 0.5]", dw)
	}
}

func TestActivatedUnitsAndMode(t *testing.T) {
	h := mat.NewDense(3, 4, []float64{
		0, 5, 5, 0,
		1, 1, 1, 1,
		0, 0, 0, 7,
	})
	l := ActivatedUnits(h, nil)
	if math.Abs(l[0]-2) > 1e-12 || math.Abs(l[1]-4) > 1e-12 || math.Abs(l[2]-1) > 1e-12 {
		t.Errorf("L = %v, want [2 4 1]", l)
	}
	// A column whose values sit mostly at −1: mode ≈ −1, and L measured from it.
	hh := mat.NewDense(5, 1, []float64{-1, -1, -1, 3, 0.2})
	h0 := DataMode(hh, 100)
	if math.Abs(h0[0]+1) > 0.03 {
		t.Errorf("data mode %v, want ≈ −1", h0)
	}
}

// TestActivatedUnitsWeighted duplicates the units of an RBM with random
// weights: with the duplicate weights of Eq. 26 the copies count once, so the
// weighted L of the doubled model equals L of the original, while plain L
// counts every copy (PR is homogeneous: doubling every unit doubles it).
func TestActivatedUnitsWeighted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	const n, m, b = 12, 5, 7
	w := mat.NewDense(n, m, nil)
	h := mat.NewDense(b, m, nil)
	for i := 0; i < n; i++ {
		for mu := 0; mu < m; mu++ {
			w.Set(i, mu, rng.NormFloat64())
		}
	}
	for r := 0; r < b; r++ {
		for mu := 0; mu < m; mu++ {
			h.Set(r, mu, rng.ExpFloat64())
		}
	}
	h0 := []float64{0.1, 0, 0.3, 0, 0.2}
	// The doubled model: unit m+µ is a copy of unit µ, scaled (the overlap is scale free), with the same activity.
	w2, h2 := mat.NewDense(n, 2*m, nil), mat.NewDense(b, 2*m, nil)
	h02 := append(append([]float64(nil), h0...), h0...)
	for mu := 0; mu < m; mu++ {
		for i := 0; i < n; i++ {
			w2.Set(i, mu, w.At(i, mu))
			w2.Set(i, m+mu, 2.5*w.At(i, mu))
		}
		for r := 0; r < b; r++ {
			h2.Set(r, mu, h.At(r, mu))
			h2.Set(r, m+mu, h.At(r, mu))
		}
	}
	omega := DuplicateWeights(Overlaps(w2), 0.9)
	for mu, o := range omega {
		if o != 0.5 {
			t.Fatalf("ω_%d = %v, want ½: random 12-dimensional weights should not overlap beyond 0.9", mu, o)
		}
	}
	want, plain := ActivatedUnits(h, h0), ActivatedUnits(h2, h02)
	got := ActivatedUnitsWeighted(h2, h02, omega)
	ones := make([]float64, m)
	for mu := range ones {
		ones[mu] = 1
	}
	same := ActivatedUnitsWeighted(h, h0, ones)
	for r := range want {
		if math.Abs(got[r]-want[r]) > 1e-12 {
			t.Errorf("row %d: weighted L of the doubled model %v, want L of the original %v", r, got[r], want[r])
		}
		if math.Abs(plain[r]-2*want[r]) > 1e-12 {
			t.Errorf("row %d: plain L of the doubled model %v, want twice %v", r, plain[r], want[r])
		}
		if math.Abs(same[r]-want[r]) > 1e-12 {
			t.Errorf("row %d: L with ω = 1 is %v, want ActivatedUnits' %v", r, same[r], want[r])
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ActivatedUnitsWeighted accepted 4 weights for 5 units")
		}
	}()
	ActivatedUnitsWeighted(h, h0, ones[:4])
}

// TestKMeansExact compares k-means with an exhaustive search over all
// 2-partitions of a small 1-D data set, and checks the variance-explained
// curve on three separated blobs with mirrored copies.
func TestKMeansExact(t *testing.T) {
	pts := []float64{0, 0.5, 1.7, 4, 4.2, 9}
	x := mat.NewDense(len(pts), 1, pts)
	best := math.Inf(1)
	for mask := 1; mask < 1<<len(pts)-1; mask++ {
		w := 0.0
		for side := 0; side < 2; side++ {
			s, s2, c := 0.0, 0.0, 0.0
			for i, p := range pts {
				if (mask>>i)&1 == side {
					s, s2, c = s+p, s2+p*p, c+1
				}
			}
			w += s2 - s*s/c
		}
		best = math.Min(best, w)
	}
	res, err := KMeans(context.Background(), x, 2, KMeansOptions{Restarts: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.WCSS-best) > 1e-9 {
		t.Errorf("WCSS %v, exhaustive optimum %v", res.WCSS, best)
	}

	// 3 blocks of 20 units in N = 50, each unit possibly mirrored (sign flip).
	rng := rand.New(rand.NewPCG(9, 9))
	centres := gaussianMatrix(3, 50, 10)
	w := mat.NewDense(50, 60, nil) // N×M weights
	for mu := 0; mu < 60; mu++ {
		sign := 1.0
		if rng.IntN(2) == 0 {
			sign = -1
		}
		for i := 0; i < 50; i++ {
			w.Set(i, mu, sign*(centres.At(mu/20, i)+0.05*rng.NormFloat64()))
		}
	}
	units := UnitVectors(w)
	ve, err := VarianceExplained(context.Background(), units, 5, KMeansOptions{Restarts: 5, Mirror: true, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ve[0] != 0 || ve[1] > 0.9 || ve[2] < 0.99 || ve[4] < ve[2]-1e-9 {
		t.Errorf("variance explained %v: want 0, <0.9, ≥0.99 at k=3, nondecreasing", ve)
	}
	raw, _ := VarianceExplained(context.Background(), units, 3, KMeansOptions{Restarts: 5, Seed: 2})
	if raw[2] > 0.99 {
		t.Errorf("without sign canonicalisation VE(3) = %v: mirrored units should not fit 3 clusters", raw[2])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := KMeans(ctx, units, 3, KMeansOptions{Mirror: true, Seed: 1}); err == nil {
		t.Error("cancelled context not reported")
	}
}

// TestFastICA mixes a uniform and a Laplace source and checks that each is
// recovered (up to sign, order and scale) with correlation above 0.99.
func TestFastICA(t *testing.T) {
	const b = 4000
	rng := rand.New(rand.NewPCG(11, 11))
	s := mat.NewDense(b, 2, nil)
	for r := 0; r < b; r++ {
		s.Set(r, 0, (rng.Float64()-0.5)*math.Sqrt(12))
		s.Set(r, 1, rng.ExpFloat64()*float64(1-2*rng.IntN(2))/math.Sqrt2)
	}
	a := mat.NewDense(3, 2, []float64{1, 0.6, 0.4, 1, -0.7, 0.3})
	x := mat.NewDense(b, 3, nil)
	x.Mul(s, a.T())
	res, err := FastICA(context.Background(), x, 2, ICAOptions{MaxIter: 500, Tol: 1e-8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Errorf("not converged after %d iterations", res.Iterations)
	}
	corr := func(u, v int) float64 {
		var su, sv, suu, svv, suv float64
		for r := 0; r < b; r++ {
			p, q := res.Sources.At(r, u), s.At(r, v)
			su, sv, suu, svv, suv = su+p, sv+q, suu+p*p, svv+q*q, suv+p*q
		}
		n := float64(b)
		return (suv/n - su*sv/n/n) / math.Sqrt((suu/n-su*su/n/n)*(svv/n-sv*sv/n/n))
	}
	for v := 0; v < 2; v++ {
		m := math.Max(math.Abs(corr(0, v)), math.Abs(corr(1, v)))
		if m < 0.99 {
			t.Errorf("source %d recovered with |corr| %v", v, m)
		}
	}
	// Mixing reconstructs the centred data.
	rec := mat.NewDense(b, 3, nil)
	rec.Mul(res.Sources, res.Mixing.T())
	maxErr := 0.0
	for r := 0; r < b; r++ {
		for c := 0; c < 3; c++ {
			maxErr = math.Max(maxErr, math.Abs(rec.At(r, c)+res.Mean[c]-x.At(r, c)))
		}
	}
	// x has rank 2, so two components reconstruct it exactly.
	if maxErr > 1e-8 {
		t.Errorf("reconstruction error %v", maxErr)
	}
}
