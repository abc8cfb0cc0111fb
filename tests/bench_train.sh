#!/usr/bin/env bash
# Training benchmark (issue 5): one PCD epoch over Fashion-MNIST (60000 × 784,
# pixels scaled to [0, 1]), M = 500 binary hidden units, batch 100, 100
# persistent chains, 1 Gibbs step, SGD — Harmonium's train.Fit (the
# default: float64 results, visible inputs in certified float32; every
# product in float64, same results; train.Options.Float32) against scikit-learn's
# BernoulliRBM with the
# same settings, side by side in one run, with OpenBLAS multi-threaded
# (default) and single-threaded (OPENBLAS_NUM_THREADS=1; the fair setting on
# a loaded shared machine). Each figure is the best of REPS runs (default 2);
# the two programs alternate, and the load average is printed before and
# after each setting. CPU time counts every thread of the process (Go's and
# OpenBLAS's), so it measures work independently of how the cores are shared.
# On a virtual machine the hypervisor may take the cores away for a while
# (steal time, /proc/stat): each setting prints the steal seconds of every
# run, since wall times measured under steal say little.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
BLAS=${BLAS:-openblas}
REPS=${REPS:-2}
DATA=${HARMONIUM_FASHION:-/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz}
if [ ! -e "$DATA" ]; then
  echo "bench_train: $DATA not found (install dataset-fashion-mnist); skipped"
  exit 0
fi
tags=""
[ "$BLAS" = openblas ] && tags="-tags openblas"
go test $tags -c -o /tmp/harmonium_bench_train.test ./rbmcore/train >/dev/null
trap 'rm -f /tmp/harmonium_bench_train.test' EXIT

steal() { awk '/^cpu /{print $9}' /proc/stat; }
field() { awk -v unit="$1" -v pat="$2" '$0 ~ pat {for (i=1;i<NF;i++) if ($(i+1)==unit) print $i}'; }
best() { sort -g | head -1; }

for threads in default 1; do
  if [ "$threads" = default ]; then unset OPENBLAS_NUM_THREADS; else export OPENBLAS_NUM_THREADS=$threads; fi
  echo "--- OpenBLAS threads: $threads (Go BLAS backend: $BLAS; load: $(cut -d' ' -f1-3 /proc/loadavg))"
  w64=(); wa=(); w32=(); ws=(); c64=(); ca=(); c32=(); cs=(); sg=(); sp=()
  for rep in $(seq "$REPS"); do
    s0=$(steal)
    out=$(HARMONIUM_FASHION="$DATA" /tmp/harmonium_bench_train.test -test.run '^$' -test.bench PCDEpochFashionMNIST -test.benchtime 1x)
    w64+=("$(echo "$out" | field s/epoch /float64-)"); c64+=("$(echo "$out" | field cpu-s/epoch /float64-)")
    wa+=("$(echo "$out" | field s/epoch /allfloat64-)"); ca+=("$(echo "$out" | field cpu-s/epoch /allfloat64-)")
    w32+=("$(echo "$out" | field s/epoch float32)"); c32+=("$(echo "$out" | field cpu-s/epoch float32)")
    s1=$(steal)
    py=$("$PY" tests/bench_train.py "$DATA" 1)
    s2=$(steal)
    sg+=("$(awk -v a="$s0" -v b="$s1" 'BEGIN{printf "%.1f", (b-a)/100}')"); sp+=("$(awk -v a="$s1" -v b="$s2" 'BEGIN{printf "%.1f", (b-a)/100}')")
    ws+=("$(echo "$py" | field s/epoch sklearn)"); cs+=("$(echo "$py" | field cpu-s/epoch sklearn)")
  done
  row() { # name, wall list, cpu list
    printf '  %-40s wall %7.2f s  cpu %7.2f s   (wall runs: %s)\n' "$1" "$(printf '%s\n' $2 | best)" "$(printf '%s\n' $3 | best)" "$2"
  }
  row "harmonium PCD float64 (default)" "${w64[*]}" "${c64[*]}"
  row "harmonium PCD, all products float64" "${wa[*]}" "${ca[*]}"
  row "harmonium PCD float32 (Options.Float32)" "${w32[*]}" "${c32[*]}"
  row "sklearn BernoulliRBM" "${ws[*]}" "${cs[*]}"
  echo "  steal seconds per run (hypervisor): harmonium (3 variants) ${sg[*]}; sklearn ${sp[*]}"
  awk -v s="$(printf '%s\n' "${ws[@]}" | best)" -v a="$(printf '%s\n' "${w64[@]}" | best)" -v b="$(printf '%s\n' "${w32[@]}" | best)" \
      -v cs="$(printf '%s\n' "${cs[@]}" | best)" -v ca="$(printf '%s\n' "${c64[@]}" | best)" -v cb="$(printf '%s\n' "${c32[@]}" | best)" \
      -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
      -v d="$(printf '%s\n' "${wa[@]}" | best)" -v cd="$(printf '%s\n' "${ca[@]}" | best)" \
      'BEGIN { printf "  speed-up vs sklearn (wall): float64 %.2fx, all-float64 %.2fx, float32 %.2fx; (cpu): float64 %.2fx, all-float64 %.2fx, float32 %.2fx  (goal >= 2x; load now: %s)\n", s/a, s/d, s/b, cs/ca, cs/cd, cs/cb, load }'
done
