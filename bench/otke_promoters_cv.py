#!/usr/bin/env python3
"""5-fold stratified cross-validation of unsupervised OTKE on bacterial promoters, driving the `inductive` CLI.

Data: Umarov & Solovyev (2017) E. coli sigma70 and B. subtilis promoters vs non-promoters, 81 nt
(../shared/data/promoters-umarov2017, see data/SOURCE.md); skipped with a message when absent.

For every organism and fold, the same pipeline is fitted three times, changing only the pooling of the same
Nystrom features (same k-mers, anchors from the same seed and sequences):
  otk        the optimal transport kernel embedding (thesis ch. 2), one reference of p supports, with the
             positional weighting of the plan (sigma_pos; promoters are aligned on their start site)
  otk-nopos  the same without positional weighting (sigma_pos = 0): position-blind, like the baselines
  mean       mean pooling (the thesis' CKN baseline)
  max        max pooling
  attn       the thesis' "dot-product instead of OT" ablation: the same references and positional weighting, the
             plan replaced by each support's softmax over the elements (`--plan attention`)
  otk-sin    the sinusoidal positional encoding (Vaswani et al.) added to the features instead of the Gaussian
             weighting of the plan (`--sinusoidal --sigma-pos 0`): the thesis' DeepSEA comparison
  otk-bary   the reference refined into the Wasserstein barycenter of the training sets (`--reference-update
             barycenter`), the thesis' alternative to k-means
  otk-q2, otk-q4, otk-q8   q references of p/q supports each (the same embedding dimension), 2-Wasserstein k-means
  sup-otk, sup-conv-mean, sup-conv-max   supervised (`otke train --epochs`, from the unsupervised fit): Nystrom +
             OTK with positions, and a conv front end (Conv1d of width k + ReLU, He-initialised) with mean / max
             pooling - the thesis' supervised comparison
each followed by the logistic head whose lambda is chosen on a stratified 20% validation split of the training
fold (grid 2^-5 .. 2^-20, `otke fit`). Two label budgets:
  100%  every training sequence is labelled;
  10%   a stratified 10% of the training fold keeps its labels (head training + validation); the unsupervised
        stage (anchors, references) still sees every training sequence, the other 90% without labels
        (`otke fit --unlabeled`). Test folds are never seen by any stage.
Reports mean +- std over folds of test accuracy and auROC, and the time per fit.

    /usr/bin/python3 bench/otke_promoters_cv.py [--cli build/h-otke/bin/inductive] [--anchors 64 --p 32 ...]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split

from cli_runs import read_fasta, run_json

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_DATA = os.path.join(REPO, "..", "shared", "data", "promoters-umarov2017")
ORGANISMS = {"ecoli": ("E. coli", "Ecoli_prom.fa", "Ecoli_non_prom.fa"),
             "bsubtilis": ("B. subtilis", "Bacillus_prom.fa", "Bacillus_non_prom.fa")}



def write_fasta(path, records):
    with open(path, "w") as f:
        for name, seq in records:
            f.write(f">{name}\n{seq}\n")



def write_split(folder, prefix, records, y, idx):
    """Writes records[idx] as <prefix>_pos.fa / <prefix>_neg.fa; returns the two --class arguments."""
    pos = os.path.join(folder, f"{prefix}_pos.fa")
    neg = os.path.join(folder, f"{prefix}_neg.fa")
    write_fasta(pos, [records[i] for i in idx if y[i] == 1])
    write_fasta(neg, [records[i] for i in idx if y[i] == 0])
    return ["--class", f"promoter={pos}", "--class", f"non_promoter={neg}"]


VARIANTS = ["otk", "otk-nopos", "mean", "max", "attn", "otk-sin", "otk-bary", "otk-q2", "otk-q4", "otk-q8",
            "sup-otk", "sup-conv-mean", "sup-conv-max"]


def variant_args(kind, args):
    """The `otke fit` options of one pooling variant (see the module docstring); everything else is shared."""
    if kind.startswith("conv-"):  # the supervised comparison: a conv front end pooled by mean / max
        return ["--pooling", kind[5:], "--embedding", "conv"]
    if kind in ("mean", "max"):
        return ["--pooling", kind]
    positions = ["--p", str(args.p), "--sigma-pos", str(args.sigma_pos)]
    if kind == "otk":
        return ["--pooling", "otk", *positions]
    if kind == "otk-nopos":
        return ["--pooling", "otk", "--p", str(args.p), "--sigma-pos", "0"]
    if kind == "attn":
        return ["--pooling", "otk", "--plan", "attention", *positions]
    if kind == "otk-sin":
        return ["--pooling", "otk", "--p", str(args.p), "--sigma-pos", "0", "--sinusoidal"]
    if kind == "otk-bary":
        return ["--pooling", "otk", "--reference-update", "barycenter", *positions]
    if kind.startswith("otk-q"):  # q references of p / q supports each: the same embedding dimension as q = 1
        q = int(kind[5:])
        return ["--pooling", "otk", "--q", str(q), "--p", str(args.p // q), "--sigma-pos", str(args.sigma_pos)]
    raise ValueError(kind)


def cross_validate(args, key, folder):
    name, pos_file, neg_file = ORGANISMS[key]
    pos = read_fasta(os.path.join(args.data, pos_file))
    neg = read_fasta(os.path.join(args.data, neg_file))
    records, y = pos + neg, np.r_[np.ones(len(pos), int), np.zeros(len(neg), int)]
    settings = ["--kmer", str(args.kmer), "--anchors", str(args.anchors), "--sigma", str(args.sigma), "--eps", str(args.eps), "--iters", str(args.iters),
                "--max-samples", str(args.max_samples), "--seed", str(args.seed), "--quiet"]
    rows = []
    folds = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(np.zeros(len(y)), y)
    for fold, (train, test) in enumerate(folds):
        test_args = write_split(folder, f"{key}{fold}_test", records, y, test)
        for fraction in args.label_fractions:
            extra = []
            labelled = train
            if fraction < 1:
                labelled, unlabelled = train_test_split(train, train_size=fraction, stratify=y[train],
                                                        random_state=args.seed + fold)
                rest = os.path.join(folder, f"{key}{fold}_{fraction}_unlabelled.fa")
                write_fasta(rest, [records[i] for i in unlabelled])
                extra = ["--unlabeled", rest]
            train_args = write_split(folder, f"{key}{fold}_{fraction}_train", records, y, labelled)
            for pooling in args.poolings:
                model = os.path.join(folder, "model.safetensors")
                supervised = pooling.startswith("sup-")
                pool_args = variant_args(pooling[4:] if supervised else pooling, args)
                t0 = time.time()
                fit = run_json([args.cli, "otke", "fit", *train_args, *extra, *settings, *pool_args, "--out", model])
                if supervised:
                    trained = os.path.join(folder, "trained.safetensors")
                    run_json([args.cli, "otke", "train", "--init", model, *train_args, "--epochs",
                              str(args.epochs), "--seed", str(args.seed), "--quiet", "--out", trained])
                    model = trained
                t1 = time.time()
                ev = run_json([args.cli, "otke", "eval", "--quiet", "--model", model, *test_args])
                t2 = time.time()
                row = {"organism": name, "fold": fold, "labels": fraction, "pooling": pooling,
                       "n_labelled": len(labelled), "n_test": len(test), "accuracy": ev["accuracy"],
                       "auroc": ev["auroc"], "val_accuracy": fit["head"]["holdout_accuracy"], "lambda_log2": fit["lambda_log2"],
                       "fit_s": t1 - t0, "eval_s": t2 - t1, "fit_timings_s": fit["timings_s"]}
                rows.append(row)
                print(f"  {name} fold {fold} labels {fraction:.0%} {pooling:4s}: acc {row['accuracy']:.3f} "
                      f"auROC {row['auroc']:.3f} lambda 2^{row['lambda_log2']:.0f} fit {row['fit_s']:.1f}s",
                      file=sys.stderr, flush=True)
    return rows


def table(rows, args):
    lines = ["| organism | labels | pooling | accuracy | auROC | s per fit |", "|---|---|---|---|---|---|"]
    seen = []
    for r in rows:
        k = (r["organism"], r["labels"], r["pooling"])
        if k not in seen:
            seen.append(k)
    for organism, labels, pooling in seen:
        sel = [r for r in rows if (r["organism"], r["labels"], r["pooling"]) == (organism, labels, pooling)]
        acc = np.array([r["accuracy"] for r in sel])
        auc = np.array([r["auroc"] for r in sel])
        fit_s = np.mean([r["fit_s"] for r in sel])
        lines.append(f"| {organism} | {labels:.0%} | {pooling} | {acc.mean():.3f} ± {acc.std():.3f} | "
                     f"{auc.mean():.3f} ± {auc.std():.3f} | {fit_s:.1f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.environ.get("INDUCTIVE_CLI",
                                                   os.path.join(REPO, "build", "native-release", "bin", "inductive")))
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--organisms", nargs="+", default=list(ORGANISMS), choices=list(ORGANISMS))
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--label-fractions", nargs="+", type=float, default=[1.0, 0.1])
    p.add_argument("--poolings", nargs="+", default=["otk", "otk-nopos", "mean", "max"], choices=VARIANTS)
    p.add_argument("--epochs", type=int, default=15, help="supervised training epochs (sup-* poolings)")
    p.add_argument("--kmer", type=int, default=10)
    p.add_argument("--anchors", type=int, default=64)
    p.add_argument("--sigma", type=float, default=0.6)
    p.add_argument("--p", type=int, default=32)
    p.add_argument("--eps", type=float, default=0.5)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--sigma-pos", type=float, default=0.1)
    p.add_argument("--max-samples", type=int, default=300000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write every fold's results here (JSON)")
    args = p.parse_args()
    if not os.path.isdir(args.data):
        print(f"skipped: {args.data} not found (the promoter data of Umarov & Solovyev 2017, see data/SOURCE.md)")
        return
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"{args.cli}: no CLI there; build it or pass --cli")
    start = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="otke-cv-") as folder:
        for key in args.organisms:
            rows += cross_validate(args, key, folder)
    total = time.time() - start
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": commit, "machine": platform.processor() or
            platform.machine(), "cpus": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "total_s": total, "settings": {k: v for k, v in vars(args).items() if k not in ("cli", "data", "json")}}
    print(f"OTKE on promoters, {args.folds}-fold stratified CV; k={args.kmer}, anchors={args.anchors}, "
          f"sigma={args.sigma}, p={args.p} (otk-qQ: p/Q each), eps={args.eps}, iters={args.iters}, sigma_pos={args.sigma_pos}, "
          f"max_samples={args.max_samples}, seed={args.seed}")
    print(table(rows, args))
    print(f"total {total:.0f} s on {meta['cpus']} CPUs (OMP_NUM_THREADS={meta['omp_num_threads']}), "
          f"commit {commit}, {meta['date']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
