#!/usr/bin/env python3
"""5-fold cross-validation of the DeepSEA-style OTKE model on a multilabel promoter set, driving the `inductive` CLI.

The thesis' DeepSEA model (ch. 2): a conv front end (Conv1d of width k + ReLU on one-hot k-mers), OT pooling onto a
reference of p supports with positional weighting, then an MLP with dropout and one sigmoid output per label,
trained end to end with binary cross-entropy. DeepSEA's own data (919 chromatin labels) is not available here; the
multilabel set is built from data we have (data/SOURCE.md): the Umarov & Solovyev (2017) promoter sets of
E. coli and B. subtilis (../shared/data/promoters-umarov2017, 81 nt each), every sequence labelled with the set of
{promoter, b_subtilis} that applies. The labels are independent by construction of the set (the four combinations
all occur: 373 / 1000 / 839 / 3000 sequences), so a model must predict both from the sequence alone.

Variants (the same conv filters, pooling and training; only the head changes):
  deepsea        MLP head (--hidden, --dropout), multilabel
  deepsea-nodrop the same without dropout
  linear         a linear multilabel head (no hidden layer)
Folds are stratified by label set; each fold's model is `otke fit --multilabel ...` (seeded head) then
`otke train --epochs E` on the training folds (its own 20% validation split keeps the best epoch), evaluated by
`otke eval` on the test fold. Reports mean +- std over folds of each label's auROC and auPRC and their averages.

    /usr/bin/python3 bench/otke_deepsea_multilabel.py [--cli build/native-release/bin/inductive] [--epochs 30]
"""
import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold

from cli_runs import read_fasta, run_json

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_DATA = os.path.join(REPO, "..", "shared", "data", "promoters-umarov2017")
# source file -> the label set of its sequences
SETS = {"Bacillus_prom.fa": "promoter,b_subtilis", "Bacillus_non_prom.fa": "b_subtilis",
        "Ecoli_prom.fa": "promoter", "Ecoli_non_prom.fa": "-"}
LABELS = ["b_subtilis", "promoter"]




def write_split(folder, prefix, records, combo, idx):
    """Writes records[idx] as one FASTA per label set; returns the --class arguments."""
    out = []
    for c, name in enumerate(SETS.values()):
        path = os.path.join(folder, f"{prefix}_{c}.fa")
        with open(path, "w") as f:
            for i in idx:
                if combo[i] == c:
                    f.write(f">{records[i][0]}\n{records[i][1]}\n")
        out += ["--class", f"{name}={path}"]
    return out


def head_args(variant, args):
    if variant == "deepsea":
        return ["--hidden", str(args.hidden), "--dropout", str(args.dropout)]
    if variant == "deepsea-nodrop":
        return ["--hidden", str(args.hidden)]
    if variant == "linear":
        return []
    raise ValueError(variant)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.environ.get("INDUCTIVE_CLI",
                                                   os.path.join(REPO, "build", "native-release", "bin", "inductive")))
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--variants", nargs="+", default=["deepsea", "deepsea-nodrop", "linear"])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--kmer", type=int, default=10)
    p.add_argument("--filters", type=int, default=64)
    p.add_argument("--p", type=int, default=32)
    p.add_argument("--sigma-pos", type=float, default=0.1)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write every fold's results here (JSON)")
    args = p.parse_args()
    if not all(os.path.exists(os.path.join(args.data, f)) for f in SETS):
        print(f"skipped: the promoter sets are not in {args.data}", file=sys.stderr)
        return
    records, combo = [], []
    for c, f in enumerate(SETS):
        r = read_fasta(os.path.join(args.data, f))
        records += r
        combo += [c] * len(r)
    combo = np.array(combo)
    settings = ["--multilabel", "--embedding", "conv", "--filters", str(args.filters), "--kmer", str(args.kmer),
                "--p", str(args.p), "--sigma-pos", str(args.sigma_pos), "--seed", str(args.seed), "--quiet"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="inductive-deepsea-") as folder:
        folds = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(np.zeros(len(combo)), combo)
        for fold, (train, test) in enumerate(folds):
            train_args = write_split(folder, f"train{fold}", records, combo, train)
            test_args = write_split(folder, f"test{fold}", records, combo, test)
            for variant in args.variants:
                init = os.path.join(folder, "init.safetensors")
                model = os.path.join(folder, "trained.safetensors")
                t0 = time.time()
                run_json([args.cli, "otke", "fit", *train_args, *settings, *head_args(variant, args), "--out", init])
                tr = run_json([args.cli, "otke", "train", "--init", init, *train_args, "--epochs", str(args.epochs),
                               "--seed", str(args.seed), "--quiet", "--out", model])
                t1 = time.time()
                ev = run_json([args.cli, "otke", "eval", "--quiet", "--model", model, *test_args])
                row = {"fold": fold, "variant": variant, "n_train": len(train), "n_test": len(test),
                       "auroc": ev["auroc"], "auprc": ev["auprc"], "auroc_per_label": ev["auroc_per_label"],
                       "auprc_per_label": ev["auprc_per_label"], "label_accuracy": ev["label_accuracy"],
                       "exact_match": ev["exact_match"], "best_epoch": tr["best_epoch"], "train_s": t1 - t0}
                rows.append(row)
                print(f"  fold {fold} {variant:14s}: auROC {row['auroc']:.3f} auPRC {row['auprc']:.3f} "
                      f"({', '.join(f'{k} {v:.3f}' for k, v in row['auroc_per_label'].items())}) "
                      f"best epoch {row['best_epoch']} {row['train_s']:.0f}s", file=sys.stderr, flush=True)
    lines = ["| head | auROC b_subtilis | auROC promoter | auPRC b_subtilis | auPRC promoter | **auROC (mean of "
             "labels)** | **auPRC (mean)** | exact match | s per fold |", "|---|---|---|---|---|---|---|---|---|"]
    ms = lambda xs: f"{np.mean(xs):.3f} ± {np.std(xs):.3f}"
    for variant in args.variants:
        sel = [r for r in rows if r["variant"] == variant]
        lines.append(f"| {variant} | " + " | ".join(
            [ms([r["auroc_per_label"][l] for r in sel]) for l in LABELS] +
            [ms([r["auprc_per_label"][l] for r in sel]) for l in LABELS] +
            [ms([r["auroc"] for r in sel]), ms([r["auprc"] for r in sel]), ms([r["exact_match"] for r in sel]),
             f"{np.mean([r['train_s'] for r in sel]):.0f}"]) + " |")
    print("\n".join(lines))
    print(f"\n{args.folds} folds, {len(combo)} sequences, epochs {args.epochs}, k {args.kmer}, {args.filters} "
          f"filters, p {args.p}, sigma_pos {args.sigma_pos}, hidden {args.hidden}, dropout {args.dropout}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
