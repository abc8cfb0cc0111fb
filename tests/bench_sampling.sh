#!/usr/bin/env bash
# log Z estimators (issue 19), on binary RBMs trained on MNIST with an
# enumerable hidden layer (exact log Z by summing over the 2^M hidden states):
#  1. RMS error of AIS, reverse AIS (from exact samples) and population
#     annealing (resampling below half the effective sample size) at equal
#     numbers of Gibbs sweeps (three budgets, ≥ 10 seeds), with the CPU
#     seconds each took, so that equal cost can be read in either unit;
#  2. log Z tracked along a PCD run (rbm.LogZTracker: populations moved
#     from one checkpoint's model to the next, every 5th epoch, without and
#     with tempering) against estimates from scratch at those checkpoints
#     (AIS at three budgets, adaptive population annealing): cost, RMS
#     error, coverage, and whether AIS needs ≥ 5× a tracker's CPU time to
#     reach its RMS error (the goal of issue 19).
# Sizes: LOGZ_BENCH_IMAGES (2000), LOGZ_BENCH_SEEDS (10), LOGZ_BENCH_EPOCHS (50),
# LOGZ_BENCH_HIDDEN (20); tracking: LOGZ_BENCH_TRACK_EVERY (updates between
# moves, default 5 epochs), LOGZ_BENCH_TRACK_POPS (8), LOGZ_BENCH_TRACK_CHAINS (32),
# LOGZ_BENCH_TRACK_TEMPER (TemperDepths, "0,1"); LOGZ_BENCH_AIS_BETAS ("30,100,300");
# LOGZ_BENCH_PART=1 or 2 runs one part. MNIST: the training images, found by
# data.MNIST as a notebook finds them; skipped with its message without them.
# The load average is printed because the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=()
if [ "${BLAS:-}" = openblas ]; then TAGS=(-tags openblas); fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
HARMONIUM_LOGZ_BENCH=1 "$GO" test "${TAGS[@]}" -count=1 -run '^TestLogZBenchmark$' -v -timeout 3h ./rbmcore/train/ | grep --line-buffered -v '^=== RUN\|^--- \(PASS\|SKIP\)\|^PASS\|^ok'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
