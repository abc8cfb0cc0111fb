package train

import (
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// An Initialiser sets the model's parameters from the training data
// before the first update (Options.Init): InitCentred or InitGaussian.
// Parameters listed in Options.Freeze are left as they are.
type Initialiser interface {
	// validate checks the settings.
	validate() error
	// initialise sets the parameters of m from the data set, leaving alone
	// those for which frozen (given a modelParams name) is true; the
	// caller puts the result in the zero-sum gauge.
	initialise(m *rbm.RBM, set *data.Set, seed uint64, frozen func(name string) bool) error
}

// InitCentred is the initialisation of [BR21] (their MNIST training):
// visible fields of the independent-site model (the logit of the data
// means with a pseudocount ε: ⟨v⟩_ε = (⟨v⟩+ε)/(1+2ε)), weights ±√(0.1/N)
// with random signs, and hidden fields θ = −Wᵀ⟨v⟩, so that every hidden
// input is centred on the data; curvatures γ (γ± for dReLU) are set to 1.
type InitCentred struct {
	// Pseudocount is ε ≥ 0 (0: 1e-13, which gives the fields ≈ −30 of
	// pixels that are always off, as in [BR21]).
	Pseudocount float64
}

// InitGaussian initialises like the reference implementation of [TCM19],
// whose text gives no initialisation: visible fields of the
// independent-site model (log frequencies with pseudocount ε, in the
// zero-sum gauge for Potts), Gaussian weights of standard deviation
// √(0.1/N), hidden fields 0 and curvatures γ (γ± for dReLU) 1.
type InitGaussian struct {
	// Pseudocount is ε ≥ 0 (0: 1e-3).
	Pseudocount float64
}

func checkPseudocount(name string, eps float64) error {
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return fmt.Errorf("train: %s.Pseudocount = %v, want a finite value ≥ 0 (0: the default)", name, eps)
	}
	return nil
}

func (i InitCentred) validate() error  { return checkPseudocount("InitCentred", i.Pseudocount) }
func (i InitGaussian) validate() error { return checkPseudocount("InitGaussian", i.Pseudocount) }

func (i InitCentred) initialise(m *rbm.RBM, set *data.Set, seed uint64, frozen func(string) bool) error {
	eps := i.Pseudocount
	if eps == 0 {
		eps = 1e-13
	}
	return initFromData(m, set, seed, eps, true, frozen)
}

func (i InitGaussian) initialise(m *rbm.RBM, set *data.Set, seed uint64, frozen func(string) bool) error {
	eps := i.Pseudocount
	if eps == 0 {
		eps = 1e-3
	}
	return initFromData(m, set, seed, eps, false, frozen)
}

// initFromData sets the visible fields of the independent-site model with
// pseudocount eps, weights of scale √(0.1/N) (random signs when centred,
// Gaussian otherwise), hidden fields θ = −Wᵀ⟨v⟩ (centred) or 0, and unit
// curvatures.
func initFromData(m *rbm.RBM, set *data.Set, seed uint64, eps float64, centred bool, frozen func(string) bool) error {
	mean := set.Mean()
	if !frozen("visible.theta") {
		if err := independentSiteFields(m.Visible, mean, eps); err != nil {
			return err
		}
	}
	rng := rbm.NewRNG(seed, 0x1417)
	n := m.Visible.Len()
	amp := math.Sqrt(0.1 / float64(n))
	raw := m.W.RawMatrix().Data
	for k := 0; k < len(raw) && !frozen("weights"); k++ {
		if centred {
			raw[k] = amp
			if rng.IntN(2) == 0 {
				raw[k] = -amp
			}
		} else {
			raw[k] = amp * rng.NormFloat64()
		}
	}
	// Hidden layer: fields, and unit curvatures reset to 1.
	names := m.Hidden.ParamNames()
	nv, nh := rbm.Width(m.Visible), rbm.Width(m.Hidden)
	for p, ps := range m.Hidden.Params() {
		switch {
		case frozen("hidden." + names[p]):
		case isField(names[p]):
			for j := range ps {
				ps[j] = 0
				if centred {
					for i := 0; i < nv; i++ {
						ps[j] -= raw[i*nh+j] * mean[i]
					}
				}
			}
		case names[p] == "gamma" || names[p] == "gamma_plus" || names[p] == "gamma_minus":
			for j := range ps {
				ps[j] = 1
			}
		}
	}
	return nil
}

// independentSiteFields sets the visible fields so that the visible layer
// alone (zero input) has the data means (with pseudocount eps): logit for
// binary, atanh for spin, log-frequencies centred per unit for Potts,
// θ = γ·mean for Gaussian units.
func independentSiteFields(l rbm.Layer, mean []float64, eps float64) error {
	f, ok := l.(rbm.DataFitter)
	if !ok {
		return fmt.Errorf("train: no data-based initialisation for a %s visible layer", l.Kind())
	}
	if err := f.FitData(rbm.DataStats{Sum: mean, Rows: 1, Eps: eps}); err != nil {
		return fmt.Errorf("train: data-based initialisation: %w", err)
	}
	rbm.ZeroSumFields(l)
	return nil
}
