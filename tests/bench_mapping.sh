#!/usr/bin/env bash
# Interaction mapping benchmark (issue 6): the full pairwise coupling matrix J
# for N = 784, M = 1200, per activation (Linear = gaussian, Exponential =
# poisson, Step = binary, ReLU), with the paper's initial weights ±√(0.1/N),
# N(0, 0.035²) and N(0, 0.1²) weights. Goal on the 2-core machine: < 0.2 s for
# Linear and Exponential, < 2 s for Step and ReLU. Also: every triple of 30 sites.
# The load average is printed because the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=()
if [ "${BLAS:-}" = openblas ]; then TAGS=(-tags openblas); fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
"$GO" test "${TAGS[@]}" -run '^$' -bench 'BenchmarkPairwise|BenchmarkTriplets' -benchtime "${BENCHTIME:-3x}" -timeout 30m ./rbmcore/mapping/
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
