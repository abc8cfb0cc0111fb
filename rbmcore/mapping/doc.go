// Package mapping turns an RBM with binary visible units into its exactly
// equivalent model of interacting binary variables of [BR21] (Bulso & Roudi
// 2021, "Restricted Boltzmann machines as models of interacting variables",
// Neural Computation; equation, figure and section numbers in this package
// are theirs):
//
//	log P(v) = Σ_{S ≠ ∅} I(S) Π_{k∈S} v_k − log Z₀,   v ∈ {0,1}^N,
//
// with one coefficient per set S of visible sites (no symmetric copies, no ½
// factors). Marginalising the hidden units gives log P(v) = Σ_k b_k v_k +
// Σ_µ Γ_µ(Σ_k w_kµ v_k) + const, and because v_k ∈ {0,1} the coefficients are
// the Möbius inversion of that function on the Boolean lattice (Eqs. 12–15):
//
//	I(S) = [|S| = 1] b_k + Σ_µ Σ_{T⊆S} (−1)^{|S|−|T|} Γ_µ(Σ_{k∈T} w_kµ).
//
// Entry points: New(model) returns a Mapper with Term (one set), Fields
// (all I^(1)), Pairwise (the N×N matrix J), Triplets (every triple of chosen
// sites) and All (every set up to an order, for small N); the shortcuts All,
// Fields and Pairwise take the model directly. Small-weight approximations:
// Cumulants, ApproxTerm (Eq. 21), ApproxPairwise (Eq. 19), NRMSE and
// RMSWeight (Fig. 9). The paper's tools: ZeroFieldBias (Fig. 4),
// LinearFromCouplings (Eq. 22), Probabilities and StateFrequencies (Figs.
// 2–4), StrengthByOrder, StrengthSlope and OrderLimit (Fig. 11),
// RegressCouplings (Fig. 6), ToSpin and FromSpin.
//
// Conventions (those of package rbm): a hidden unit's weight is
// exp(−U(h) + I h) with U containing −θh, so θ is a field and the paper's
// threshold is c = −θ; Γ is the unit's CGF including its own field (the T = ∅
// term makes the paper's normalised K(q) = Γ(q) − Γ(0) appear). The paper's
// activations are the layer kinds gaussian with γ = 1 (Linear), relu (ReLU),
// binary (Step) and poisson (Exponential); every other scalar hidden kind
// (spin, drelu, …) works through its CGF.
//
// Spin visible layers (s ∈ {−1, +1}) are mapped through v = (1 + s)/2: the
// Mapper then works with weights 2w, fields 2θ and hidden inputs shifted by
// −Σ_i w_iµ, and its terms are the coefficients of the same distribution
// written in the {0,1} variables v. ToSpin converts a complete list of {0,1}
// terms into the coefficients Ĵ(T) of Π_{k∈T} s_k (Walsh–Fourier
// coefficients, Ĵ(T) = Σ_{S⊇T} I(S)/2^{|S|}), and FromSpin goes back.
// Couplings of a ±1 model are stored once per set, also without ½ factors.
//
// Numerics. The alternating sums are never formed naively where that loses
// precision: Linear (Eq. 18a, 20a) and Exponential (Eq. 18d, 20d) use their
// closed forms; Step and ReLU terms use the cumulant series
// Σ_n κ_n [zⁿ] Π_k (e^{w_k z} − 1), exact to double precision, when the
// weights are small compared with the radius of convergence of Γ, and
// otherwise the Möbius sum with the polynomial part of Γ (linear for
// softplus, quadratic for ReLU) differenced exactly when all corners lie on
// the side where it dominates; sums over units are compensated (Neumaier).
// The full pairwise matrix is built from matrix products wherever the
// activation allows: Linear, J = W diag(1/γ) Wᵀ; Exponential,
// J = U diag(e^θ) Uᵀ with u = e^w − 1; Step, the exact form
// J_kl = Σ_µ log(1 + y_kµ y_lµ), y = (e^w − 1) e^{θ/2}/(1 + e^{w+θ}), whose
// log1p series is a sum of symmetric rank-M updates Σ_q ((−1)^{q+1}/q) Y_q Y_qᵀ
// (Y_q = y^q elementwise); ReLU, a low-rank factorisation of each unit's
// pair term: its double Taylor series in the two weights is a symmetric
// (Hankel-like) coefficient matrix whose eigenvalues decay about as fast as
// the terms, so keeping the eigenpairs above 2⁻⁵⁰ of the first-order
// coefficient gives J += Z₊Z₊ᵀ − Z₋Z₋ᵀ with 3–12 columns per unit (two
// symmetric rank updates; errors of a few ulps relative to each pair's
// first-order term κ₂ w_k w_l).
// Sites whose weights are too large for a unit's series (|y| > 0.25 for
// Step; |w|/√γ > 0.1 r for ReLU, r ≥ 2.8 the radius of convergence of its
// CGF) are paired elementwise (log1p; for ReLU the Taylor series in the
// small weight around the large site's input, or Term's evaluation), the
// whole unit when more than a tenth of its sites are large; other kinds are
// evaluated elementwise through the four-point sum. The elementwise work
// runs in parallel over all cores in blocks of rows.
//
// Interrupts and callbacks. Every computation over many terms takes a
// context first (Pairwise(ctx, m), All, Fields and the Mapper's Pairwise,
// Fields, All, Triplets, StrengthByOrder and ZeroFieldBias) and checks it
// every few milliseconds; a nil context is context.Background(). New, Term
// and the small-weight approximations (one matrix product) take none. Mapper.Progress is only ever called on the caller's goroutine;
// if it panics, the worker goroutines are stopped before the panic goes on.
// A panic in a worker goroutine (e.g. in a Layer implemented by the user)
// is returned as an error instead of ending the process.
package mapping
