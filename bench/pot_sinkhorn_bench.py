"""Baseline for bench/sinkhorn_bench.cpp: POT's log-domain Sinkhorn on the very same batch.

The C++ benchmark writes the batch with --dump DIR (cost.npy [batch, n_max, p] float32 padded with zeros, n.npy
the true lengths, eps.npy). POT solves one problem at a time, so this loops over the batch with each cost cut to
its true n x p (no padding work), uniform marginals, numItermax = iters and stopThr = 0, so exactly `iters`
iterations run as in ours (POT still computes its marginal error every 10th iteration: that is part of its
algorithm). One JSON line per configuration, same fields as the C++ benchmark.

Run with Debian's python (/usr/bin/python3: numpy + python3-pot), single-threaded (OMP_NUM_THREADS=1).
"""
import argparse
import json
import os
import statistics
import time
import warnings

import numpy as np
import ot


def load_batch(folder):
    cost = np.load(os.path.join(folder, "cost.npy"))
    lengths = np.load(os.path.join(folder, "n.npy"))
    eps = float(np.load(os.path.join(folder, "eps.npy"))[0])
    return cost, lengths, eps


def unpadded_problems(cost, lengths, dtype):
    """(M, a, b) per problem, made before timing: building inputs is not part of the solve."""
    problems = []
    for c, n in zip(cost, lengths):
        m = np.ascontiguousarray(c[:n], dtype=dtype)
        p = m.shape[1]
        problems.append((m, np.full(n, 1.0 / n, dtype), np.full(p, 1.0 / p, dtype)))
    return problems


def solve_batch(problems, eps, iters):
    for m, a, b in problems:
        ot.bregman.sinkhorn_log(a, b, m, eps, numItermax=iters, stopThr=0.0, warn=False)


def time_batch(problems, eps, iters, min_time, min_repeats):
    """Median and minimum wall time and mean CPU time of one pass over the batch (ms), after a warm-up."""
    solve_batch(problems[:1], eps, iters)
    times = []
    cpu0 = time.process_time()  # CPU time: unaffected by other processes taking the cores
    while len(times) < min_repeats or sum(times) < min_time * 1e3:
        t0 = time.perf_counter()
        solve_batch(problems, eps, iters)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), (time.process_time() - cpu0) * 1e3 / len(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="folder written by sinkhorn_bench --dump")
    parser.add_argument("--iters", default="10,100", help="comma-separated iteration counts")
    parser.add_argument("--dtypes", default="float64,float32", help="numpy dtypes to run POT in")
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds to measure per configuration")
    parser.add_argument("--min-repeats", type=int, default=3, help="passes over the batch, at least")
    args = parser.parse_args()

    cost, lengths, eps = load_batch(args.folder)
    warnings.simplefilter("ignore")  # "Sinkhorn did not converge": expected at a fixed iteration count
    for dtype in args.dtypes.split(","):
        problems = unpadded_problems(cost, lengths, np.dtype(dtype))
        for iters in (int(i) for i in args.iters.split(",")):
            ms, ms_min, cpu_ms = time_batch(problems, eps, iters, args.min_time, args.min_repeats)
            print(json.dumps({"impl": f"POT {ot.__version__}", "dtype": dtype, "simd": "numpy", "threads": 1,
                              "iters": iters, "batch": len(problems), "ms_per_batch": round(ms, 3),
                              "ms_min": round(ms_min, 3), "cpu_ms": round(cpu_ms, 3), "problems_per_s": round(len(problems) / (ms * 1e-3), 1)}),
                  flush=True)


if __name__ == "__main__":
    main()
