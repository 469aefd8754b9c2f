#!/usr/bin/env python3
"""Data-parallel `otke train` on this machine: step time split into compute and gradient summing, 1 vs 2 ranks.

usage: /usr/bin/python3 bench/mpi_scaling.py --cli build/native-release/bin/inductive [--sets 128] [--epochs 1]

The issue's OTKE benchmark shape (k512p64: sets of n ~ U[200, 1000] unit-norm 512-d vectors, one reference of 64
supports, eps 0.5, 10 iterations, 2 classes, batch 64), identity embedding. Runs one process with 1 and 2 OpenMP
threads, then `mpirun -np 2` with 1 thread per rank, and prints per-step compute and allreduce times (rank 0's),
the bytes each rank contributes per step, and the ring-allreduce model for larger clusters.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--sets", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=1)
    a = ap.parse_args()
    a.cli = os.path.abspath(a.cli)
    work = tempfile.mkdtemp(prefix="inductive-mpi-bench-")
    try:
        rng = np.random.default_rng(11)
        n = rng.integers(200, 1001, size=a.sets).astype(np.int32)
        x = rng.standard_normal((a.sets, 1000, 512)).astype(np.float32)
        x /= np.linalg.norm(x, axis=2, keepdims=True)
        for b in range(a.sets):
            x[b, n[b]:] = 0
        y = (np.arange(a.sets) % 2).astype(np.int32)
        for name, arr in (("x.npy", x), ("n.npy", n), ("y.npy", y)):
            np.save(os.path.join(work, name), arr)
        data = ["--sets", "x.npy", "--lengths", "n.npy", "--labels", "y.npy"]
        fit = subprocess.run([a.cli, "otke", "fit", "--quiet", *data, "--embedding", "identity", "--p", "64",
                              "--eps", "0.5", "--iters", "10", "--seed", "1", "--out", "init.safetensors"],
                             cwd=work, capture_output=True, text=True)
        assert fit.returncode == 0, fit.stderr
        train = ["otke", "train", "--quiet", *data, "--init", "init.safetensors", "--epochs", str(a.epochs),
                 "--batch-size", "64", "--val-fraction", "0.1", "--out", "out.safetensors"]
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        runs = [("1 process, 1 thread", [a.cli, *train], 1), ("1 process, 2 threads", [a.cli, *train], 2),
                ("mpirun -np 2, 1 thread each", ["mpirun", *root, "--oversubscribe", "-np", "2", "-x",
                                                  "OMP_NUM_THREADS=1", a.cli, *train], 1)]
        print("| run | epochs' time s (train + validation) | steps | per step: compute ms | per step: allreduce ms | "
              "allreduce KB per rank |")
        print("|---|---|---|---|---|---|")
        for label, cmd, threads in runs:
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))
            done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr[-2000:]
            r = json.loads(done.stdout.strip().splitlines()[-1])
            d = r["distributed"]
            steps = max(d["steps"], 1)
            per = lambda s: f"{1e3 * s / steps:.1f}" if d["steps"] else "-"
            kb = f"{d['allreduce_bytes_per_step'] / 1024:.0f}" if d["steps"] else "-"
            epochs_s = sum(e["seconds"] for e in r["history"])
            print(f"| {label} | {epochs_s:.2f} | {d['steps'] or '-'} | {per(d['compute_seconds'])} | "
                  f"{per(d['allreduce_seconds'])} | {kb} |")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
