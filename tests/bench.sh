#!/usr/bin/env bash
# `make bench`: runs every tests/bench_*.sh in turn. Each prints its own figures,
# measured side by side with its baseline in the same run (the machine is shared and noisy).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for b in tests/bench_*.sh; do
  [ -e "$b" ] || continue
  echo "=== $b"
  bash "$b" || { echo "FAILED: $b"; status=1; }
done
exit $status
