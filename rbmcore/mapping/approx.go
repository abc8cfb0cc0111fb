package mapping

import (
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Cumulants returns the cumulant κ^(s)_µ of every hidden unit's
// distribution ρ_µ(h) ∝ e^{−U_µ(h)} (at zero input; for a spin visible layer
// at the shifted input, see the package doc), i.e. the s-th derivative of
// K_µ(q) = Γ_µ(q) − Γ_µ(0) at 0 ([BR21] Eqs. 19, 21, 29, 33):
// Linear κ1 = θ/γ, κ2 = 1/γ, κ_{s≥3} = 0; Exponential κ_s = e^θ for all s;
// Step and ReLU (any order) from the exact Taylor coefficients of Γ. For
// other kinds only s = 1, 2 are available (the layer's mean and variance).
func (mp *Mapper) Cumulants(s int) ([]float64, error) {
	if s < 1 || s > maxJet {
		return nil, fmt.Errorf("mapping: cumulant order %d out of range [1, %d]", s, maxJet)
	}
	h := mp.h
	out := make([]float64, mp.m)
	fact := 1.0
	for n := 2; n <= s; n++ {
		fact *= float64(n)
	}
	switch h.fam {
	case famGaussian:
		for mu := range out {
			switch s {
			case 1:
				out[mu] = h.x0[mu] * h.scale[mu]
			case 2:
				out[mu] = h.scale[mu]
			}
		}
	case famPoisson:
		for mu := range out {
			out[mu] = math.Exp(h.x0[mu])
		}
	case famBinary, famReLU, famSpin:
		for mu := range out {
			// Γ(q) = g(x0 + scale·q) (+ linear part for spin).
			out[mu] = fact * h.jets[mu][s] * math.Pow(h.scale[mu], float64(s))
			if h.fam == famSpin && s == 1 {
				out[mu]--
			}
		}
	default:
		if s > 2 {
			return nil, fmt.Errorf("mapping: cumulants of order %d are not available for hidden kind %q (only 1 and 2)", s, h.layer.Kind())
		}
		in := append([]float64(nil), h.off...)
		if s == 1 {
			h.layer.Mean(in, out)
		} else {
			h.layer.Var(in, out)
		}
	}
	return out, nil
}

// ApproxTerm returns the small-weight approximation of I(S) to leading
// order, Σ_µ κ^(s)_µ Π_{k∈S} w_kµ ([BR21] Eq. 21; Eq. 19 for s = 2), plus
// the visible bias when |S| = 1.
func (mp *Mapper) ApproxTerm(sites ...int) (float64, error) {
	s, err := mp.checkSites(sites)
	if err != nil {
		return 0, err
	}
	kappa, err := mp.Cumulants(len(s))
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for mu, k := range kappa {
		p := k
		for _, site := range s {
			p *= mp.w[site*mp.m+mu]
		}
		sum += p
	}
	if len(s) == 1 {
		sum += mp.bias[s[0]]
	}
	return sum, nil
}

// ApproxPairwise returns the Hopfield-like approximation of the pairwise
// couplings, J̃ = W diag(κ^(2)) Wᵀ ([BR21] Eq. 19), with a zero diagonal.
func (mp *Mapper) ApproxPairwise() (*mat.Dense, error) {
	kappa, err := mp.Cumulants(2)
	if err != nil {
		return nil, err
	}
	n, m := mp.n, mp.m
	// J̃ = (W diag κ) Wᵀ as one general product.
	a := make([]float64, n*m)
	b := make([]float64, n*m)
	for k := 0; k < n; k++ {
		for mu := 0; mu < m; mu++ {
			a[k*m+mu] = mp.w[k*m+mu] * kappa[mu]
			b[k*m+mu] = mp.w[k*m+mu]
		}
	}
	j := make([]float64, n*n)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: n, Cols: m, Stride: m, Data: a},
		blas64.General{Rows: n, Cols: m, Stride: m, Data: b}, 0,
		blas64.General{Rows: n, Cols: n, Stride: n, Data: j})
	for k := 0; k < n; k++ {
		j[k*n+k] = 0
	}
	return mat.NewDense(n, n, j), nil
}

// NRMSE returns the normalised root-mean-square difference of two coupling
// matrices over the pairs i < j, sqrt(Σ(J−J̃)² / ΣJ²) ([BR21] Fig. 9),
// with J = exact.
func NRMSE(exact, approx mat.Matrix) (float64, error) {
	r, c := exact.Dims()
	r2, c2 := approx.Dims()
	if r != c || r2 != r || c2 != c {
		return 0, fmt.Errorf("mapping: NRMSE of %d×%d and %d×%d matrices: want equal square sizes", r, c, r2, c2)
	}
	var num, den float64
	for i := 0; i < r; i++ {
		for j := i + 1; j < r; j++ {
			e := exact.At(i, j)
			d := e - approx.At(i, j)
			num += d * d
			den += e * e
		}
	}
	if den == 0 {
		return 0, fmt.Errorf("mapping: NRMSE: the exact couplings are all zero")
	}
	return math.Sqrt(num / den), nil
}

// RMSWeight returns sqrt(Σ_{iµ} w_iµ² / (N M)), the weight scale of [BR21]
// Fig. 9.
func RMSWeight(m *rbm.RBM) float64 {
	r, c := m.W.Dims()
	s := mat.Norm(m.W, 2)
	return s / math.Sqrt(float64(r*c))
}
