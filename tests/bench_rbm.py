"""numpy baseline for the rbm Gibbs-sweep benchmark (tests/bench_rbm.sh).

The same loop as rbm.Chains.Sweep for a binary-binary RBM: h ~ P(h|v), then
v ~ P(v|h), for B chains at once, written as a numpy user would (two matrix
products through numpy's BLAS, vectorised sigmoid and uniform comparisons,
buffers reused with out= where numpy allows). Also times the two matrix
products alone (the machine's dgemm speed for these shapes as numpy sees it).

Prints machine-readable lines: "numpy_sweep_ns <ns per sweep>" and
"numpy_gemm_ns <ns per pair of products>" (wall time), and the same with
_cpu_ns (user+system CPU time of the process per call).
"""
import sys
import time

import numpy as np

N, M, B = 784, 500, 100
SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0

rng = np.random.default_rng(1)
W = rng.normal(0.0, 0.01, (N, M))
WT = np.ascontiguousarray(W.T)
bv = np.zeros(N)
ch = np.zeros(M)
v = (rng.random((B, N)) < 0.5).astype(np.float64)
h = np.empty((B, M))
xh = np.empty((B, M))
xv = np.empty((B, N))


def sweep(v):
    np.matmul(v, W, out=xh)
    np.add(xh, ch, out=xh)
    np.negative(xh, out=xh)
    np.exp(xh, out=xh)
    np.add(xh, 1.0, out=xh)
    # u < 1/(1+e^-x)  <=>  u*(1+e^-x) < 1
    np.less(rng.random((B, M)) * xh, 1.0, out=h, casting="unsafe")
    np.matmul(h, WT, out=xv)
    np.add(xv, bv, out=xv)
    np.negative(xv, out=xv)
    np.exp(xv, out=xv)
    np.add(xv, 1.0, out=xv)
    np.less(rng.random((B, N)) * xv, 1.0, out=v, casting="unsafe")
    return v


def timeit(f):
    """Returns (wall, cpu) seconds per call; cpu is the process's user+system
    time (all threads, OpenBLAS's included)."""
    for _ in range(3):
        f()
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while n < 5 or time.perf_counter() - t0 < SECONDS:
        f()
        n += 1
    return (time.perf_counter() - t0) / n, (time.process_time() - c0) / n


def gemms():
    np.matmul(v, W, out=xh)
    np.matmul(xh, WT, out=xv)


for name, f in (("sweep", lambda: sweep(v)), ("gemm", gemms)):
    wall, cpu = timeit(f)
    print("numpy_%s_ns %.0f" % (name, wall * 1e9))
    print("numpy_%s_cpu_ns %.0f" % (name, cpu * 1e9))
