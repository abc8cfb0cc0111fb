#!/usr/bin/env bash
# Replica solver (rbmcore/replica, seed 003): 200-point γ sweeps for K = 6
# hierarchical data (K1 = 2, K2 = 3, p = 0.25, 0.2, α = 0.8, exact N → ∞ site
# classes). Goal of issue 7: < 1 s per sweep.
#   SweepDown200: W = 0 above λ_max/K → paramagnetic → spontaneous states, to γ = 0.005.
#   SweepFig4A200: the two-block branch of Fig. 4A, γ 0.005 → 0.335.
#   SweepBAM200:  up from the symmetric LP-bootstrapped BAM phase (11 blocks, Ω = 6), γ 0.005 → 0.065.
#   SweepBAMFull200: the whole of Fig. 4A, γ 0.005 → 0.335 with the branch switch at the first transition.
# ns/op is wall clock; cpu-ns/op is the process CPU time (getrusage: all
# goroutines, so above ns/op when the Mattis searches run on two cores).
# The load average is printed before every run.
#
# BASE=<git ref> also builds the benchmarks at that commit and runs baseline
# and current interleaved, ROUNDS (default 3) times each, so that the ratio
# is measured under the same load: e.g. BASE=36d960a bash tests/bench_replica.sh
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BENCH=${BENCH:-Sweep}
BENCHTIME=${BENCHTIME:-3x}
if [ -z "${BASE:-}" ]; then
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	$GO test ./rbmcore/replica/ -run '^$' -bench "$BENCH" -benchtime "$BENCHTIME" -count 1
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$BASE" | tar -x -C "$tmp"
(cd "$tmp" && $GO test -c -o "$tmp/base.test" ./rbmcore/replica/)
$GO test -c -o "$tmp/current.test" ./rbmcore/replica/
for r in $(seq "${ROUNDS:-3}"); do
	for v in base current; do
		echo "== $v ($([ $v = base ] && echo "$BASE" || git rev-parse --short HEAD)+worktree), round $r, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
		(cd rbmcore/replica && "$tmp/$v.test" -test.run '^$' -test.bench "$BENCH" -test.benchtime "$BENCHTIME") | grep '^Benchmark'
	done
done
