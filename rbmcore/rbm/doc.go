// Package rbm is the native core of Harmonium: unit layers, the Restricted
// Boltzmann Machine generic over its two layers, samplers, partition
// functions and model files.
//
// # Conventions
//
// A unit with value h and input I has weight exp(-U(h) + I h); U contains
// -θh, so θ is a field. The potentials of the layer kinds are
//
//	binary   h ∈ {0,1}   U = -θh
//	spin     h ∈ {±1}    U = -θh
//	potts    one-hot of q colours, U = -Σ_a θ_a h_a
//	gaussian h ∈ ℝ       U = γh²/2 - θh
//	relu     h ≥ 0       U = γh²/2 - θh
//	drelu    h ∈ ℝ       U = γ₊h₊²/2 + γ₋h₋²/2 - θ₊h₊ - θ₋h₋, h₊ = max(h,0), h₋ = min(h,0)
//	doublewell h ∈ ℝ     U = h²/2 + t|h| - θh
//	poisson  h ∈ ℕ       U = -θh + ln h!
//	truncexp h ∈ [0,1]   U = -θh
//
// and the RBM energy is E(v,h) = U_v(v) + U_h(h) - vᵀWh, W[i][µ] coupling
// visible i to hidden µ. The papers' parametrisations map onto these as
// follows. [BR21]'s thresholds c of Step, Linear, ReLU and Exponential
// units are θ = -c with γ = 1 (Step = binary, Linear = gaussian,
// Exponential = poisson). [TCM19]'s dReLU thresholds are θ± = -θ±[TCM19]
// (its Eq. 3; its reference code's θ₋ equals our ThetaMinus). [HTCM20]'s
// symmetric double well U = h²/2 + θ|h| is a doublewell with threshold
// t = θ[HTCM20] and field 0 (equivalently a drelu with γ± = 1, θ₊ = -θ,
// θ₋ = θ, whose thresholds would be trained separately). The hidden bias η of [Seo] is θ = η.
//
// # Layer kinds
//
// A kind of layer lives in one file: its type implements Layer, an init
// function registers it by name (RegisterLayer), and it implements the
// optional interfaces its units allow — Discrete (finitely many values:
// exact enumeration, pseudo-likelihood), DataFitter (fitting to data
// moments: AIS base models, initialisation), QuadraticPotential
// (pseudo-likelihood of real units by quadrature), ClosedForm (the
// interaction mapping's specialised numerics), InputBound (weight limits
// in training) and MeanGrader (means and CGF gradient from one pass, for
// the trainers). Model files name a layer by its registered kind, and the
// package's tests (Γ against quadrature, Gibbs sampling against exact
// enumeration, AIS against exact log Z, model-file round trips) run over
// every registered kind.
//
// # Batches
//
// Every batched method works on row-major matrices: B rows of
// Width(layer) = Len·States columns, Potts units one-hot coded. The RBM
// methods take and return *mat.Dense; the Layer methods take the flattened
// []float64 data.
//
// # Parameters and gradients (for trainers)
//
// Layer.Params returns the parameter slices themselves, named by
// Layer.ParamNames (the model-file keys), so a trainer updates a layer in
// place: for p, ps := range l.Params() { for k := range ps { ps[k] += lr*g[p][k] } }.
// NewGrads(l) allocates matching gradient slices. For a hidden layer the
// log-likelihood gradient of its parameters is
// GradCGF(inputs of the data) − GradCGF(inputs of the model samples); for a
// visible layer it is GradLogWeight(data) − GradLogWeight(model samples).
// Both return batch averages. The weight gradient is ⟨vᵀ Γ'(vW)⟩ data minus
// model, with Γ' = Hidden.Mean.
//
// # Sampling, partition function, likelihood
//
// NewChains returns persistent block-Gibbs chains (Run takes a context and
// a progress callback; Beta sets the inverse temperature; ClampVisible and
// ClampHidden fix units; SetStates starts them from given states);
// NewTempering runs parallel tempering over a β ladder with swap statistics
// and round trips, and Tempering.Adapt adapts the ladder to a target swap
// acceptance during a burn-in. DiagnoseMixing measures autocorrelation
// times, effective sample sizes and the Gelman–Rubin R̂ of chains and
// warns when they look unmixed. Random streams belong to fixed blocks of 4
// chains, so results depend only on the seed, not on the number of cores
// (bitwise for binary and spin layers; see Chains for continuous layers
// with OpenBLAS).
// A sweep splits the chains into one range per core, and each range runs
// its own two matrix products and samplings. For binary and spin layers the
// products are single precision by default, with the samples certified
// exact: each Bernoulli decision is made for the whole interval that a
// rigorous float32 error bound leaves, and the rare straddling inputs are
// recomputed in float64, so the samples are those of float64 products from
// the same seed (Chains.Products). ExactLogZ enumerates the
// smaller binary/spin/Potts layer (up to 2^26 states); AIS estimates log Z
// with per-run log-weights and ±3 SEM bounds (Run forward, Reverse for the
// upper side); PopulationAnnealing estimates it with resampling and error
// bars from independent populations; LogZTracker follows it along a
// training run, annealing populations along the sequence of models;
// Bridge estimates the ratio of the partition functions of two nearby
// models (Bennett's acceptance ratio, a cross-check);
// PseudoLikelihood (discrete, Gaussian and ReLU visible layers),
// LogLikelihood and LogLikelihoodRows evaluate data.
//
// # Numerics
//
// Γ, Γ', Γ″ are evaluated in forms that stay finite and accurate for inputs
// up to ±1e4 and parameters up to 50: softplus and log-sum-exp for the
// discrete units, log(Φ/φ) through a scaled complementary error function
// (erfcx) for the truncated Gaussians, the Laplace continued fraction for
// truncated-Gaussian moments deep in the tail, a tail-safe truncated-normal
// sampler and Hörmann's PTRS Poisson sampler. A Poisson mean beyond 1e15
// makes Sample return an error, and a Γ that overflows (an unnormalisable
// model) makes ExactLogZ, AIS and LogLikelihood return an error instead of
// an infinite result.
//
// # Linear algebra
//
// Matrix products go through gonum's blas64. Built with the openblas tag
// (the Makefile does this when libopenblas is installed) the whole process
// uses OpenBLAS through cgo (gonum.org/v1/netlib); otherwise pure Go.
// BLASBackend reports which one is compiled in. While the cores run their
// own row ranges (sweeps, AIS, pseudo-likelihood), OpenBLAS is made
// single-threaded: its idle threads would otherwise spin on the cores the
// sampling needs.
//
// # Contexts, callbacks and goroutines
//
// Every long computation of rbmcore checks a context at least every ~100 ms
// of work; the context is always an argument, never process-global state,
// and a nil one is context.Background() (ContextOrDefault). Across rbmcore, user
// callbacks (progress functions, train's OnUpdate/OnEpoch/Schedule,
// mapping's Progress) are only ever called on the caller's goroutine, never
// on a worker goroutine that rbmcore started; and a panic in a worker
// goroutine (e.g. in a Layer implemented by the user) is returned by the
// computation as an error rather than ending the process.
//
// # References
//
//   - [BR21] Bulso & Roudi 2021: the marginal of the visible units of an RBM
//     as a model of interacting binary variables, for hidden units of
//     several activation functions (Eq. 14).
//   - [TCM19] Tubiana, Cocco & Monasson 2019: RBMs of protein sequences with
//     Potts visible and dReLU hidden units (Eq. 3), the zero-sum gauge.
//   - [HTCM20] Harsh, Tubiana, Cocco & Monasson 2020: RBMs learning
//     invariant data, the symmetric double-well hidden unit.
//   - [SM08] Salakhutdinov & Murray 2008: annealed importance sampling of
//     RBM partition functions and its β schedule.
//   - [Seo] B. Seoane, Data modeling with Energy Based Models (lecture
//     notes): energy-based models and RBM training.
package rbm
