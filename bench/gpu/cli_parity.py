#!/usr/bin/env python3
"""The CLI as a GPU user runs it: `otke train --backend cuda` next to `--backend cpu` on the bundled promoters.

usage: cli_parity.py CLI OUT_DIR [--epochs N]

Fits an identity-embedding OTKE model (4-mers, 32 supports, 2 references, positional weighting) with `otke fit`,
trains it for N epochs on each backend from the same initial model, and checks that
  - both runs report the same per-epoch train and validation losses (within 1e-3),
  - the CUDA-trained model file evaluates with the CPU CLI (`otke eval`) to the accuracy the run reported,
  - `--backend cuda:99` (no such device) exits 2 with one `error:` line and writes nothing.
Leaves cuda.safetensors and cpu.safetensors in OUT_DIR (the wasm check reads the CUDA one back home).
Exit 0 when all hold; prints a JSON summary either way.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
POS = os.path.join(ROOT, "data", "promoters", "ecoli_prom_150.fa")
NEG = os.path.join(ROOT, "data", "promoters", "ecoli_non_prom_150.fa")


def run(cli, *args):
    done = subprocess.run([cli, *args], capture_output=True, text=True)
    return done


def main():
    cli, out = sys.argv[1], sys.argv[2]
    epochs = int(sys.argv[sys.argv.index("--epochs") + 1]) if "--epochs" in sys.argv else 5
    os.makedirs(out, exist_ok=True)
    init = os.path.join(out, "init.safetensors")
    classes = ["--class", f"promoter={POS}", "--class", f"non_promoter={NEG}"]
    fit = run(cli, "otke", "fit", "--quiet", *classes, "--kmer", "4", "--embedding", "identity", "--p", "32",
              "--q", "2", "--sigma-pos", "0.5", "--seed", "1", "--out", init)
    if fit.returncode != 0:
        print(json.dumps({"ok": False, "stage": "fit", "stderr": fit.stderr}))
        return 1
    reports, failures = {}, []
    for backend in ("cpu", "cuda"):
        model = os.path.join(out, f"{backend}.safetensors")
        done = run(cli, "otke", "train", "--quiet", *classes, "--init", init, "--epochs", str(epochs),
                   "--batch-size", "32", "--seed", "2", "--backend", backend, "--out", model)
        if done.returncode != 0:
            failures.append(f"train --backend {backend}: {done.stderr.strip()}")
            continue
        reports[backend] = json.loads(done.stdout)
    worst = 0.0
    if len(reports) == 2:
        for c, g in zip(reports["cpu"]["history"], reports["cuda"]["history"]):
            for key in ("train_loss", "val_loss"):
                worst = max(worst, abs(c[key] - g[key]))
        if worst > 1e-3:
            failures.append(f"per-epoch losses differ by {worst:.2e} (> 1e-3)")
        ev = run(cli, "otke", "eval", "--quiet", "--model", os.path.join(out, "cuda.safetensors"), *classes)
        if ev.returncode != 0:
            failures.append(f"otke eval of the CUDA model on the CPU: {ev.stderr.strip()}")
        else:
            reports["cuda_eval_on_cpu"] = json.loads(ev.stdout)
    bad = os.path.join(out, "bad.safetensors")
    done = run(cli, "otke", "train", "--quiet", *classes, "--init", init, "--epochs", "1", "--backend", "cuda:99",
               "--out", bad)
    lines = [l for l in done.stderr.splitlines() if l.strip()]
    if done.returncode != 2 or len(lines) != 1 or not lines[0].startswith("error:") or os.path.exists(bad):
        failures.append(f"cuda:99 gave exit {done.returncode} and stderr {done.stderr!r}")
    summary = {"ok": not failures, "failures": failures, "max_loss_difference": worst,
               "seconds": {b: r.get("seconds") for b, r in reports.items() if isinstance(r, dict) and "seconds" in r},
               "best_val_accuracy": {b: reports[b]["best_val_accuracy"] for b in ("cpu", "cuda") if b in reports},
               "cuda_error_line": lines[0] if lines else ""}
    print(json.dumps(summary, indent=1))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
