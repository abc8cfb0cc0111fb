#!/usr/bin/env bash
# Cost of the notebook layer (lang/): the ratio between an rbmcore-heavy call made
# from a cell and the same call from compiled Go (goal <= 1.05), measured
# side by side in each iteration, and the per-cell overhead of a trivial cell.
# Run by `make bench`; BLAS=openblas|gonum selects the backend like the Makefile.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=""
if [ "${BLAS:-}" = "openblas" ]; then TAGS="-tags openblas"; fi
echo "lang bench (BLAS=${BLAS:-gonum}): $GO test $TAGS -run '^\$' -bench 'GibbsCellVsNative' -benchtime 31x; -bench MulCellVsNative -benchtime 31x; -bench TrivialCell -benchtime 200x ./lang/"
out=$($GO test $TAGS -run '^$' -bench 'GibbsCellVsNative' -benchtime 31x -count 1 ./lang/ 2>&1; \
      $GO test $TAGS -run '^$' -bench 'MulCellVsNative' -benchtime 31x -count 1 ./lang/ 2>&1; \
      $GO test $TAGS -run '^$' -bench 'TrivialCell' -benchtime 200x -count 1 ./lang/ 2>&1)
echo "$out" | grep -E '^(Benchmark|ok|FAIL|---)' || { echo "$out"; exit 1; }
echo "$out" | awk '
  /^BenchmarkGibbsCellVsNative/ { for (i = 1; i <= NF; i++) if ($(i+1) == "cell/native") r = $i
    printf "rbmcore Gibbs (5 sweeps, 100 chains, 784x500), median of 31: cell/native = %s (goal <= 1.05)\n", r }
  /^BenchmarkMulCellVsNative/ { for (i = 1; i <= NF; i++) if ($(i+1) == "cell/native") r = $i
    printf "gonum 500x500 Mul, median of 31: cell/native = %s (goal <= 1.05)\n", r }
  /^BenchmarkTrivialCell/ { printf "trivial cell (x := 1) overhead: %.3f ms\n", $3 / 1e6 }'
