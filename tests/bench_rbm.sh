#!/usr/bin/env bash
# Gibbs-sweep benchmark of issue 4, measured side by side in one run:
#   (a) sweeps/s for N=784, M=500, B=100 binary-binary: Go rbm.Chains vs the
#       same loop in numpy (tests/bench_rbm.py, Debian python3-numpy);
#   (b) the sweep's effective GFLOP/s (4·B·N·M flops per sweep) vs the dgemm
#       GFLOP/s of the same two products through the same BLAS;
#   (c) OpenBLAS (cgo, -tags openblas) vs the pure-Go gonum backend.
# (The f32 line is the same sweep with Chains.Float32: single-precision
# products; its dgemm column still refers to the float64 products.)
# The machine is shared and noisy, so the measurements are interleaved
# ROUNDS times and the best (fastest) time of each is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PY=${PY:-/usr/bin/python3}
ROUNDS=${ROUNDS:-5}
BENCHTIME=${BENCHTIME:-1s}
have_openblas=0
if [ -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] || [ -e /usr/lib/libopenblas.so ]; then have_openblas=1; fi
[ "${BLAS:-}" = gonum ] && have_openblas=0 # `make bench BLAS=gonum`

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# compile the benchmark binaries once
$GO test -c -o "$tmp/rbm_gonum.test" ./rbmcore/rbm/
if [ $have_openblas = 1 ]; then $GO test -c -tags openblas -o "$tmp/rbm_openblas.test" ./rbmcore/rbm/; fi

best() { sort -n | head -1; }
for r in $(seq "$ROUNDS"); do
  for be in openblas gonum; do
    [ "$be" = openblas ] && [ $have_openblas = 0 ] && continue
    "$tmp/rbm_$be.test" -test.run '^$' -test.bench 'GibbsSweep|GibbsSweepFloat32|GemmSweepShapes' -test.benchtime "$BENCHTIME" |
      awk -v be="$be" '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); print be, name, $3 }' >>"$tmp/go.txt"
  done
  $PY tests/bench_rbm.py "${BENCHTIME%s}" >>"$tmp/np.txt"
done

get() { awk -v be="$1" -v n="$2" '$1==be && $2==n {print $3}' "$tmp/go.txt" | best; }
np_sweep=$(awk '$1=="numpy_sweep_ns" {print $2}' "$tmp/np.txt" | best)
np_gemm=$(awk '$1=="numpy_gemm_ns" {print $2}' "$tmp/np.txt" | best)
flops=$((4 * 100 * 784 * 500))
report() { # label sweep_ns gemm_ns
  awk -v l="$1" -v s="$2" -v g="$3" -v f="$flops" 'BEGIN {
    printf "  %-16s %8.2f ms/sweep %8.1f sweeps/s   sweep %6.2f GFLOP/s   dgemm %6.2f GFLOP/s   sweep/dgemm %5.1f %%\n",
      l, s/1e6, 1e9/s, f/s, f/g, 100*g/s }'
}
echo "Gibbs sweep, binary-binary N=784 M=500 B=100 (best of $ROUNDS interleaved rounds, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
go_main=gonum
if [ $have_openblas = 1 ]; then
  report "Go/OpenBLAS" "$(get openblas BenchmarkGibbsSweep)" "$(get openblas BenchmarkGemmSweepShapes)"
  report "Go/OpenBLAS f32" "$(get openblas BenchmarkGibbsSweepFloat32)" "$(get openblas BenchmarkGemmSweepShapes)"
  go_main=openblas
fi
report "Go/pure-Go" "$(get gonum BenchmarkGibbsSweep)" "$(get gonum BenchmarkGemmSweepShapes)"
report "numpy" "$np_sweep" "$np_gemm"
awk -v g="$(get $go_main BenchmarkGibbsSweep)" -v f="$(get $go_main BenchmarkGibbsSweepFloat32)" -v n="$np_sweep" -v be="$go_main" 'BEGIN {
  printf "(a) Go/%s vs numpy: %.2fx the sweeps/s (goal >= 1.5x); with Chains.Float32 products %.2fx\n", be, n/g, n/f }'
awk -v s="$(get $go_main BenchmarkGibbsSweep)" -v d="$(get $go_main BenchmarkGemmSweepShapes)" -v be="$go_main" 'BEGIN {
  printf "(b) Go/%s sweep at %.1f %% of its dgemm speed for the same shapes (goal >= 60 %%)\n", be, 100*d/s }'
if [ $have_openblas = 1 ]; then
  awk -v o="$(get openblas BenchmarkGibbsSweep)" -v p="$(get gonum BenchmarkGibbsSweep)" 'BEGIN {
    printf "(c) OpenBLAS vs pure Go: %.2fx the sweeps/s\n", p/o }'
fi
