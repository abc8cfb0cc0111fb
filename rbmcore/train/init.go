package train

import (
	"fmt"
	"math"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// Initialisations understood by Trainer.Init.
const (
	// InitSeed001 is seed 001's initialisation (§3.3 of its catalogue):
	// visible fields = logit of the data means with a pseudocount ε
	// (⟨v⟩_ε = (⟨v⟩+ε)/(1+2ε), default ε = 1e-13, which reproduces the
	// paper's fields ≈ −30 for pixels that are always off), weights
	// ±√(0.1/N) with random signs, hidden fields θ = −Wᵀ⟨v⟩ (the paper's
	// threshold c = Wᵀ⟨v⟩, θ = −c), so each hidden input is centred.
	InitSeed001 = "seed001"
	// InitSeed000 follows seed 000, whose text gives no initialisation; we
	// use the reference implementation's practice (our reading, stated as
	// an assumption): visible fields of the independent-site model (log
	// frequencies with pseudocount ε, default 1e-3, in the zero-sum gauge
	// for Potts), Gaussian weights of standard deviation √(0.1/N), hidden
	// fields 0 and γ = 1 (γ± = 1 for dReLU).
	InitSeed000 = "seed000"
)

// initialise applies t.Init to m using the data means, leaving alone the
// parameters for which frozen (given a modelParams name) is true. The
// caller puts the result in the zero-sum gauge.
func initialise(t *Trainer, m *rbm.RBM, set *data.Set, frozen func(name string) bool) error {
	if t.Init == "" {
		return nil
	}
	eps := t.Pseudocount
	switch t.Init {
	case InitSeed001:
		if eps == 0 {
			eps = 1e-13
		}
	case InitSeed000:
		if eps == 0 {
			eps = 1e-3
		}
	default: // Trainer.withDefaults has checked the name
		return fmt.Errorf("train: unknown Init %q (want %q or %q)", t.Init, InitSeed001, InitSeed000)
	}
	mean := set.Mean()
	if !frozen("visible.theta") {
		if err := independentSiteFields(m.Visible, mean, eps); err != nil {
			return err
		}
	}
	rng := rbm.NewRNG(t.Seed, 0x1417)
	n := m.Visible.Len()
	amp := math.Sqrt(0.1 / float64(n))
	raw := m.W.RawMatrix().Data
	for k := 0; k < len(raw) && !frozen("weights"); k++ {
		if t.Init == InitSeed001 {
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
				if t.Init == InitSeed001 {
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
