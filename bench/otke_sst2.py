#!/usr/bin/env python3
"""Supervised OTKE over trainable token embeddings vs mean pooling on SST-2 (GLUE), driving the `inductive` CLI.

Data: ../shared/data/sst2-glue (see its SOURCE.md): train.tsv (67,349 labelled phrases) for training, dev.tsv (872
labelled sentences) as the test set, as papers do (GLUE test labels are private); skipped when absent.

Both models read the same text the same way and differ only in the pooling:
  otk   token table (V x E, trained) -> identity embedding -> OT pooling on p supports, q = 1 (thesis ch. 2) ->
        linear head on the q p E pooled features
  mean  token table (V x E, trained) -> identity embedding -> mean over the tokens -> linear head on E features
Pipeline per model (all in the CLI):
  1. `otke fit --text train.tsv`: vocabulary from the training text (tokens seen >= --min-count times; others map
     to <unk>), token table drawn N(0, 1/E) with --seed (no pretrained vectors are used), references by k-means on
     the random token vectors (otk), and a logistic head at a fixed lambda (--lambda: on random features a search
     over lambdas means nothing; it is only the starting point of step 2).
  2. `otke train`: table, references and head trained end to end through Sinkhorn (Adam, lr halved when the
     validation loss stalls), the epoch with the best loss on a held-out stratified --val-fraction of train.tsv
     kept (the same split for both models: same seed).
  3. `otke eval --text dev.tsv`: dev accuracy.
No positional weighting of the plan (sigma_pos = 0): SST-2's training examples are mostly short phrases (median 7
tokens) and its dev examples full sentences (median 19), so "the i-th of n tokens" does not mean the same thing in
both, and sentiment does not depend on where in a sentence a word sits; it also keeps the comparison with mean
pooling (position-blind) about the pooling alone.

    OMP_NUM_THREADS=1 /usr/bin/python3 bench/otke_sst2.py [--cli build/h-sst2/bin/inductive] [--train-size 20000]
"""
import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_DATA = os.path.join(REPO, "..", "shared", "data", "sst2-glue")


def run_json(cmd):
    print("  $ " + " ".join(cmd), file=sys.stderr, flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return json.loads(done.stdout)


def subset(train, size, seed, folder):
    """The first `size` rows of a seeded shuffle of train.tsv (all of it when size <= 0), as a GLUE TSV."""
    with open(train) as f:
        header, *rows = f.read().splitlines()
    if size <= 0 or size >= len(rows):
        return train, len(rows)
    random.Random(seed).shuffle(rows)
    path = os.path.join(folder, f"train_{size}.tsv")
    with open(path, "w") as f:
        f.write("\n".join([header, *rows[:size]]) + "\n")
    return path, size


def run_model(args, pooling, train, dev, folder):
    fitted = os.path.join(folder, f"{pooling}_fit.safetensors")
    trained = os.path.join(folder, f"{pooling}.safetensors")
    shape = ["--pooling", pooling]
    if pooling == "otk":
        shape += ["--p", str(args.p), "--q", "1", "--eps", str(args.eps), "--iters", str(args.iters),
                  "--sigma-pos", "0"]
    t0 = time.time()
    fit = run_json([args.cli, "otke", "fit", "--text", train, "--dim", str(args.dim), "--min-count",
                    str(args.min_count), "--embedding", "identity", *shape, "--lambda", str(args.head_lambda),
                    "--val-fraction", str(args.val_fraction), "--max-samples", str(args.max_samples), "--seed",
                    str(args.seed), "--quiet", "--out", fitted])
    t1 = time.time()
    tr = run_json([args.cli, "otke", "train", "--init", fitted, "--text", train, "--epochs", str(args.epochs),
                   "--batch-size", str(args.batch_size), "--lr", str(args.lr), "--iters", str(args.iters),
                   "--lr-patience", str(args.lr_patience), "--early-stop", str(args.early_stop),
                   "--val-fraction", str(args.val_fraction), "--seed", str(args.seed), "--quiet", "--out", trained])
    t2 = time.time()
    ev = run_json([args.cli, "otke", "eval", "--model", trained, "--text", dev, "--quiet"])
    t3 = time.time()
    row = {"pooling": pooling, "vocab": fit["vocab"], "embedding_dim": fit["embedding_dim"],
           "n_train": tr["n_train"], "n_val": tr["n_val"], "epochs_run": tr["epochs_run"],
           "best_epoch": tr["best_epoch"], "val_accuracy": tr["best_val_accuracy"], "val_loss": tr["best_val_loss"],
           "dev_accuracy": ev["accuracy"], "dev_auroc": ev["auroc"], "fit_s": t1 - t0, "train_s": t2 - t1,
           "eval_s": t3 - t2, "s_per_epoch": (t2 - t1) / max(1, tr["epochs_run"]),
           "history": tr["history"]}
    print(f"  {pooling}: dev acc {row['dev_accuracy']:.4f} (val acc {row['val_accuracy']:.4f}, best epoch "
          f"{row['best_epoch']}/{row['epochs_run']}), fit {row['fit_s']:.0f}s train {row['train_s']:.0f}s",
          file=sys.stderr, flush=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.environ.get("INDUCTIVE_CLI",
                                                   os.path.join(REPO, "build", "native-release", "bin", "inductive")))
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--poolings", nargs="+", default=["otk", "mean"], choices=["otk", "mean", "max"])
    p.add_argument("--train-size", type=int, default=0, help="rows of train.tsv used (0 = all 67,349)")
    p.add_argument("--dim", type=int, default=64, help="token embedding dimension E")
    p.add_argument("--min-count", type=int, default=1)
    p.add_argument("--p", type=int, default=16)
    p.add_argument("--eps", type=float, default=0.5)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--lr-patience", type=int, default=1)
    p.add_argument("--early-stop", type=int, default=3)
    p.add_argument("--val-fraction", type=float, default=0.05)
    p.add_argument("--head-lambda", type=float, default=1e-4)
    p.add_argument("--max-samples", type=int, default=100000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the results here (JSON)")
    args = p.parse_args()
    if not os.path.isdir(args.data):
        print(f"skipped: {args.data} not found (SST-2, GLUE version)")
        return
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"{args.cli}: no CLI there; build it or pass --cli")
    start = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="otke-sst2-") as folder:
        train, n_rows = subset(os.path.join(args.data, "train.tsv"), args.train_size, args.seed, folder)
        dev = os.path.join(args.data, "dev.tsv")
        for pooling in args.poolings:
            rows.append(run_model(args, pooling, train, dev, folder))
    total = time.time() - start
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": commit, "machine": platform.processor() or
            platform.machine(), "cpus": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "train_rows": n_rows, "total_s": total,
            "settings": {k: v for k, v in vars(args).items() if k not in ("cli", "data", "json")}}
    print(f"SST-2 (GLUE): {n_rows} train rows ({1 - args.val_fraction:.0%} train / {args.val_fraction:.0%} "
          f"epoch selection), dev 872 as test; E={args.dim}, identity embedding, p={args.p}, q=1, eps={args.eps}, "
          f"iters={args.iters}, sigma_pos=0, batch {args.batch_size}, lr {args.lr}, <= {args.epochs} epochs, "
          f"seed {args.seed}")
    print("| pooling | vocab | head input | dev accuracy | dev auROC | held-out acc | best epoch / run | "
          "s per epoch | fit + train s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['pooling']} | {r['vocab']} | {r['embedding_dim']} | {r['dev_accuracy']:.4f} | "
              f"{r['dev_auroc']:.4f} | {r['val_accuracy']:.4f} | {r['best_epoch']} / {r['epochs_run']} | "
              f"{r['s_per_epoch']:.1f} | {r['fit_s'] + r['train_s']:.0f} |")
    print(f"total {total:.0f} s on {meta['cpus']} CPUs (OMP_NUM_THREADS={meta['omp_num_threads']}), "
          f"commit {commit}, {meta['date']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
