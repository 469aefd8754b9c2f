#!/usr/bin/env python3
"""How long a full `graphit cv` cell of NCI1 takes on the GPU (the GPU-training issue's target: under 10 minutes on
one H100), measured on a part of it within a short GPU visit.

usage: nci1_cell.py CLI OUT_DIR [--epochs N] [--backend cuda]

A cell of bench/graphit_tu_cv.py's table with one grid point is, per outer fold, one run of 300 epochs on train +
val (selection has nothing to choose), so 10 x 300 epochs in all, plus the inputs' preparation once. This runs fold 1
of NCI1 (4110 graphs, the vendored data/tu-NCI1) for N epochs with the table's settings (diffusion kernel, its grid
point: 3 layers, d 64, 4 heads, weight decay 1e-4; the CLI's default batch of 32), takes the median epoch time of
the run's own report (the first epoch, which warms up, left out), and extrapolates: cell = the run's time outside
its epochs (reading, kernels, upload) + 10 x 300 x epoch. Prints one JSON line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cli")
    ap.add_argument("out")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--backend", default="cuda")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    report = os.path.join(a.out, f"nci1-fold1-{a.backend.replace(':', '')}.json")
    cmd = [a.cli, "graphit", "train", "--quiet", "--tu", os.path.join(ROOT, "data", "tu-NCI1"),
           "--folds", os.path.join(ROOT, "data", "graphit-folds", "NCI1"), "--fold", "1",
           "--kernel", "diffusion", "--beta", "1", "--layers", "3", "--dim", "64", "--heads", "4",
           "--weight-decay", "1e-4", "--epochs", str(a.epochs), "--backend", a.backend,
           "--report", report, "--out", os.path.join(a.out, "nci1-fold1.safetensors")]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        print(done.stderr.strip(), file=sys.stderr)
        return done.returncode
    with open(report) as f:
        history = json.load(f)["history"]
    epoch = statistics.median(e["seconds"] for e in history[1:] or history)  # the first epoch warms up
    prepare = max(0.0, wall - sum(e["seconds"] for e in history))
    cell = prepare + 10 * 300 * epoch
    print(json.dumps({"dataset": "NCI1", "backend": a.backend, "epochs_run": len(history), "epoch_s": epoch,
                      "prepare_and_load_s": prepare, "cell_estimate_s": cell, "cell_estimate_min": cell / 60,
                      "target_min": 10}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
