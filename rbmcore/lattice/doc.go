// Package lattice is the lattice-protein model of Tubiana, Cocco &
// Monasson 2019 ("Learning compositional representations of interacting
// systems with restricted Boltzmann machines: comparative study of lattice
// proteins", Neural Computation; §III.A, Eqs. 19–20), after
// Shakhnovich & Gutin 1990 and Jacquin et al. 2016 ("Benchmarking inverse
// statistical approaches for protein structure and design with exactly
// solvable models"): 27-residue proteins that fold into the maximally
// compact conformations of the 3×3×3 cube, with Miyazawa & Jernigan 1996
// contact energies. It generates the synthetic multiple sequence
// alignments those papers train RBMs on, and the design tools of §III.C.
//
// # Structures
//
// Enumerate lists the self-avoiding walks of 27 monomers that fill the
// cube (its Hamiltonian paths) up to the cube's 48 rotations and
// reflections. There are 4 960 608 directed walks (counted without any
// symmetry, a test checks this by brute force); no symmetry other than the
// identity fixes a walk, so they fall into exactly 4 960 608 / 48 = 103 346
// structures, the count of Shakhnovich & Gutin 1990. These are the folds of
// P_nat: a sequence has a direction, and a walk read backwards is a
// different fold unless a symmetry maps it onto itself, which happens for
// 62 structures (Structures.Reversible). Counted up to reversal as well
// there are (103 346 + 62) / 2 = 51 704 classes. Tubiana, Cocco & Monasson
// print N = 103 406, which is none of these counts (103 346 + 62 = 103 408
// would be the number of directed classes if each reversible one were
// counted twice); we read it as a misprint of 103 346.
//
// Each structure has 28 contacts, pairs of monomers (i, j), j > i+1, on
// neighbouring sites: the cube has 54 bonds and the chain uses 26. Since
// the cube is bipartite, j − i is odd. The enumeration prunes the search
// with lexicographic leaders (see Enumerate) and takes 2–3 s on 2 busy
// cores (BenchmarkEnumerate); it is not cached, so keep the Structures of
// one call.
//
// # Energies and folding probability
//
// A sequence v folded in structure S has the energy (Eq. 19)
//
//	E(v;S) = Σ_{i<j} c^(S)_ij ε(v_i, v_j)
//
// with ε the Miyazawa–Jernigan table (MiyazawaJernigan, shipped with the
// package) in units of RT, and folds in S with probability (Eq. 20)
//
//	P_nat(v;S) = exp(−E(v;S)/T) / Σ_{S'} exp(−E(v;S')/T),
//
// the sum running over all 103 346 structures. Eq. 20 is written with
// T = 1, the default of ModelOptions, so that ε is measured in units of the
// temperature. Model computes E, P_nat and the preferred fold (Fold) of
// any sequence; Tracker updates P_nat after a single-site mutation in
// O(structures × contacts of the site), without any exponential per
// structure.
//
// # Sequence sampling
//
// Sample runs Metropolis Monte Carlo in sequence space that keeps the
// sequences folding specifically in a target structure S_A, P_nat(v;S_A) >
// 0.995, and records an alignment (36 000 sequences by default, as in
// Tubiana, Cocco & Monasson 2019), written in the FASTA format that
// data.LoadAlignment reads (Samples.WriteFASTA). See SampleOptions for
// the stationary distribution, the number of steps between records and
// the seed. The bundled testdata/example.fasta was made by
// `go generate` in this directory (see gen.go).
//
// # Features
//
// A feature is a column of an (Length·Q)×M matrix over sites and amino
// acids: RBM weights, or principal, sparse or independent components of the
// one-hot alignment. SiteWeights, FeatureSites and StrongestPair say where
// a feature sits; CountFeatures applies Table II's count of pair and triplet
// features on contacts, and ChanceLocalised gives its chance level; Charge
// reads the charge pattern of a site (Fig. 5) and ResidueShare the share of
// a feature's squared weights on chosen amino acids, such as the charged
// ones (Charged) or cysteines (Fig. 8).
package lattice
