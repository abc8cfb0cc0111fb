"""scikit-learn baseline for tests/bench_train.sh: one epoch of BernoulliRBM
(PCD / stochastic maximum likelihood, one Gibbs step, 100 persistent chains
= the batch size) over Fashion-MNIST, 60000 x 784 pixels scaled to [0, 1],
M = 500 hidden units, batch 100 -- the settings of the Go benchmark
BenchmarkPCDEpochFashionMNIST. Prints one line: wall and CPU seconds per
epoch."""
import gzip
import struct
import sys
import time

import numpy as np
from sklearn.neural_network import BernoulliRBM


def load_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    _, _, _, nd = struct.unpack(">BBBB", raw[:4])
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    x = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd)
    return x.reshape(dims[0], -1).astype(np.float64) / 255.0


def main():
    path = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    x = load_idx(path)
    times, cpus = [], []
    for rep in range(reps):
        rbm = BernoulliRBM(n_components=500, batch_size=100, n_iter=1, learning_rate=0.1, random_state=rep)
        t0, c0 = time.perf_counter(), time.process_time()
        rbm.fit(x)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    # wall seconds, CPU seconds (all threads) of the best run
    best = min(range(reps), key=lambda k: times[k])
    print("sklearn BernoulliRBM: %.2f s/epoch %.2f cpu-s/epoch" % (times[best], cpus[best]))


if __name__ == "__main__":
    main()
