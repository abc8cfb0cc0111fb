package data

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestIsingRingCorrelations compares the sampled ⟨v_i v_{i+d}⟩ (averaged over
// i) with the closed-form periodic-chain formula, for a ferromagnetic and an
// antiferromagnetic coupling on a ring short enough for the wrap-around term
// t^{N−d} to matter.
func TestIsingRingCorrelations(t *testing.T) {
	const n, samples = 10, 100000
	for _, beta := range []float64{0.7, -0.4} {
		set, err := IsingRing{N: n, Beta: beta}.Sample(context.Background(), samples, 1)
		if err != nil {
			t.Fatal(err)
		}
		for d := 0; d <= n/2; d++ {
			got, mean := 0.0, 0.0
			for s := 0; s < samples; s++ {
				v := set.Row(s)
				for i := 0; i < n; i++ {
					got += v[i] * v[(i+d)%n]
					mean += v[i]
				}
			}
			got /= float64(samples * n)
			mean /= float64(samples * n)
			// Closed form, written out here independently of the package helper.
			th := math.Tanh(beta)
			want := (math.Pow(th, float64(d)) + math.Pow(th, float64(n-d))) / (1 + math.Pow(th, n))
			if h := (IsingRing{N: n, Beta: beta}).Correlation(d); math.Abs(h-want) > 1e-14 {
				t.Errorf("IsingRing{%d, %v}.Correlation(%d) = %v, want %v", n, beta, d, h, want)
			}
			if tol := 5 / math.Sqrt(samples); math.Abs(got-want) > tol {
				t.Errorf("β=%v d=%d: <v_i v_i+d> = %.4f, exact %.4f (tol %.4f)", beta, d, got, want, tol)
			}
			if math.Abs(mean) > 5/math.Sqrt(samples) {
				t.Errorf("β=%v: <v_i> = %v, want 0", beta, mean)
			}
		}
	}
}

// clockPairExact returns ⟨δ(v_i,a) δ(v_{i+d},b)⟩ on the P-state clock ring of
// N sites from the Fourier (circulant eigenvalue) form of the transfer
// matrix: (T^d)_ab (T^{N−d})_ba / Σ_q λ_q^N with
// (T^n)_ab = (1/P) Σ_p λ_p^n cos(2πp(a−b)/P), λ_p = Σ_v e^{β cos(2πv/P)} cos(2πvp/P).
func clockPairExact(n, p, d, a, b int, beta float64) float64 {
	lam := make([]float64, p)
	for q := range lam {
		for v := 0; v < p; v++ {
			lam[q] += math.Exp(beta*math.Cos(2*math.Pi*float64(v)/float64(p))) * math.Cos(2*math.Pi*float64(v*q)/float64(p))
		}
	}
	pow := func(m, x, y int) float64 {
		s := 0.0
		for q := 0; q < p; q++ {
			s += math.Pow(lam[q], float64(m)) * math.Cos(2*math.Pi*float64(q*(x-y))/float64(p))
		}
		return s / float64(p)
	}
	z := 0.0
	for q := 0; q < p; q++ {
		z += math.Pow(lam[q], float64(n))
	}
	return pow(d, a, b) * pow(n-d, b, a) / z
}

// TestClockRingTransferMatrix compares sampled pair frequencies of the clock
// ring with the exact finite-ring transfer-matrix formula, for every
// distance d and pair of states, at a positive and a negative β.
func TestClockRingTransferMatrix(t *testing.T) {
	const n, p, samples = 7, 5, 60000
	for _, beta := range []float64{1.3, -0.8} {
		set, err := ClockRing{N: n, P: p, Beta: beta}.Sample(context.Background(), samples, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := set.Validate(); err != nil {
			t.Fatal(err)
		}
		codes := make([]int, samples*n)
		for s := 0; s < samples; s++ {
			row := set.Row(s)
			for i := 0; i < n; i++ {
				for a := 0; a < p; a++ {
					if row[i*p+a] == 1 {
						codes[s*n+i] = a
					}
				}
			}
		}
		for d := 1; d <= n/2; d++ {
			counts := make([]float64, p*p)
			for s := 0; s < samples; s++ {
				for i := 0; i < n; i++ {
					counts[codes[s*n+i]*p+codes[s*n+(i+d)%n]]++
				}
			}
			for a := 0; a < p; a++ {
				for b := 0; b < p; b++ {
					got := counts[a*p+b] / float64(samples*n)
					want := clockPairExact(n, p, d, a, b, beta)
					tol := 5*math.Sqrt(want*(1-want)/samples) + 1e-4
					if math.Abs(got-want) > tol {
						t.Errorf("β=%v d=%d (a,b)=(%d,%d): frequency %.5f, exact %.5f (tol %.5f)", beta, d, a, b, got, want, tol)
					}
				}
			}
		}
	}
}

func TestClockRingP2IsIsing(t *testing.T) {
	// The exact clock formula with P = 2 is the Ising ring formula:
	// <v v'> = Σ_ab s(a)s(b) P(a,b) with s(0)=+1, s(1)=−1.
	for d := 0; d < 6; d++ {
		c := 0.0
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				c += float64((1-2*a)*(1-2*b)) * clockPairExact(6, 2, d, a, b, 0.9)
			}
		}
		if w := (IsingRing{N: 6, Beta: 0.9}).Correlation(d); math.Abs(c-w) > 1e-12 {
			t.Errorf("d=%d: clock P=2 %v, Ising %v", d, c, w)
		}
	}
}

func TestGeneratorErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := (ClockRing{N: 0, P: 3, Beta: 1}).Sample(ctx, 1, 1); err == nil {
		t.Error("N = 0 accepted")
	}
	if _, err := (IsingRing{N: 5, Beta: math.NaN()}).Sample(ctx, 10, 1); err == nil {
		t.Error("β = NaN accepted")
	}
	if _, err := (IsingRing{N: 1000, Beta: 1}).Sample(ctx, 1<<30, 1); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("2^30 samples of 1000 spins: err = %v, want a size error before allocating", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (ClockRing{N: 4, P: 3, Beta: 1}).Sample(cancelled, 10, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
	if _, err := Hierarchical(10, []int{2}, []float64{0.1, 0.2}, 1); err == nil {
		t.Error("mismatched k and p accepted")
	}
	if _, err := Hierarchical(10, []int{2}, []float64{1.5}, 1); err == nil {
		t.Error("p = 1.5 accepted")
	}
}

// TestHierarchicalOverlaps checks the sampled leaves' overlaps against seed
// 003 Eq. 27 with the literal values of Fig. 2: x = 1 on the diagonal,
// x_sib = (1−2p₂)² = 0.64 for siblings (same level-1 parent, a/3 = b/3) and
// x_cous = (1−2p₁)²(1−2p₂)² = 0.2304 otherwise. (replica.Tree.Overlap is the
// general formula; it is tested against these data there.)
func TestHierarchicalOverlaps(t *testing.T) {
	k, p := []int{2, 3}, []float64{0.2, 0.1}
	want := func(a, b int) float64 {
		switch {
		case a == b:
			return 1
		case a/3 == b/3:
			return 0.64
		}
		return 0.2304
	}
	const n = 40000
	set, err := Hierarchical(n, k, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 6 || set.Kind != KindSpin {
		t.Fatalf("got %d rows of kind %s, want 6 spin rows", set.Len(), set.Kind)
	}
	for a := 0; a < 6; a++ {
		for b := 0; b < 6; b++ {
			got := 0.0
			ra, rb := set.Row(a), set.Row(b)
			for i := range ra {
				got += ra[i] * rb[i]
			}
			got /= n
			if math.Abs(got-want(a, b)) > 4/math.Sqrt(n) {
				t.Errorf("overlap(%d,%d) = %.4f, want %.4f", a, b, got, want(a, b))
			}
		}
	}
	// Ancestor all +1: the mean magnetisation of a leaf is (1−2p1)(1−2p2) = 0.48.
	m := 0.0
	for _, v := range set.X.RawMatrix().Data {
		m += v
	}
	if m /= 6 * n; math.Abs(m-0.48) > 0.02 {
		t.Errorf("mean magnetisation %v, want 0.48", m)
	}
}

func TestBarsAndStripesEntropy(t *testing.T) {
	set, err := BarsAndStripes(3)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 16 || set.Width() != 9 {
		t.Fatalf("got %d×%d, want 16×9", set.Len(), set.Width())
	}
	counts := map[string]int{}
	for r := 0; r < 16; r++ {
		row := set.Row(r)
		key := ""
		rowsConst, colsConst := true, true
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				key += string('0' + byte(row[3*i+j]))
				rowsConst = rowsConst && row[3*i+j] == row[3*i]
				colsConst = colsConst && row[3*i+j] == row[j]
			}
		}
		if !rowsConst && !colsConst {
			t.Errorf("row %d (%s) is neither bars nor stripes", r, key)
		}
		counts[key]++
	}
	h := 0.0
	for _, c := range counts {
		f := float64(c) / 16
		h -= f * math.Log(f)
	}
	if len(counts) != 14 || math.Abs(h-2.599) > 5e-4 {
		t.Errorf("%d distinct patterns, entropy %v; want 14 and 2.599", len(counts), h)
	}
}
