package rbm

import "math"

// Exact Bernoulli(σ(t)) decisions with few exponentials. σ is increasing, so
// for t in [t_k, t_{k+1}] of a fixed grid, σ(t_k) ≤ σ(t) ≤ σ(t_{k+1}); a
// uniform u below the (rounded-down) left value is a success and one above
// the (rounded-up) right value a failure without computing σ(t). Only when u
// falls between them (probability ≤ max σ' · step = 1/64) is e^{-t}
// evaluated. The decision is exactly the one of u < σ(t).
const (
	sigGridLo   = -32.0
	sigGridStep = 1.0 / 16
	sigGridN    = 1024 // grid points t_k = sigGridLo + k*sigGridStep, k ≤ sigGridN
)

var sigLo, sigHi [sigGridN + 1]float64

func init() {
	for k := range sigLo {
		s := 1 / (1 + math.Exp(-(sigGridLo + float64(k)*sigGridStep)))
		sigLo[k] = math.Nextafter(s, 0)
		sigHi[k] = math.Nextafter(s, 2)
	}
}

// bernoulliSigmoid returns 1 if u < σ(t), else 0, for u in [0, 1).
func bernoulliSigmoid(u, t float64) float64 {
	f := (t - sigGridLo) * (1 / sigGridStep)
	if f >= 0 && f < sigGridN {
		k := int(f)
		if u < sigLo[k] {
			return 1
		}
		if u >= sigHi[k+1] {
			return 0
		}
	}
	// u < 1/(1+e^{-t})  ⇔  u(1+e^{-t}) < 1; +Inf for t → -∞ gives 0.
	if u*(1+math.Exp(-t)) < 1 {
		return 1
	}
	return 0
}
