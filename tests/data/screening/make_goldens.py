#!/usr/bin/env python3
"""The screening goldens (tests/data/screening/README.md): made, and checked, by this script from `inductive`.

    /usr/bin/python3 tests/data/screening/make_goldens.py [--check] [--cli build/native-release/bin/inductive]
                                                         [--goldens DIR] [--only lambda1,gaussian,compress]

Without --check it runs the three CLI commands of RUNS from the repository root and writes the five files in this
folder (review `git diff` before committing). With --check it runs them into a temporary folder and compares the
results with the committed files (or those in --goldens DIR); it prints every difference, the first one first, and
exits 1 if there is one (tests/native/test_screening_goldens.py runs it under ctest). The CLI is --cli, else
$INDUCTIVE_CLI, else the release build's.

The bar (the CLI against itself; today it reproduces the committed files bit for bit, with any thread count):
  * JSON: the same structure (dict keys, list lengths), strings, booleans, nulls and integers exactly (sample counts,
    epochs, history.active, kernel rank...); every other number within |new - old| <= RTOL * |old| + ATOL. Every solve
    stops at a relative duality gap <= 1e-8, so a rerun of the same algorithm moves objectives and accuracies by far
    less than RTOL = 1e-7; ATOL = 1e-9 because gaps at or below the stopping tolerance (gap, relative_gap, the last
    history.gap, certified_gap at fraction 0) are rounding noise at that scale.
  * The values of TIMING keys are not compared (a key named `seconds` or ending in `_seconds`: screen's solve_seconds,
    screen_seconds and kernel.seconds, compress's seconds): wall-clock times of the run, different on every run. Their
    presence is compared like any key, since the browser tests compare the CLI's key sets with the wasm reports.
  * .npy (kept sample indices, int32): the same dtype and shape and exactly the same values.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_json import file_differences  # noqa: E402  (tests/data/golden_json.py)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DIGITS = "data/screening/digits.csv.gz"  # relative, from ROOT: the reports record the input as given
PREFIX = "digits-9-vs-rest-"
RTOL = 1e-7
ATOL = 1e-9

# name -> (CLI arguments without the outputs, outputs: option -> file suffix)
RUNS = {
    "lambda1": (["screen", "--csv", DIGITS, "--one-vs-rest", "9", "--lambda", "1", "--tol", "1e-9"],
                {"--out": ".json", "--kept": ".kept.npy"}),
    "gaussian": (["screen", "--csv", DIGITS, "--one-vs-rest", "9", "--lambda", "0.001", "--tol", "1e-9",
                  "--kernel", "gaussian", "--gamma", "0.001"],
                 {"--out": ".json", "--kept": ".kept.npy"}),
    "compress": (["compress", "--csv", DIGITS, "--one-vs-rest", "9", "--lambda", "1", "--tol", "1e-8",
                  "--fractions", "0,0.5,0.8"],
                 {"--out": ".json"}),
}


def files(names=RUNS):
    """The golden file names of the given runs, in RUNS order."""
    return [PREFIX + n + suffix for n in RUNS if n in names for suffix in RUNS[n][1].values()]


def command(cli, name, folder):
    """The command line of one run, writing into `folder` (relative to ROOT, or absolute)."""
    args, outputs = RUNS[name]
    outs = [a for opt, suffix in outputs.items() for a in (opt, os.path.join(folder, PREFIX + name + suffix))]
    return [os.path.abspath(cli), *args, *outs]


def make(cli, folder, names=RUNS):
    """Runs the CLI from the repository root, writing the goldens of `names` into `folder`."""
    for name in RUNS:
        if name not in names:
            continue
        cmd = command(cli, name, folder)
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            raise SystemExit(f"make_goldens: {name} failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.strip()}")


def is_timing(key):
    return key == "seconds" or key.endswith("_seconds")


def close(a, b):
    return abs(a - b) <= RTOL * abs(b) + ATOL


def exact(a, b):
    """.npy goldens (kept indices) agree element for element."""
    bad = np.flatnonzero(a.ravel() != b.ravel())
    if bad.size == 0:
        return []
    i = int(bad[0])
    return [f"[{i}]: new {a.ravel()[i]} != committed {b.ravel()[i]} ({bad.size} elements differ)"]


def differences(new_dir, committed_dir, name):
    """The differences of one golden file `name` between two folders."""
    return file_differences(new_dir, committed_dir, name, close, exact, is_timing)


def check(cli, committed_dir=HERE, names=RUNS):
    """Makes the goldens of `names` in a temporary folder; returns (files checked, differences)."""
    with tempfile.TemporaryDirectory() as out:
        make(cli, out, names)
        checked = files(names)
        found = [d for f in checked for d in differences(out, committed_dir, f)]
    return checked, found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare with the committed files instead of writing them")
    p.add_argument("--cli", default=os.environ.get("INDUCTIVE_CLI",
                                                   os.path.join(ROOT, "build", "native-release", "bin", "inductive")))
    p.add_argument("--goldens", default=HERE, help="with --check: the folder of goldens to compare with")
    p.add_argument("--only", default=",".join(RUNS), help="comma-separated runs: " + ", ".join(RUNS))
    a = p.parse_args()
    names = [n for n in a.only.split(",") if n]
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        p.error(f"unknown run(s) {unknown}: choose from {list(RUNS)}")
    if not a.check:
        make(a.cli, os.path.relpath(HERE, ROOT), names)
        print("make_goldens: rewrote " + ", ".join(files(names)) + "; review `git diff` before committing")
        return 0
    checked, found = check(a.cli, a.goldens, names)
    if found:
        print("make_goldens: first difference:", found[0])
    for d in found:
        print("make_goldens: stale:", d)
    print(f"make_goldens: {len(checked)} files checked, {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
