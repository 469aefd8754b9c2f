#!/usr/bin/env python3
"""The CLI as a GPU user runs it: `otke train` and `graphit train --backend cuda` next to `--backend cpu` on the
bundled promoters and MUTAG.

usage: cli_parity.py CLI OUT_DIR [--epochs N]

For each configuration (an identity embedding of 4-mers with 2 references and positional weighting; the default
Nystrom embedding of 6-mers; the DeepSEA-style multilabel model: conv filters, an MLP head with dropout, two labels),
fits a model with `otke fit`, trains it for N epochs on each backend from the same
initial model, and checks that
  - both runs report the same per-epoch train and validation losses (within 1e-3),
  - the CUDA-trained model file evaluates with the CPU CLI (`otke eval`) to the accuracy the run reported,
  - `otke embed --backend cuda` gives the CPU's embeddings (max abs diff <= 1e-4) and `otke eval --backend cuda`
    the CPU's accuracy,
  - `--backend cuda:99` (no such device) exits 2 with one `error:` line and writes nothing.
and that `graphit train --backend cuda` on MUTAG fold 1 (LapPE, BatchNorm, dropout: every device operation) reports
the CPU run's per-epoch losses (within 1e-3) and that `graphit predict` on the CPU gives the CUDA-trained model's
probabilities the CPU-trained model's (max abs diff <= 1e-3: the two runs' parameters differ by rounding).
Leaves NAME-cuda.safetensors and NAME-cpu.safetensors in OUT_DIR.
Exit 0 when all hold; prints a JSON summary either way.
"""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
POS = os.path.join(ROOT, "data", "promoters", "ecoli_prom_150.fa")
MUTAG = os.path.join(ROOT, "data", "tu-MUTAG")
MUTAG_FOLDS = os.path.join(ROOT, "data", "graphit-folds", "MUTAG")
NEG = os.path.join(ROOT, "data", "promoters", "ecoli_non_prom_150.fa")
BS = os.path.join(ROOT, "data", "promoters", "bsubtilis_prom_100.fa")
BS_NEG = os.path.join(ROOT, "data", "promoters", "bsubtilis_non_prom_100.fa")
TWO_CLASSES = ["--class", f"promoter={POS}", "--class", f"non_promoter={NEG}"]
# Label sets of the DeepSEA-style model (tests/native/test_cli_otke_multilabel.py's): promoter x organism.
LABEL_SETS = ["--class", f"promoter,b_subtilis={BS}", "--class", f"b_subtilis={BS_NEG}", "--class",
              f"promoter={POS}", "--class", f"-={NEG}"]


def run(cli, *args):
    done = subprocess.run([cli, *args], capture_output=True, text=True)
    return done


CONFIGS = {  # name: (otke fit's arguments, the classes)
    # identity 4-mers, two references with positional weighting (the committed H200 model)
    "identity": (["--kmer", "4", "--embedding", "identity", "--p", "32", "--q", "2", "--sigma-pos", "0.5"],
                 TWO_CLASSES),
    # the default embedding: Nystrom on 6-mers, anchors and references both learnt
    "nystrom": (["--kmer", "6", "--anchors", "16", "--p", "16"], TWO_CLASSES),
    # the DeepSEA-style model: conv filters, OT pooling, an MLP head with dropout, two labels with binary
    # cross-entropy (every part of it on the device)
    "deepsea": (["--multilabel", "--embedding", "conv", "--filters", "16", "--kmer", "8", "--p", "8", "--sigma-pos",
                 "0.1", "--hidden", "16", "--dropout", "0.2"], LABEL_SETS),
}


def loss_difference(reports, name, failures):
    """The largest difference between the CPU and the CUDA run's per-epoch training and validation losses (0 unless
    both ran); over 1e-3 is a failure."""
    worst = 0.0
    if "cpu" in reports and "cuda" in reports:
        for c, g in zip(reports["cpu"]["history"], reports["cuda"]["history"]):
            for key in ("train_loss", "val_loss"):
                worst = max(worst, abs(c[key] - g[key]))
        if worst > 1e-3:
            failures.append(f"{name}: per-epoch losses differ by {worst:.2e} (> 1e-3)")
    return worst


def parity(cli, out, name, fit_args, epochs, classes, failures):
    key = "label_accuracy" if "--multilabel" in fit_args else "accuracy"  # what `otke eval` reports
    init = os.path.join(out, f"{name}-init.safetensors")
    fit = run(cli, "otke", "fit", "--quiet", *classes, *fit_args, "--seed", "1", "--out", init)
    if fit.returncode != 0:
        failures.append(f"{name}: otke fit: {fit.stderr.strip()}")
        return {}
    reports = {}
    for backend in ("cpu", "cuda"):
        model = os.path.join(out, f"{name}-{backend}.safetensors")
        done = run(cli, "otke", "train", "--quiet", *classes, "--init", init, "--epochs", str(epochs),
                   "--batch-size", "32", "--seed", "2", "--backend", backend, "--out", model)
        if done.returncode != 0:
            failures.append(f"{name}: train --backend {backend}: {done.stderr.strip()}")
            continue
        reports[backend] = json.loads(done.stdout)
    worst = loss_difference(reports, name, failures)
    if len(reports) == 2:
        ev = run(cli, "otke", "eval", "--quiet", "--model", os.path.join(out, f"{name}-cuda.safetensors"), *classes)
        if ev.returncode != 0:
            failures.append(f"{name}: otke eval of the CUDA model on the CPU: {ev.stderr.strip()}")
        else:
            reports["cuda_eval_on_cpu"] = json.loads(ev.stdout)
    # Inference on the GPU: `otke embed` and `otke eval --backend cuda` against the CPU on the CUDA-trained model.
    embed_diff = None
    trained = os.path.join(out, f"{name}-cuda.safetensors")
    if os.path.exists(trained):
        outs = {}
        for backend in ("cpu", "cuda"):
            e = os.path.join(out, f"{name}-embed-{backend}.npy")
            done = run(cli, "otke", "embed", "--quiet", "--model", trained, "--fasta", POS, "--backend", backend,
                       "--out", e)
            if done.returncode != 0:
                failures.append(f"{name}: embed --backend {backend}: {done.stderr.strip()}")
            else:
                outs[backend] = np.load(e)
        if len(outs) == 2:
            embed_diff = float(np.abs(outs["cpu"] - outs["cuda"]).max())
            if not embed_diff <= 1e-4 * max(1.0, float(np.abs(outs["cpu"]).max())):
                failures.append(f"{name}: otke embed differs between cpu and cuda by {embed_diff:.2e}")
        ev = run(cli, "otke", "eval", "--quiet", "--model", trained, *classes, "--backend", "cuda")
        if ev.returncode != 0:
            failures.append(f"{name}: otke eval --backend cuda: {ev.stderr.strip()}")
        elif "cuda_eval_on_cpu" in reports and json.loads(ev.stdout)[key] != reports["cuda_eval_on_cpu"][key]:
            failures.append(f"{name}: otke eval {key} differs between cpu and cuda")
    return {"max_loss_difference": worst, "max_embedding_difference": embed_diff,
            "seconds": {b: reports[b]["seconds"] for b in ("cpu", "cuda") if b in reports},
            "best_val_accuracy": {b: reports[b]["best_val_accuracy"] for b in ("cpu", "cuda") if b in reports},
            "cuda_model_accuracy_on_cpu": reports.get("cuda_eval_on_cpu", {}).get(key)}


def graphit_parity(cli, out, epochs, failures):
    reports, probs = {}, {}
    for backend in ("cpu", "cuda"):
        model = os.path.join(out, f"graphit-{backend}.safetensors")
        rep = os.path.join(out, f"graphit-{backend}.json")
        done = run(cli, "graphit", "train", "--quiet", "--tu", MUTAG, "--folds", MUTAG_FOLDS, "--fold", "1",
                   "--epochs", str(epochs), "--lap-pe", "2", "--norm", "batch", "--dropout", "0.1", "--seed", "3",
                   "--backend", backend, "--out", model, "--report", rep)
        if done.returncode != 0:
            failures.append(f"graphit train --backend {backend}: {done.stderr.strip()}")
            continue
        with open(rep) as f:
            reports[backend] = json.load(f)
        p = os.path.join(out, f"graphit-predict-{backend}.npy")
        done = run(cli, "graphit", "predict", "--model", model, "--tu", MUTAG, "--out", p)
        if done.returncode != 0:
            failures.append(f"graphit predict of the {backend} model: {done.stderr.strip()}")
        else:
            probs[backend] = np.load(p)
    worst, pred_diff = loss_difference(reports, "graphit", failures), None
    if len(probs) == 2:
        pred_diff = float(np.abs(probs["cpu"] - probs["cuda"]).max())
        if not pred_diff <= 1e-3:
            failures.append(f"graphit: the CUDA model's CPU predictions differ from the CPU model's by {pred_diff:.2e}")
    return {"max_loss_difference": worst, "max_prediction_difference": pred_diff,
            "seconds": {b: round(sum(e["seconds"] for e in reports[b]["history"]), 2) for b in reports}}


def main():
    cli, out = sys.argv[1], sys.argv[2]
    epochs = int(sys.argv[sys.argv.index("--epochs") + 1]) if "--epochs" in sys.argv else 5
    os.makedirs(out, exist_ok=True)
    failures = []
    summary = {name: parity(cli, out, name, args, epochs, classes, failures)
               for name, (args, classes) in CONFIGS.items()}
    summary["graphit"] = graphit_parity(cli, out, epochs, failures)
    bad = os.path.join(out, "bad.safetensors")
    done = run(cli, "otke", "train", "--quiet", *TWO_CLASSES, "--init", os.path.join(out, "identity-init.safetensors"),
               "--epochs", "1", "--backend", "cuda:99", "--out", bad)
    lines = [l for l in done.stderr.splitlines() if l.strip()]
    if done.returncode != 2 or len(lines) != 1 or not lines[0].startswith("error:") or os.path.exists(bad):
        failures.append(f"cuda:99 gave exit {done.returncode} and stderr {done.stderr!r}")
    summary.update({"ok": not failures, "failures": failures, "cuda_error_line": lines[0] if lines else ""})
    print(json.dumps(summary, indent=1))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
