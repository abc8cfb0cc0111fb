#!/usr/bin/env bash
# Gibbs-sweep benchmark of issue 4, measured side by side in one run:
#   (a) sweeps/s for N=784, M=500, B=100 binary-binary: Go rbm.Chains vs the
#       same loop in numpy (tests/bench_rbm.py, Debian python3-numpy);
#   (b) the sweep's effective GFLOP/s (4·B·N·M flops per sweep) vs the dgemm
#       GFLOP/s of the same two products through the same BLAS;
#   (c) OpenBLAS (cgo, -tags openblas) vs the pure-Go gonum backend.
# Both precisions of the Go products are reported, clearly labelled:
# "default" (Chains' default for binary layers: certified float32 products,
# whose samples are exactly those of float64 products from the same seed,
# see rbm.Chains.Products) and "f64" (Products "float64": dgemm). The dgemm
# and sgemm columns time just the two products of the same shapes.
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
    "$tmp/rbm_$be.test" -test.run '^$' -test.bench 'GibbsSweep|GibbsSweepFloat64|GemmSweepShapes|SgemmSweepShapes' -test.benchtime "$BENCHTIME" |
      awk -v be="$be" '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); w=""; c="";
        for (i=2; i<NF; i++) { if ($(i+1)=="ns/op") w=$i; if ($(i+1)=="cpu-ns/op") c=$i }
        print be, name, w, c }' >>"$tmp/go.txt"
  done
  $PY tests/bench_rbm.py "${BENCHTIME%s}" >>"$tmp/np.txt"
  # one core each (GOMAXPROCS=1, single-threaded OpenBLAS): the CPU time
  # of one core is much less sensitive to the load of a shared machine
  if [ $have_openblas = 1 ]; then
    GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 "$tmp/rbm_openblas.test" -test.run '^$' -test.bench 'GibbsSweep|GibbsSweepFloat64' -test.benchtime "$BENCHTIME" |
      awk '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); w=""; c="";
        for (i=2; i<NF; i++) { if ($(i+1)=="ns/op") w=$i; if ($(i+1)=="cpu-ns/op") c=$i }
        print "openblas1", name, w, c }' >>"$tmp/go.txt"
    OPENBLAS_NUM_THREADS=1 $PY tests/bench_rbm.py "${BENCHTIME%s}" | sed 's/^numpy_/numpy1_/' >>"$tmp/np.txt"
  fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

best() { sort -g | head -1; }
get() { awk -v be="$1" -v n="$2" -v col="$3" '$1==be && $2==n {print $col}' "$tmp/go.txt" | best; } # col 3 wall, 4 cpu
npget() { awk -v k="$1" '$1==k {print $2}' "$tmp/np.txt" | best; }
flops=$((4 * 100 * 784 * 500))
report() { # label sweep_ns gemm_ns sweep_cpu_ns gemm_cpu_ns sgemm_ns sgemm_cpu_ns
  awk -v l="$1" -v s="$2" -v g="$3" -v cs="$4" -v cg="$5" -v sg="$6" -v csg="$7" -v f="$flops" 'BEGIN {
    printf "  %-20s wall %7.2f ms/sweep (%6.1f sweeps/s, %6.2f GFLOP/s; dgemm pair %5.2f ms = %6.2f GFLOP/s, sgemm pair %5.2f ms; sweep/dgemm %5.1f %%)   cpu %7.2f ms/sweep (dgemm pair %5.2f ms, sgemm pair %5.2f ms)\n",
      l, s/1e6, 1e9/s, f/s, g/1e6, f/g, sg/1e6, 100*g/s, cs/1e6, cg/1e6, csg/1e6 }'
}
echo "Gibbs sweep, binary-binary N=784 M=500 B=100 (best of $ROUNDS interleaved rounds, $(nproc) cores, load average $load0 before, $load1 after)"
go_main=gonum
for be in openblas gonum; do
  [ "$be" = openblas ] && [ $have_openblas = 0 ] && continue
  [ "$be" = openblas ] && go_main=openblas
  for p in default f64; do
    n=BenchmarkGibbsSweep; [ $p = f64 ] && n=BenchmarkGibbsSweepFloat64
    report "Go/$be $p" "$(get $be $n 3)" "$(get $be BenchmarkGemmSweepShapes 3)" "$(get $be $n 4)" "$(get $be BenchmarkGemmSweepShapes 4)" "$(get $be BenchmarkSgemmSweepShapes 3)" "$(get $be BenchmarkSgemmSweepShapes 4)"
  done
done
report "numpy f64" "$(npget numpy_sweep_ns)" "$(npget numpy_gemm_ns)" "$(npget numpy_sweep_cpu_ns)" "$(npget numpy_gemm_cpu_ns)" 0 0
for p in default f64; do
  n=BenchmarkGibbsSweep; [ $p = f64 ] && n=BenchmarkGibbsSweepFloat64
  awk -v g="$(get $go_main $n 3)" -v gc="$(get $go_main $n 4)" -v nw="$(npget numpy_sweep_ns)" -v nc="$(npget numpy_sweep_cpu_ns)" -v be="$go_main" -v p="$p" 'BEGIN {
    printf "(a) Go/%s %s vs numpy (float64): %.2fx the sweeps/s by wall time, %.2fx by CPU time (goal >= 1.5x)\n", be, p, nw/g, nc/gc }'
done
for p in default f64; do
  n=BenchmarkGibbsSweep; [ $p = f64 ] && n=BenchmarkGibbsSweepFloat64
  awk -v s="$(get $go_main $n 3)" -v d="$(get $go_main BenchmarkGemmSweepShapes 3)" -v cs="$(get $go_main $n 4)" -v cd="$(get $go_main BenchmarkGemmSweepShapes 4)" -v be="$go_main" -v p="$p" 'BEGIN {
    printf "(b) Go/%s %s sweep at %.1f %% (wall) / %.1f %% (CPU) of the dgemm speed for the same shapes (goal >= 60 %%)\n", be, p, 100*d/s, 100*cd/cs }'
done
if [ $have_openblas = 1 ]; then
  for p in default f64; do
    n=BenchmarkGibbsSweep; [ $p = f64 ] && n=BenchmarkGibbsSweepFloat64
    awk -v g="$(get openblas1 $n 4)" -v nc="$(npget numpy1_sweep_cpu_ns)" -v p="$p" 'BEGIN {
      printf "(a, one core) Go/openblas %s %.2f ms vs numpy %.2f ms CPU per sweep: %.2fx\n", p, g/1e6, nc/1e6, nc/g }'
  done
  for n in BenchmarkGibbsSweep BenchmarkGibbsSweepFloat64; do
    awk -v n="$n" -v o="$(get openblas $n 3)" -v p="$(get gonum $n 3)" -v oc="$(get openblas $n 4)" -v pc="$(get gonum $n 4)" 'BEGIN {
      printf "(c) OpenBLAS vs pure Go (%s): %.2fx the sweeps/s (wall), %.2fx (CPU)\n", n, p/o, pc/oc }'
  done
fi
