"""bench/graphit_tu_cv.py, the runner of the GraphiT accuracy table, on the vendored MUTAG for a few epochs: it runs
the cells it is asked for, skips a cell whose report exists, merges a cell split by folds, and prints the mean +- std
of the fold accuracies the CLI reported."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

CLI = os.environ.get("INDUCTIVE_CLI")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "bench", "graphit_tu_cv.py")
DATA = os.path.join(ROOT, "data")
FOLD_ROOT = os.path.join(ROOT, "data", "graphit-folds")


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


class GraphitTuCvRunner(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def runner(self, *args):
        return subprocess.run([sys.executable, SCRIPT, "--cli", CLI, "--data", DATA, "--fold-root", FOLD_ROOT,
                               "--results", self.results, "--datasets", "MUTAG", "--epochs", "2", *args],
                              capture_output=True, text=True, timeout=300)

    def test_runs_skips_merges_and_tabulates(self):
        r = self.runner("--variants", "T", "adjacency+gckn", "--folds-to-run", "1", "2", "--jobs", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.path.basename(p) for p in glob.glob(os.path.join(self.results, "*.json"))),
                         ["MUTAG_T_folds-1-2.json", "MUTAG_adjacency+gckn_folds-1-2.json"])
        again = self.runner("--variants", "T", "--folds-to-run", "1", "2")
        self.assertIn("report exists, skipped", again.stderr)
        r = self.runner("--variants", "T", "--folds-to-run", "3")
        self.assertEqual(r.returncode, 0, r.stderr)

        accs = []
        for name in ("MUTAG_T_folds-1-2.json", "MUTAG_T_folds-3.json"):
            with open(os.path.join(self.results, name)) as f:
                accs += [fold["test_accuracy_last"] for fold in json.load(f)["folds"]]
        mean = sum(accs) / 3
        std = (sum((a - mean) ** 2 for a in accs) / 3) ** 0.5
        row = next(line for line in r.stdout.splitlines() if line.startswith("| MUTAG |"))
        t_cell = row.split("|")[2].strip()
        self.assertTrue(t_cell.startswith(f"{100 * mean:.1f} +- {100 * std:.1f} ("), row)
        self.assertIn("folds 1,2,3; 2 epochs", t_cell)
        self.assertIn("folds 1,2; 2 epochs", row.split("|")[10])  # adjacency+gckn, the ninth variant

    def test_refuses_an_unknown_variant(self):
        r = self.runner("--variants", "heat")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("unknown variant 'heat'", r.stderr)


if __name__ == "__main__":
    unittest.main()
