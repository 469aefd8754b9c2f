#!/usr/bin/env python3
"""Data-parallel `otke train` and `graphit train` on this machine: 1 process vs 2 ranks.

usage: /usr/bin/python3 bench/mpi_scaling.py --cli build/native-release/bin/inductive [--sets 128] [--epochs 1]

The issue's OTKE benchmark shape (k512p64: sets of n ~ U[200, 1000] unit-norm 512-d vectors, one reference of 64
supports, eps 0.5, 10 iterations, 2 classes, batch 64), identity embedding. Runs one process with 1 and 2 OpenMP
threads, then `mpirun -np 2` with 1 thread per rank, and prints per-step compute and allreduce times (rank 0's),
the bytes each rank contributes per step, and the ring-allreduce model for larger clusters.

Then GraphiT on the bundled MUTAG (188 graphs; fold 1's 152 training graphs) with the two shapes of
bench/graphit_bench: (a) 3 layers, 4 heads, d 64, batch 32, diffusion kernel; (b) 10 layers, 8 heads, d 64, batch
128, with LayerNorm and with BatchNorm (the ZINC model's norm, its statistics synchronised across ranks): the
training epochs' time for 1 process (1 and 2 threads) and `mpirun -np 2`, and the bytes a rank contributes per step:
the gradient sum (every parameter as a float, plus loss and metric as doubles) and, with BatchNorm, the statistics'
sums (per layer and norm: d + 1 and d doubles forward, 2 d backward). `--graphit-only` skips OTKE.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def parameters(path):
    """The number of values in a model file (safetensors: 8-byte header length, JSON header, data)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    return sum(int(np.prod(t["shape"])) for k, t in header.items() if k != "__metadata__")


def graphit(cli, epochs):
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    shapes = {"(a)": ["--layers", "3", "--heads", "4", "--dim", "64", "--batch-size", "32", "--kernel", "diffusion"],
              "(b)": ["--layers", "10", "--heads", "8", "--dim", "64", "--batch-size", "128"],
              "(b) BatchNorm": ["--layers", "10", "--heads", "8", "--dim", "64", "--batch-size", "128", "--norm",
                                "batch"]}
    print()
    print("| GraphiT | run | epochs' time s (train + validation + test) | params | sums KB per rank per step |")
    print("|---|---|---|---|---|")
    work = tempfile.mkdtemp(prefix="inductive-mpi-bench-")
    try:
        for name, shape in shapes.items():
            train = ["graphit", "train", "--tu", os.path.join(DATA, "tu-MUTAG"), "--node-label-names",
                     "C,N,O,F,I,Cl,Br", "--folds", os.path.join(DATA, "graphit-folds", "MUTAG"), "--fold", "1",
                     "--epochs", str(epochs), *shape, "--quiet"]
            runs = [("1 process, 1 thread", [cli, *train], 1), ("1 process, 2 threads", [cli, *train], 2),
                    ("mpirun -np 2, 1 thread each", ["mpirun", *root, "--oversubscribe", "-np", "2", "-x",
                                                      "OMP_NUM_THREADS=1", cli, *train], 1)]
            for label, cmd, threads in runs:
                out, rep = os.path.join(work, "g.safetensors"), os.path.join(work, "g.json")
                env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                done = subprocess.run([*cmd, "--out", out, "--report", rep], env=env, capture_output=True, text=True)
                assert done.returncode == 0, done.stderr[-2000:]
                with open(rep) as f:
                    r = json.load(f)
                n = parameters(out)
                layers, d = int(shape[shape.index("--layers") + 1]), int(shape[shape.index("--dim") + 1])
                bn = 2 * layers * (4 * d + 1) if "batch" in shape else 0  # BatchNorm's statistics
                # Model files hold BatchNorm's running statistics too (2 norms x mean, var per layer): not sent.
                n_params = n - (4 * layers * d if "batch" in shape else 0)
                # Gradients as floats; loss, metric and BatchNorm's statistics as doubles.
                kb = f"{(4 * n_params + 8 * (2 + bn)) / 1024:.0f}" if "mpirun" in label else "-"
                print(f"| {name} | {label} | {sum(e['seconds'] for e in r['history']):.2f} | {n_params} | {kb} |")
    finally:
        shutil.rmtree(work)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--sets", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--graphit-epochs", type=int, default=3)
    ap.add_argument("--graphit-only", action="store_true")
    a = ap.parse_args()
    a.cli = os.path.abspath(a.cli)
    if a.graphit_only:
        graphit(a.cli, a.graphit_epochs)
        return
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
    graphit(a.cli, a.graphit_epochs)


if __name__ == "__main__":
    main()
