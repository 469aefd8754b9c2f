#!/usr/bin/env python3
"""The thesis' visualisation study (ch. 3), measured: does GraphiT's attention single out nitro and amine groups?

The thesis trains GraphiT (3 layers, 4 heads, d 64, diffusion kernel) on Mutagenicity and shows, molecule by
molecule, that the salient columns of the attention (the atoms every other atom looks at) are the groups known to
cause mutagenicity, the nitro group's N above all. Mutagenicity (4,337 molecules) is not available offline; MUTAG
(188 nitroaromatics, the same task) is, and the demo's default model is that very configuration trained on it
(data/models/README.md). This script turns the figures into numbers with `inductive graphit attention` on every
MUTAG graph:
  saliency of atom j in layer l = (column j of the head-averaged attention, summed over rows) / n: the share of the
  attention the molecule's atoms pay to j (sums to 1 over atoms);
  nitro N = an N bonded to two O's; amine N = an N whose only neighbour is a C (hydrogens are implicit).
For each group and layer: the mean ratio of the group's N saliency to the molecule's mean (1 = no preference), the
fraction of molecules where it is the most salient atom, and its mean percentile rank; the same for the diffusion
kernel's own column mass (what the attention would be without learning) and for the O atoms of the nitro groups.
  --model M     the model to study (default: the demo's data/models/graphit-mutag.safetensors, trained on all of
                MUTAG); with --train-fold K a model of that configuration is trained on fold K's training part
                (data/graphit-folds) and studied on its held-out test molecules too.

    /usr/bin/python3 bench/graphit_mutag_saliency.py [--cli build/native-release/bin/inductive] [--train-fold 1]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TU = os.path.join(REPO, "data", "tu-MUTAG")
LABELS = ["C", "N", "O", "F", "I", "Cl", "Br"]


def read_mutag():
    """Per graph: (atom symbols, adjacency sets, class) from the TU files (1-based node ids)."""
    indicator = [int(l) for l in open(os.path.join(TU, "MUTAG_graph_indicator.txt"))]
    labels = [LABELS[int(l)] for l in open(os.path.join(TU, "MUTAG_node_labels.txt"))]
    classes = [int(l) for l in open(os.path.join(TU, "MUTAG_graph_labels.txt"))]
    first = {}
    for node, g in enumerate(indicator):
        first.setdefault(g, node)
    graphs = [([], [], c) for c in classes]
    for node, g in enumerate(indicator):
        graphs[g - 1][0].append(labels[node])
        graphs[g - 1][1].append(set())
    for line in open(os.path.join(TU, "MUTAG_A.txt")):
        a, b = (int(v) - 1 for v in line.split(","))
        g = indicator[a] - 1
        graphs[g][1][a - first[g + 1]].add(b - first[g + 1])
        graphs[g][1][b - first[g + 1]].add(a - first[g + 1])
    return graphs


def groups(atoms, adjacency):
    nitro = [j for j, s in enumerate(atoms) if s == "N" and sum(atoms[k] == "O" for k in adjacency[j]) >= 2]
    nitro_o = sorted({k for j in nitro for k in adjacency[j] if atoms[k] == "O"})
    amine = [j for j, s in enumerate(atoms) if s == "N" and len(adjacency[j]) == 1
             and atoms[next(iter(adjacency[j]))] == "C"]
    return {"nitro N": nitro, "nitro O": nitro_o, "amine N": amine}


def stats(scores, members):
    """Mean ratio to the molecule's mean, fraction where a member is the most salient atom, mean percentile."""
    n = len(scores)
    ratio = float(np.mean(scores[members]) * n / scores.sum())
    top = float(int(np.argmax(scores)) in members)
    order = np.argsort(-scores, kind="stable")
    rank = {int(j): r for r, j in enumerate(order)}
    percentile = float(np.mean([1 - rank[j] / max(n - 1, 1) for j in members]))
    return ratio, top, percentile


def study(cli, model, graphs, which, folder):
    rows = {}
    for i in which:
        atoms, adjacency, _ = graphs[i]
        g = groups(atoms, adjacency)
        if not any(g.values()):
            continue
        out = os.path.join(folder, f"g{i}")
        done = subprocess.run([cli, "graphit", "attention", "--model", model, "--tu", TU, "--node-label-names",
                               *LABELS, "--graph", str(i), "--out-dir", out], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"graphit attention failed on graph {i}: {done.stderr}")
        saliency = np.load(os.path.join(out, "saliency.npy")).astype(np.float64)  # layers x n
        kernel = np.load(os.path.join(out, "kernel.npy")).astype(np.float64)
        summary = json.load(open(os.path.join(out, "summary.json")))
        predicted = int(np.argmax(summary["probabilities"]))
        sources = {f"layer {l + 1}": saliency[l] for l in range(saliency.shape[0])}
        sources["mean of layers"] = saliency.mean(0)
        sources["kernel alone"] = kernel.sum(0) / kernel.sum()
        for group, members in g.items():
            if not members:
                continue
            for source, scores in sources.items():
                rows.setdefault((group, source), []).append((*stats(scores, members), predicted))
    return rows


def print_table(title, rows):
    print(f"\n{title}\n")
    print("| group | attention of | molecules | saliency / mean | most salient atom | percentile |")
    print("|---|---|---|---|---|---|")
    for (group, source), values in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "kernel alone",
                                                                        kv[0][1])):
        v = np.array([r[:3] for r in values])
        print(f"| {group} | {source} | {len(v)} | {v[:, 0].mean():.2f} | {v[:, 1].mean():.0%} | "
              f"{v[:, 2].mean():.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.environ.get("INDUCTIVE_CLI", os.path.join(REPO, "build", "native-release",
                                                                               "bin", "inductive")))
    ap.add_argument("--model", default=os.path.join(REPO, "data", "models", "graphit-mutag.safetensors"))
    ap.add_argument("--train-fold", type=int, help="also train the configuration on this fold and study its test set")
    args = ap.parse_args()
    graphs = read_mutag()
    with tempfile.TemporaryDirectory(prefix="mutag-saliency-") as folder:
        print_table(f"{os.path.relpath(args.model, REPO)} on all {len(graphs)} MUTAG graphs (its training data)",
                    study(args.cli, args.model, graphs, range(len(graphs)), folder))
        if args.train_fold:
            model = os.path.join(folder, "fold.safetensors")
            folds = os.path.join(REPO, "data", "graphit-folds", "MUTAG")
            done = subprocess.run([args.cli, "graphit", "train", "--tu", TU, "--node-label-names", ",".join(LABELS),
                                   "--class-names", "non-mutagenic,mutagenic", "--folds", folds, "--fold",
                                   str(args.train_fold), "--layers", "3", "--heads", "4", "--dim", "64", "--kernel",
                                   "diffusion", "--beta", "1", "--epochs", "100", "--dropout", "0.1", "--seed", "0",
                                   "--quiet", "--out", model], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"graphit train failed: {done.stderr}")
            test = [int(l) for l in open(os.path.join(folds, f"test_idx-{args.train_fold}.txt")) if l.strip()]
            print_table(f"the same configuration trained on fold {args.train_fold}'s training part, on its "
                        f"{len(test)} test graphs", study(args.cli, model, graphs, test, folder))


if __name__ == "__main__":
    main()
