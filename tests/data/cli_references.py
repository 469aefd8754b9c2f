#!/usr/bin/env python3
"""The native CLI's reference outputs that the WebAssembly build is compared with: made, and checked, by this script.

    /usr/bin/python3 tests/data/cli_references.py [--check] [--cli build/native-release/bin/inductive]

Without --check it rewrites the files below from the committed models. With --check it makes them again in a
temporary folder and compares them with the committed ones; it prints every difference and exits 1 if there is one,
so a change of the native numerics cannot leave the browser tests comparing against stale references (npm test runs
it: tests/native/test_cli_references.py). The bar is the CLI against itself, across machines and builds:
max |new - committed| <= 1e-5 x max(1, max |committed|) per array; JSON files must have the same structure, strings
and integers, and their other numbers agree to the same bar.

  data/models/otke-promoters-ecoli.reference.npy      otke embed, 8 promoter/non-promoter records
  data/models/otke-promoters-cuda-h200.reference.npy  the same 8 records, the model trained on a GPU
  tests/data/graphit/                                  graphit predict + attention, MUTAG model, 6 molecules
  tests/data/graphit-zinc/predict.{npy,json}           graphit predict, the charge-typed regression fixture

The models themselves (data/models/README.md, tests/data/graphit-zinc/README.md say how they were trained) are
inputs here, not outputs: training on another CPU gives other bits.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_json import file_differences  # noqa: E402  (tests/data/golden_json.py)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOL = 1e-5

MUTAG_SMILES = ["O=[N+]([O-])c1ccc2ccccc2c1", "Nc1ccc(cc1)-c1ccc(N)cc1", "CCO", "Clc1ccc(Cl)cc1",
                "O=[N+]([O-])c1ccc(Br)cc1", "Fc1ccc(I)c(C(=O)O)c1"]
ZINC_SMILES = ["CC[NH2+][C@@H](Cc1ccc2c(c1)CCC2)[C@H]1CSCCS1", "[NH3+]CC1CCC(c2nc3ccc(Cl)cc3s2)CC1",
               "O=C(COc1ccc([N+](=O)[O-])cc1Cl)NC1CCCCCCC1", "CCc1nncn1CC[NH2+][C@H](C)Cn1c[nH+]c(C)c1C",
               "CC[NH+](CC)[C@@](C)(CC)[C@@H](C)O", "CC[NH3+]", "CCN"]


def run(cli, *args):
    # From the repository root: the reports record the model paths as given, relative, as committed.
    r = subprocess.run([os.path.abspath(cli), *args], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"cli_references: {' '.join(args[:2])} failed ({r.returncode}): {r.stderr.strip()}")


def reference_fasta(folder):
    """The first 4 records of each vendored promoter file (8 lines each: header + sequence lines)."""
    path = os.path.join(folder, "reference8.fa")
    with open(path, "w") as out:
        for name in ("ecoli_prom_150.fa", "ecoli_non_prom_150.fa"):
            with open(os.path.join(ROOT, "data", "promoters", name)) as f:
                out.writelines(f.readlines()[:8])
    return path


def make(cli, out):
    """Writes every reference under `out`, at the paths they have under the repository root."""
    models = os.path.join("data", "models")  # relative: the reports record the model's path
    for d in ("data/models", "tests/data/graphit", "tests/data/graphit-zinc"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fasta = reference_fasta(tmp)
        for model in ("otke-promoters-ecoli", "otke-promoters-cuda-h200"):
            run(cli, "otke", "embed", "--model", os.path.join(models, model + ".safetensors"), "--fasta", fasta,
                "--out", os.path.join(out, "data", "models", model + ".reference.npy"))
    mutag = os.path.join(models, "graphit-mutag.safetensors")
    smiles = [a for s in MUTAG_SMILES for a in ("--smiles", s)]
    g = os.path.join(out, "tests", "data", "graphit")
    run(cli, "graphit", "predict", "--model", mutag, *smiles, "--out", os.path.join(g, "predict.npy"),
        "--report", os.path.join(g, "predict.json"))
    for i, s in enumerate(MUTAG_SMILES):
        run(cli, "graphit", "attention", "--model", mutag, "--smiles", s, "--out-dir", os.path.join(g, f"attention-{i}"))
    z = os.path.join(out, "tests", "data", "graphit-zinc")
    smiles = [a for s in ZINC_SMILES for a in ("--smiles", s)]
    run(cli, "graphit", "predict", "--model", os.path.join("tests", "data", "graphit-zinc", "model.safetensors"),
        *smiles, "--out", os.path.join(z, "predict.npy"), "--report", os.path.join(z, "predict.json"))


def within_tol(a, b):
    """.npy goldens agree to TOL of their largest magnitude (at least 1)."""
    err = float(np.abs(a.astype(np.float64) - b).max()) if a.size else 0.0
    bar = TOL * max(1.0, float(np.abs(b).max()) if b.size else 0.0)
    return [] if err <= bar else [f": max |new - committed| = {err:.3g} > {bar:.3g}"]


def differences(new_root, committed_root, rel):
    return file_differences(new_root, committed_root, rel, lambda x, y: abs(x - y) <= TOL * max(1.0, abs(y)), within_tol)


def check(cli):
    with tempfile.TemporaryDirectory() as out:
        make(cli, out)
        rels = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, files in os.walk(out) for f in files)
        found = [d for rel in rels for d in differences(out, ROOT, rel)]
    return rels, found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the committed files instead of writing them")
    p.add_argument("--cli", default=os.environ.get("INDUCTIVE_CLI",
                                                   os.path.join(ROOT, "build", "native-release", "bin", "inductive")))
    a = p.parse_args()
    if not a.check:
        make(a.cli, ROOT)
        print("cli_references: rewritten; review `git diff --stat` before committing")
        return 0
    rels, found = check(a.cli)
    for d in found:
        print("cli_references: stale:", d)
    print(f"cli_references: {len(rels)} files checked, {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
