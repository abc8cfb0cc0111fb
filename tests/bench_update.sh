#!/usr/bin/env bash
# One training update with continuous hidden units (rbmcore/train
# BenchmarkUpdate): LatticeDReLU is the lattice-protein notebook's update
# (Potts 27 × 21 visible, M = 100 dReLU hidden, PCD-1 with 100 chains,
# minibatch 100, Adam, λ₁² = 0.025), MNISTReLU the activation-functions
# notebook's (784 binary pixels, M = 250 ReLU, CD-1, minibatch 100, SGD,
# float32 products), both on synthetic data of those shapes. Reports the
# wall time (ns/op) and the CPU time of every thread per update
# (cpu-ms/update, less sensitive to other jobs on a shared machine), best
# of REPS runs (default 3), with the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BLAS=${BLAS:-openblas}
REPS=${REPS:-3}
TAGS=()
if [ "$BLAS" = openblas ]; then TAGS=(-tags openblas); fi
bin=$(mktemp /tmp/harmonium_bench_update.XXXXXX)
trap 'rm -f "$bin"' EXIT
"$GO" test "${TAGS[@]}" -c -o "$bin" ./rbmcore/train
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc), BLAS: $BLAS"
"$bin" -test.run '^$' -test.bench '^BenchmarkUpdate$' -test.benchtime 300x -test.count "$REPS" | grep '^Benchmark' |
  awk '{ name = $1; ns = $3; cpu = $5
         if (!(name in best) || ns < best[name]) best[name] = ns
         if (!(name in bcpu) || cpu < bcpu[name]) bcpu[name] = cpu }
       END { for (n in best) printf "  %-36s %8.2f ms/update wall  %8.2f cpu-ms/update  (best of '"$REPS"')\n", n, best[n]/1e6, bcpu[n] }' | sort
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
