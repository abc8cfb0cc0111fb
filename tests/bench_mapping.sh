#!/usr/bin/env bash
# Interaction mapping benchmark (issue 6): the full pairwise coupling matrix J
# for N = 784, M = 1200, per activation (Linear = gaussian, Exponential =
# poisson, Step = binary, ReLU), with the paper's initial weights ±√(0.1/N),
# N(0, 0.035²) weights (the paper's trained scale, Fig. 11), N(0, 0.1²) weights
# (per-unit largest weights like the heaviest units of a trained MNIST RBM) and
# N(0, 0.035²) with heavy tails (1% of the weights N(0, 0.5²)); see
# rbmcore/mapping/bench_test.go. Goal on the 2-core machine: < 0.2 s for
# Linear and Exponential, < 2 s for Step and ReLU. Also: every triple of 30 sites.
# cpu-s/op is the process CPU time per operation (≈ 2× the wall time on an idle
# machine); compare wall times only between runs at the same load.
# The load average is printed because the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=()
if [ "${BLAS:-}" = openblas ]; then TAGS=(-tags openblas); fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
"$GO" test "${TAGS[@]}" -run '^$' -bench 'BenchmarkPairwise|BenchmarkTriplets' -benchtime "${BENCHTIME:-3x}" -timeout 30m ./rbmcore/mapping/
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
