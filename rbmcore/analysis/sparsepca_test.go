package analysis

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// spikedData returns b rows of n features: unit Gaussian noise plus two
// latent factors of standard deviations 3 and 2 loading (with equal
// weights) on the disjoint supports s1 and s2.
func spikedData(b, n int, s1, s2 []int, seed uint64) *mat.Dense {
	rng := rbm.NewRNG(seed, 0)
	x := mat.NewDense(b, n, nil)
	for r := 0; r < b; r++ {
		row := x.RawRowView(r)
		for i := range row {
			row[i] = rng.NormFloat64() + 1.5
		}
		z1, z2 := 3*rng.NormFloat64(), 2*rng.NormFloat64()
		for _, i := range s1 {
			row[i] += z1 / math.Sqrt(float64(len(s1)))
		}
		for _, i := range s2 {
			row[i] += z2 / math.Sqrt(float64(len(s2)))
		}
	}
	return x
}

// Without penalty the components are the eigenvectors of the covariance,
// computed independently by gonum's symmetric eigendecomposition.
func TestSparsePCAZeroPenaltyIsPCA(t *testing.T) {
	x := spikedData(2000, 12, []int{0, 1, 2, 3}, []int{4, 5, 6}, 1)
	res, err := SparsePCA(context.Background(), x, SparsePCAOptions{Components: 3, MaxIter: 20000, Tol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Covariance(context.Background(), x, CovarianceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var es mat.EigenSym
	if !es.Factorize(cov, true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	n := len(vals)
	for j := 0; j < 3; j++ {
		if want := vals[n-1-j]; math.Abs(res.Variances[j]-want) > 1e-6*want {
			t.Errorf("component %d: variance %v, eigenvalue %v", j, res.Variances[j], want)
		}
		cos := math.Abs(mat.Dot(res.Components.ColView(j), vecs.ColView(n-1-j)))
		if cos < 1-1e-6 {
			t.Errorf("component %d: |cos| with the eigenvector = %v", j, cos)
		}
	}
	// The mean is the column mean (1.5 plus noise).
	for i, m := range res.Mean {
		if math.Abs(m-1.5) > 0.2 {
			t.Errorf("mean[%d] = %v, want ≈ 1.5", i, m)
		}
	}
}

// With a penalty the components recover the planted supports exactly,
// which plain PCA does not (its loadings are dense), and each is a fixed
// point of v ∝ S(Cv, λ) on the deflated covariance, checked here with an
// independent computation of the threshold and of the deflation.
func TestSparsePCARecoversSupports(t *testing.T) {
	s1, s2 := []int{0, 3, 7, 9}, []int{2, 5, 11}
	x := spikedData(4000, 14, s1, s2, 2)
	const lambda = 0.3
	res, err := SparsePCA(context.Background(), x, SparsePCAOptions{Components: 2, Penalty: lambda, Tol: 1e-13, MaxIter: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for j, s := range [][]int{s1, s2} {
		want := map[int]bool{}
		for _, i := range s {
			want[i] = true
		}
		for i := 0; i < 14; i++ {
			w := res.Components.At(i, j)
			if want[i] != (w != 0) {
				t.Errorf("component %d: loading %d = %v, planted support %v", j, i, w, s)
			}
			if want[i] && math.Abs(w-1/math.Sqrt(float64(len(s)))) > 0.05 {
				t.Errorf("component %d: loading %d = %v, want ≈ %v", j, i, w, 1/math.Sqrt(float64(len(s))))
			}
		}
		if !res.Converged[j] {
			t.Errorf("component %d did not converge in %d iterations", j, res.Iterations[j])
		}
	}
	pca, err := PCA(context.Background(), x, 1, CovarianceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for i := 0; i < 14; i++ {
		if pca.Components.At(i, 0) == 0 {
			zeros++
		}
	}
	if zeros != 0 {
		t.Errorf("plain PCA has %d zero loadings: the test cannot tell the penalty's effect", zeros)
	}

	// Fixed point: v1 ∝ S(C v1, λ), and v2 ∝ S(C' v2, λ) with C' = P C P, P = I − v1 v1ᵀ.
	cov, _ := Covariance(context.Background(), x, CovarianceOptions{})
	n := 14
	c := mat.NewDense(n, n, nil)
	c.CloneFrom(cov)
	for j := 0; j < 2; j++ {
		v := mat.Col(nil, j, res.Components)
		u := mat.NewVecDense(n, nil)
		u.MulVec(c, mat.NewVecDense(n, v))
		s := make([]float64, n)
		norm := 0.0
		for i := range s {
			a := u.AtVec(i)
			if math.Abs(a) > lambda {
				s[i] = a - math.Copysign(lambda, a)
			}
			norm += s[i] * s[i]
		}
		norm = math.Sqrt(norm)
		for i := range s {
			if math.Abs(s[i]/norm-v[i]) > 1e-8 {
				t.Errorf("component %d: v[%d] = %v, S(Cv, λ)/‖·‖ = %v", j, i, v[i], s[i]/norm)
			}
		}
		p := mat.NewDense(n, n, nil)
		for a := 0; a < n; a++ {
			p.Set(a, a, 1)
			for b := 0; b < n; b++ {
				p.Set(a, b, p.At(a, b)-v[a]*v[b])
			}
		}
		var pc mat.Dense
		pc.Mul(p, c)
		c.Mul(&pc, p)
	}
	// The variance of a sparse component is below the top eigenvalue, but not by much.
	if res.Variances[0] > pca.Values[0] || res.Variances[0] < 0.9*pca.Values[0] {
		t.Errorf("variance of the first sparse component %v, top eigenvalue %v", res.Variances[0], pca.Values[0])
	}
}

// A penalty above every |(Cv)_i| leaves the 1-sparse component on the
// feature of largest variance.
func TestSparsePCALargePenalty(t *testing.T) {
	x := spikedData(500, 6, []int{4}, []int{1}, 3)
	res, err := SparsePCA(context.Background(), x, SparsePCAOptions{Penalty: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		want := 0.0
		if i == 4 {
			want = 1
		}
		if res.Components.At(i, 0) != want {
			t.Errorf("loading %d = %v, want %v", i, res.Components.At(i, 0), want)
		}
	}
}

func TestSparsePCABadInput(t *testing.T) {
	x := mat.NewDense(10, 4, nil)
	for _, c := range []struct {
		opts SparsePCAOptions
		want string
	}{
		{SparsePCAOptions{Components: 5}, "Components = 5"},
		{SparsePCAOptions{Components: -1}, "Components = -1"},
		{SparsePCAOptions{Penalty: -1}, "Penalty = -1"},
		{SparsePCAOptions{Penalty: math.NaN()}, "Penalty = NaN"},
		{SparsePCAOptions{MaxIter: -2}, "MaxIter = -2"},
	} {
		if _, err := SparsePCA(context.Background(), x, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c.opts, err, c.want)
		}
	}
	if _, err := SparsePCA(context.Background(), mat.NewDense(1, 4, nil), SparsePCAOptions{}); err == nil {
		t.Error("one row: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SparsePCA(ctx, spikedData(50, 5, []int{0}, []int{1}, 4), SparsePCAOptions{}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("cancelled context: error %v", err)
	}
}

// upperMedian is the (k/2+1)-th smallest p_µ of the columns of w, computed
// here from Sparsity alone.
func upperMedian(t *testing.T, w *mat.Dense, q int) float64 {
	t.Helper()
	_, per, err := Sparsity(w, q)
	if err != nil {
		t.Fatal(err)
	}
	s := append([]float64(nil), per...)
	for i := range s { // insertion sort: independent of the package's sort
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// The tuned penalty ends a bisection whose invariant holds: fitted
// independently by SparsePCA, the lower end of the final bracket leaves the
// median sparsity above the target and the upper end at or below it, and the
// result is SparsePCA's at the returned penalty. Features are grouped in
// pairs (q = 2), as Potts states are.
func TestSparsePCAMatched(t *testing.T) {
	ctx := context.Background()
	x := spikedData(3000, 24, []int{0, 1, 2, 3, 8, 9}, []int{14, 15, 20, 21}, 5)
	opts := SparsePCAOptions{Components: 6, MaxIter: 5000, Tol: 1e-10}
	fit := func(lambda float64) *SparsePCAResult {
		o := opts
		o.Penalty = lambda
		r, err := SparsePCA(ctx, x, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const low, high, steps = 1e-4, 1.0, 12
	dense, sparse := upperMedian(t, fit(low).Components, 2), upperMedian(t, fit(high).Components, 2)
	target := (dense + sparse) / 2
	if !(dense > target && target > sparse) {
		t.Fatalf("median sparsity %v at the low end, %v at the high end: the target %v is not between them", dense, sparse, target)
	}
	res, lambda, err := SparsePCAMatched(ctx, x, opts, SparsityTarget{Median: target, Q: 2, Low: low, High: high, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	half := math.Pow(high/low, 1/math.Pow(2, steps+1)) // half the final bracket, as a factor
	if m := upperMedian(t, fit(lambda/half*(1+1e-9)).Components, 2); !(m > target) {
		t.Errorf("λ = %v: at the bracket's lower end %v the median is %v, not above the target %v", lambda, lambda/half, m, target)
	}
	if m := upperMedian(t, fit(lambda*half*(1-1e-9)).Components, 2); !(m <= target) {
		t.Errorf("λ = %v: at the bracket's upper end %v the median is %v, above the target %v", lambda, lambda*half, m, target)
	}
	if !mat.EqualApprox(res.Components, fit(lambda).Components, 1e-12) {
		t.Error("the result differs from SparsePCA at the returned penalty")
	}
	if m := upperMedian(t, res.Components, 2); math.Abs(m-target) > 0.25*(dense-sparse) {
		t.Errorf("median sparsity %v, target %v (range %v to %v)", m, target, sparse, dense)
	}
	// Targets out of reach end at the bracket's ends: no penalty in it makes
	// the components sparser than one site in twelve, and the densest
	// components are at or below a median of 1.
	for _, c := range []struct {
		median, want float64
	}{{0.01, high}, {1, low}} {
		_, l, err := SparsePCAMatched(ctx, x, opts, SparsityTarget{Median: c.median, Q: 2, Low: low, High: high, Steps: steps})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(math.Log(l/c.want)) > 2*math.Log(half) {
			t.Errorf("target %v: λ = %v, want the bracket's end %v", c.median, l, c.want)
		}
	}
}

func TestSparsePCAMatchedBadInput(t *testing.T) {
	x := spikedData(50, 6, []int{0}, []int{1}, 6)
	for _, c := range []struct {
		opts   SparsePCAOptions
		target SparsityTarget
		want   string
	}{
		{SparsePCAOptions{}, SparsityTarget{}, "Median = 0"},
		{SparsePCAOptions{}, SparsityTarget{Median: 1.5}, "Median = 1.5"},
		{SparsePCAOptions{}, SparsityTarget{Median: math.NaN()}, "Median = NaN"},
		{SparsePCAOptions{}, SparsityTarget{Median: 0.5, Low: 1, High: 0.1}, "Low = 1, High = 0.1"},
		{SparsePCAOptions{}, SparsityTarget{Median: 0.5, Low: -1}, "Low = -1"},
		{SparsePCAOptions{}, SparsityTarget{Median: 0.5, Steps: -1}, "Steps = -1"},
		{SparsePCAOptions{}, SparsityTarget{Median: 0.5, Q: 4}, "not a multiple of target Q = 4"},
		{SparsePCAOptions{Components: 7}, SparsityTarget{Median: 0.5}, "Components = 7"},
	} {
		if _, _, err := SparsePCAMatched(context.Background(), x, c.opts, c.target); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v, %+v: error %v, want one naming %q", c.opts, c.target, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := SparsePCAMatched(ctx, x, SparsePCAOptions{}, SparsityTarget{Median: 0.5}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("cancelled context: error %v", err)
	}
}
