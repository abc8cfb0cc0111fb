// Package replica solves, in the thermodynamic limit, the maximum-likelihood
// weights of a restricted Boltzmann machine with ±1 visible and hidden units
// and no biases, trained with L2 regularisation on K structured data points,
// following the replica paper "Exact solution of RBMs trained on structured
// data in the undersampled regime" (the text we work from names no authors
// or year). Equation, figure, section and appendix numbers in this package
// are that paper's.
//
// # Model and conventions
//
// N visible and M hidden units, N, M → ∞ at fixed α = M/N, K finite. The
// regularised log-likelihood (Eq. 6) is
//
//	L(W) = (1/K) Σ_k ln P_V(ξ^k) − (Nγ/2) Σ_iµ w_iµ².
//
// Weights scale as w_iµ = u_µ(σ_i)/N, where σ_i = (ξ^1_i,…,ξ^K_i) is the
// data column of site i. Sites with equal (or opposite) columns form a site
// class (Appendix I); there are at most 2^(K−1) classes up to sign, so every
// computation here costs O(classes), independent of N. A Classes value holds
// one representative pattern per ± pair and its fraction of sites; weights,
// magnetisations and all class functions are odd under σ → −σ.
//
// Hidden units form blocks (fraction φ_b of the M units, identical weights
// u^b(σ)). A Solution carries the blocks, the Ω distinct mean-field saddle
// points ("thermodynamic states", Eq. 20) reached from Mattis initialisation
// at each data point, and everything derived from them: the replica order
// parameters Q, q, P, p (Eqs. 11–14), the weights of Eq. 19, the
// coefficients of the data-span parametrisation (Appendix F), the singular
// values of W (Eq. 22) and the regularised log-likelihood per visible unit.
//
// # Which equations are solved
//
// Mode Exact (the default) solves Eq. 20 and Eq. 21 exactly on site classes:
// at a returned solution both residuals, per site and per hidden unit, are
// below Problem.Tol. Mode DataSpan restricts the weights to the data span
// w_iµ = (1/N) Σ_k ξ^k_i c^k_µ (Appendix F, Eq. F1) and solves the
// Galerkin projection of Eq. F12 on the data. The paper (App. F, H) claims
// the exact weights lie in the data span; they do not for K ≥ 3 in the
// ordered phase, because Eq. 19 adds the state magnetisations ⟨v⟩^ω, which
// are not linear in σ (checked here: TestDataSpanIsApproximate). So Exact
// is the default, DataSpan reproduces the
// paper's parametrisation, and both agree exactly in the paramagnetic phase.
//
// By default the Ω states are mixed with equal weights 1/Ω, the paper's
// printed rule (Eq. 21). Problem.LabelledEqual = true instead weights
// each state by the share of the data points that reach it, |From_ω|/K
// (the paper's rule is exact only when the states are degenerate in free
// energy to o(1/N)); the two agree when every data point has its own state
// and differ when data points share one (a state no data point reaches gets
// weight 0 then). FitStates measures which weights trained N×M weights
// follow: it finds their states and fits the π_ω of Eq. 21 to them (PCD
// whose persistent chains are trapped in the states weights each state by
// its chain occupancy).
// The states are the distinct stable saddle points reached by Mattis
// initialisation at the data points (Appendix F); during a sweep a state
// continued from the previous γ is kept while it stays a stable minimum of
// the mean-field free energy, even once no data point's initialisation
// reaches it (hysteresis). The K searches from the data points are
// independent and run on two goroutines; a search that heads straight for
// a known stable state (one of the solved ones) is assigned to it without
// iterating to convergence. Every returned solution (mode Exact) has
// residuals of Eqs. 20 and 21 below 1e-10, recomputed after coinciding
// blocks are merged. Weights and states are solved jointly by Newton's
// method (line search; with many blocks the linear algebra uses the
// class-block-diagonal plus rank-B·K structure of the Jacobian, and chord
// steps reuse a factorisation, also from the previous continuation step,
// while they reduce the residual tenfold), after the
// paper's damped fixed-point iteration when Newton alone does not converge
// from a rough start, and, if that fails too (the iteration can cycle when
// the states found from the data points change with the weights), by
// continuation from the same start solved at a larger γ.
//
// # Phase diagram
//
// Sweep continues a solution in γ with hot start, a polynomial predictor in
// ln γ (up to degree 4, through the last solutions of the same structure;
// the weights vary on the scale of γ itself) and adaptive steps, and reports
// events: the over-regularised threshold
// Kγ ≥ λ_max(x), the paramagnetic solution (Eq. 23) and the onset of
// spontaneous activity (top eigenvalue of Σ_µ w_iµ w_jµ crossing 1, Eq. 22),
// changes of Ω, of the number of blocks and of the rank of W. BAMStart
// bootstraps the small-γ BAM phase (Eqs. 24–26) with the linear programme of
// Appendix J (gonum optimize/convex/lp), optionally restricted to mixtures
// symmetric under the data's symmetries (Tree.Automorphisms). When a branch
// ceases to be self-consistent (its states lose stability, as the BAM branch
// does at the first transition of Fig. 4A), Sweep switches to the branch
// whose weights are symmetric within the merging clusters of data points if
// SweepOptions.Symmetry gives the data symmetries (an Event of kind "jump";
// see branch.go for the derivation), and otherwise stops with ErrBranchEnd;
// with it one sweep up from the BAM phase passes both transitions of Fig. 4A.
// Tree describes hierarchical data (Section VI) with its exact overlap
// (Eq. 27) and exact N → ∞ class table.
//
// # Theory against training
//
// DataProjection projects trained weights on the data span (Fig. 3C),
// SolveFromCentres starts the solver from k-means centres of trained
// hidden-unit weights (Fig. 3B; clustering and singular values are in the
// analysis package), and Solution.Predict maps a solution back to
// per-unit N×M weights for comparison.
//
// # Contexts and callbacks
//
// The solvers take a context first and check it between iterations; a nil
// context is context.Background(). Knobs are option structs (SweepOptions,
// BAMOptions) whose zero value is the paper's choice.
// SweepOptions.Progress is only ever called on the caller's goroutine.
package replica
