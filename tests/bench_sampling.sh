#!/usr/bin/env bash
# log Z estimators (issue 19), on binary RBMs trained on MNIST with an
# enumerable hidden layer (exact log Z by summing over the 2^M hidden states):
#  1. RMS error of AIS, reverse AIS (from exact samples) and population
#     annealing (resampling below half the effective sample size) at equal
#     numbers of Gibbs sweeps (three budgets, ≥ 10 seeds), with the CPU
#     seconds each took, so that equal cost can be read in either unit;
#  2. log Z tracked along 50-epoch PCD runs on the full training set
#     (rbm.LogZTracker: populations moved from one checkpoint's model to
#     the next, every 5th epoch), once with a learning rate that decays
#     after the first quarter and once with a constant one, against
#     estimates from scratch at those checkpoints (AIS at four budgets,
#     adaptive population annealing): cost, RMS error, coverage, and
#     whether AIS needs ≥ 5× a tracker's CPU time to reach its RMS error
#     (the goal of issue 19).
# Sizes: LOGZ_BENCH_IMAGES (part 1, 2000), LOGZ_BENCH_TRACK_IMAGES (part 2,
# all 60 000), LOGZ_BENCH_SEEDS (10), LOGZ_BENCH_EPOCHS (50),
# LOGZ_BENCH_HIDDEN (20), LOGZ_BENCH_PA_POPS (part 1's PA populations, 4);
# tracking: LOGZ_BENCH_DECAY (final learning-rate factors, "0.01,1"; 1:
# constant), LOGZ_BENCH_TRACK_EVERY (updates between moves, default 5
# epochs), LOGZ_BENCH_TRACK_POPS (8), LOGZ_BENCH_TRACK_CHAINS (32),
# LOGZ_BENCH_TRACK_SWEEPS (1), LOGZ_BENCH_TRACK_TEMPER (TemperDepths, "0");
# LOGZ_BENCH_AIS_BETAS ("30,100,300,1000"). LOGZ_BENCH_PART=1 or 2 runs one
# part. MNIST: the training images, found by data.MNIST as a notebook
# finds them; skipped with its message without them. CPU seconds depend on
# the load (a busy second core slows this one), so compare rows of one run.
# The load average is printed because the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=()
if [ "${BLAS:-}" = openblas ]; then TAGS=(-tags openblas); fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
HARMONIUM_LOGZ_BENCH=1 "$GO" test "${TAGS[@]}" -count=1 -run '^TestLogZBenchmark$' -v -timeout 3h ./rbmcore/train/ | grep --line-buffered -v '^=== RUN\|^--- \(PASS\|SKIP\)\|^PASS\|^ok'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
