#!/usr/bin/env python3
"""The GraphiT accuracy table of the thesis (chapter 3) on the TU datasets, driving `inductive graphit cv`.

Each cell is one `graphit cv` run: the thesis protocol on the GraphiT fold files (per outer fold, the grid is
chosen on the inner validation split, the model is retrained on train + val, and the fold's figure is the mean test
accuracy of the last 50 epochs; mean +- std over the folds). A full table is days of CPU on one core (NCI1 alone is
~2 h per variant), so the runner is resumable: a cell whose report exists is not run again, `--jobs` runs cells in
parallel (one thread each), and `--folds-to-run` splits a long cell into parts that `--table` merges.

Variants (the thesis' columns):
  T              the plain transformer (softmax attention, no kernel)
  diffusion      exp(-beta L), beta 1
  pstep2/pstep3  the p-step random-walk kernel (I - gamma L)^p, gamma 0.5
  adjacency      the normalised adjacency kernel
  ...+gckn       the same with GCKN path features (paths of up to 5 nodes, 32 anchors per length, sigma 0.6)
  ...+lappe      the same with the Laplacian PE of the node features (2 eigenvectors, random sign flips in
                 training), the thesis' "LapPE" row of its structural-encoding ablation

    # run what is missing (two cells at a time), then print the table
    /usr/bin/python3 bench/graphit_tu_cv.py --cli build/native-release/bin/inductive \\
        --data ../shared/data --datasets PROTEINS --variants diffusion pstep2 --jobs 2
    /usr/bin/python3 bench/graphit_tu_cv.py --table

Reports go to bench/results/graphit-cv/<dataset>_<variant>[_folds-a-b].json (the CLI's own JSON, written
atomically); the table reads every report there.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join(REPO, "bench", "results", "graphit-cv")
DATASETS = ["MUTAG", "PTC_MR", "PROTEINS", "NCI1"]
FOLD_DIRS = {"PTC_MR": "PTC"}  # the fold files name PTC_MR's folder PTC
THESIS_BEST = {"MUTAG": 90.5, "PTC_MR": 62.0, "PROTEINS": 76.2, "NCI1": 81.4}
KERNELS = {
    "T": ["--kernel", "none"],
    "diffusion": ["--kernel", "diffusion", "--beta", "1"],
    "pstep2": ["--kernel", "pstep", "--p", "2", "--gamma", "0.5"],
    "pstep3": ["--kernel", "pstep", "--p", "3", "--gamma", "0.5"],
    "adjacency": ["--kernel", "adjacency"],
}
ENCODINGS = {"": [], "gckn": ["--gckn", "5", "--gckn-filters", "32", "--gckn-sigma", "0.6"], "lappe": ["--lap-pe", "2"]}
# The thesis' structural-encoding ablation: every kernel (and none) with no encoding, GCKN and LapPE. The table
# prints them in the order of the main table first, then the ablation's extra cells.
VARIANTS = (list(KERNELS) + [k + "+gckn" for k in KERNELS if k != "T"] + ["T+gckn"] +
            [k + "+lappe" for k in KERNELS])
# The grid this table uses: 3 layers, d 64, 4 heads, weight decay 1e-4 (smaller than the thesis' grid, for time).
GRID = ["--grid-layers", "3", "--grid-dim", "64", "--grid-heads", "4", "--grid-weight-decay", "1e-4"]


def variant_args(variant):
    kernel, _, extra = variant.partition("+")
    if kernel not in KERNELS or extra not in ENCODINGS:
        raise SystemExit(f"graphit_tu_cv: unknown variant '{variant}' (expected one of {', '.join(VARIANTS)})")
    return KERNELS[kernel] + ENCODINGS[extra]


def report_path(results, dataset, variant, folds):
    suffix = f"_folds-{'-'.join(map(str, folds))}" if folds else ""
    return os.path.join(results, f"{dataset}_{variant}{suffix}.json")


def run_cell(cli, data, fold_root, results, dataset, variant, folds, epochs):
    out = report_path(results, dataset, variant, folds)
    if os.path.exists(out):
        return f"{dataset} {variant}: report exists, skipped ({out})"
    cmd = [cli, "graphit", "cv", "--tu", os.path.join(data, f"tu-{dataset}"),
           "--folds", os.path.join(fold_root, FOLD_DIRS.get(dataset, dataset)),
           "--epochs", str(epochs), "--quiet", "--out", out] + GRID + variant_args(variant)
    if folds:
        cmd += ["--folds-to-run"] + [str(f) for f in folds]
    t0 = time.time()
    r = subprocess.run(cmd, env=dict(os.environ, OMP_NUM_THREADS="1"), capture_output=True, text=True)
    if r.returncode != 0:
        return f"{dataset} {variant}: FAILED ({r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode})"
    with open(out) as f:
        rep = json.load(f)
    return (f"{dataset} {variant}: {100 * rep['mean_accuracy']:.1f} +- {100 * rep['std_accuracy']:.1f} "
            f"({len(rep['folds'])} folds, {time.time() - t0:.0f} s)")


def load_reports(results):
    """Per (dataset, variant): fold -> (accuracy, seconds), and the epochs; parts of one cell are merged."""
    cells = {}
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        name = os.path.basename(path)[:-len(".json")].split("_folds-")[0]
        dataset = next((d for d in DATASETS if name.startswith(d + "_")), None)
        if dataset is None:
            continue
        variant = name[len(dataset) + 1:]
        with open(path) as f:
            rep = json.load(f)
        cell = cells.setdefault((dataset, variant), {"folds": {}, "epochs": set()})
        cell["epochs"].add(rep["epochs"])
        for fold in rep["folds"]:
            cell["folds"][fold["fold"]] = (fold["test_accuracy_last"], fold["seconds"])
    return cells


def print_table(results):
    cells = load_reports(results)
    print("| dataset | " + " | ".join(VARIANTS) + " | thesis best |")
    print("|---" * (len(VARIANTS) + 2) + "|")
    for dataset in DATASETS:
        row = []
        for variant in VARIANTS:
            cell = cells.get((dataset, variant))
            if not cell:
                row.append("")
                continue
            accs = [a for a, _ in cell["folds"].values()]
            mean = sum(accs) / len(accs)
            std = (sum((a - mean) ** 2 for a in accs) / len(accs)) ** 0.5
            notes = [f"{sum(s for _, s in cell['folds'].values()) / 60:.0f} min"]
            if len(accs) < 10:
                notes.append(f"folds {','.join(map(str, sorted(cell['folds'])))}")
            if cell["epochs"] != {300}:
                notes.append(f"{'/'.join(map(str, sorted(cell['epochs'])))} epochs")
            row.append(f"{100 * mean:.1f} +- {100 * std:.1f} ({'; '.join(notes)})")
        print(f"| {dataset} | " + " | ".join(row) + f" | {THESIS_BEST[dataset]} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", help="the inductive executable")
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "data"),
                    help="folder holding tu-<NAME>/")
    ap.add_argument("--fold-root", help="folder holding the fold folders (default: DATA/graphit-fold-idx)")
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--folds-to-run", nargs="+", type=int, default=[], help="only these outer folds (1-based)")
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=1, help="cells run at once (one thread each)")
    ap.add_argument("--results", default=RESULTS, help="folder of the reports")
    ap.add_argument("--table", action="store_true", help="only print the table of the reports there are")
    a = ap.parse_args()
    if not a.table:
        if not a.cli:
            raise SystemExit("graphit_tu_cv: --cli is required to run cells (or pass --table)")
        for v in a.variants:
            variant_args(v)
        os.makedirs(a.results, exist_ok=True)
        fold_root = a.fold_root or os.path.join(a.data, "graphit-fold-idx")
        cells = [(d, v) for d in a.datasets for v in a.variants]
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for line in pool.map(lambda c: run_cell(a.cli, a.data, fold_root, a.results, c[0], c[1], a.folds_to_run, a.epochs), cells):
                print(line, file=sys.stderr, flush=True)
    print_table(a.results)


if __name__ == "__main__":
    main()
