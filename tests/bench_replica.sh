#!/usr/bin/env bash
# Replica solver (rbmcore/replica, seed 003): 200-point γ sweeps for K = 6
# hierarchical data (K1 = 2, K2 = 3, p = 0.25, 0.2, α = 0.8, exact N → ∞ site
# classes). Goal of issue 7: < 1 s per sweep.
#   SweepDown200: W = 0 above λ_max/K → paramagnetic → spontaneous states, to γ = 0.005.
#   SweepFig4A200: the two-block branch of Fig. 4A, γ 0.005 → 0.335.
#   SweepBAM200:  up from the symmetric LP-bootstrapped BAM phase (11 blocks, Ω = 6), γ 0.005 → 0.065.
#   SweepBAMFull200: the whole of Fig. 4A, γ 0.005 → 0.335 with the branch switch at the first transition.
# ns/op is wall clock; cpu-ns/op is the process CPU time (getrusage), steadier on a
# loaded machine. The load average is printed first.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
${GO:-go} test ./rbmcore/replica/ -run '^$' -bench 'Sweep' -benchtime "${BENCHTIME:-3x}" -count 1
