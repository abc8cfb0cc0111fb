#!/usr/bin/env bash
# Gibbs-sweep benchmark of issue 4, measured side by side in one run:
#   (a) sweeps/s for N=784, M=500, B=100 binary-binary: Go rbm.Chains vs the
#       same loop in numpy (tests/bench_rbm.py, Debian python3-numpy);
#   (b) the sweep's effective GFLOP/s (4·B·N·M flops per sweep) vs the dgemm
#       GFLOP/s of the same two products through the same BLAS;
#   (c) OpenBLAS (cgo, -tags openblas) vs the pure-Go gonum backend.
# Both precisions of the Go products are reported, clearly labelled: "f64"
# (float64 dgemm, the default) and "f32" (Chains.Float32: sgemm products,
# float64 states and sampling); the dgemm column always refers to the
# float64 products of the same shapes.
# The machine may be shared and loaded: besides wall time, every figure is
# also measured as CPU time (user+system of all threads of the process,
# OpenBLAS's included), which counts the work done rather than the waiting,
# and the ratios are given for both. The measurements are interleaved
# ROUNDS times and the best (smallest) value of each is reported, with the
# load average before and after.
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

load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
  for be in openblas gonum; do
    [ "$be" = openblas ] && [ $have_openblas = 0 ] && continue
    "$tmp/rbm_$be.test" -test.run '^$' -test.bench 'GibbsSweep|GibbsSweepFloat32|GemmSweepShapes' -test.benchtime "$BENCHTIME" |
      awk -v be="$be" '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); w=""; c="";
        for (i=2; i<NF; i++) { if ($(i+1)=="ns/op") w=$i; if ($(i+1)=="cpu-ns/op") c=$i }
        print be, name, w, c }' >>"$tmp/go.txt"
  done
  $PY tests/bench_rbm.py "${BENCHTIME%s}" >>"$tmp/np.txt"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

best() { sort -g | head -1; }
get() { awk -v be="$1" -v n="$2" -v col="$3" '$1==be && $2==n {print $col}' "$tmp/go.txt" | best; } # col 3 wall, 4 cpu
npget() { awk -v k="$1" '$1==k {print $2}' "$tmp/np.txt" | best; }
flops=$((4 * 100 * 784 * 500))
report() { # label sweep_ns gemm_ns sweep_cpu_ns gemm_cpu_ns
  awk -v l="$1" -v s="$2" -v g="$3" -v cs="$4" -v cg="$5" -v f="$flops" 'BEGIN {
    printf "  %-18s wall %7.2f ms/sweep (%6.1f sweeps/s, %6.2f GFLOP/s; dgemm %6.2f GFLOP/s; sweep/dgemm %5.1f %%)   cpu %7.2f ms/sweep (dgemm pair %6.2f ms; sweep/dgemm %5.1f %%)\n",
      l, s/1e6, 1e9/s, f/s, f/g, 100*g/s, cs/1e6, cg/1e6, 100*cg/cs }'
}
echo "Gibbs sweep, binary-binary N=784 M=500 B=100 (best of $ROUNDS interleaved rounds, $(nproc) cores, load average $load0 before, $load1 after)"
go_main=gonum
if [ $have_openblas = 1 ]; then
  go_main=openblas
  for p in f64 f32; do
    n=BenchmarkGibbsSweep; [ $p = f32 ] && n=BenchmarkGibbsSweepFloat32
    report "Go/OpenBLAS $p" "$(get openblas $n 3)" "$(get openblas BenchmarkGemmSweepShapes 3)" "$(get openblas $n 4)" "$(get openblas BenchmarkGemmSweepShapes 4)"
  done
fi
report "Go/pure-Go f64" "$(get gonum BenchmarkGibbsSweep 3)" "$(get gonum BenchmarkGemmSweepShapes 3)" "$(get gonum BenchmarkGibbsSweep 4)" "$(get gonum BenchmarkGemmSweepShapes 4)"
report "Go/pure-Go f32" "$(get gonum BenchmarkGibbsSweepFloat32 3)" "$(get gonum BenchmarkGemmSweepShapes 3)" "$(get gonum BenchmarkGibbsSweepFloat32 4)" "$(get gonum BenchmarkGemmSweepShapes 4)"
report "numpy f64" "$(npget numpy_sweep_ns)" "$(npget numpy_gemm_ns)" "$(npget numpy_sweep_cpu_ns)" "$(npget numpy_gemm_cpu_ns)"
for p in f64 f32; do
  n=BenchmarkGibbsSweep; [ $p = f32 ] && n=BenchmarkGibbsSweepFloat32
  awk -v g="$(get $go_main $n 3)" -v gc="$(get $go_main $n 4)" -v nw="$(npget numpy_sweep_ns)" -v nc="$(npget numpy_sweep_cpu_ns)" -v be="$go_main" -v p="$p" 'BEGIN {
    printf "(a) Go/%s %s vs numpy (float64): %.2fx the sweeps/s by wall time, %.2fx by CPU time (goal >= 1.5x)\n", be, p, nw/g, nc/gc }'
done
awk -v s="$(get $go_main BenchmarkGibbsSweep 3)" -v d="$(get $go_main BenchmarkGemmSweepShapes 3)" -v cs="$(get $go_main BenchmarkGibbsSweep 4)" -v cd="$(get $go_main BenchmarkGemmSweepShapes 4)" -v be="$go_main" 'BEGIN {
  printf "(b) Go/%s f64 sweep at %.1f %% (wall) / %.1f %% (CPU) of its dgemm speed for the same shapes (goal >= 60 %%)\n", be, 100*d/s, 100*cd/cs }'
if [ $have_openblas = 1 ]; then
  awk -v o="$(get openblas BenchmarkGibbsSweep 3)" -v p="$(get gonum BenchmarkGibbsSweep 3)" -v oc="$(get openblas BenchmarkGibbsSweep 4)" -v pc="$(get gonum BenchmarkGibbsSweep 4)" 'BEGIN {
    printf "(c) OpenBLAS vs pure Go (f64): %.2fx the sweeps/s (wall), %.2fx (CPU)\n", p/o, pc/oc }'
fi
