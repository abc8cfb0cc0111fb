#!/usr/bin/env bash
# Kernel benchmark: time to the first kernel_info_reply and the median `1+1` round trip
# from a jupyter_client BlockingKernelClient, with ipykernel measured alongside.
# Uses $HARMONIUM_BIN (default bin/harmonium) and $PY (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PY:-/usr/bin/python3}" tests/bench_kernel.py
