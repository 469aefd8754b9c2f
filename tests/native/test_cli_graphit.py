"""`inductive graphit train | cv | predict | attention` as a user drives them, on the vendored MUTAG and its
GraphiT folds: outputs exist and are consistent, checkpoints resume, bad input is refused with one `error:` line
and no output file."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

CLI = os.environ.get("INDUCTIVE_CLI")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MUTAG = os.path.join(ROOT, "data", "tu-MUTAG")
FOLDS = os.path.join(ROOT, "data", "graphit-folds", "MUTAG")
OTKE_MODEL = os.path.join(ROOT, "data", "models", "otke-promoters-ecoli.safetensors")
NAMES = ["--node-label-names", "C,N,O,F,I,Cl,Br", "--class-names", "non-mutagenic,mutagenic"]
NITRONAPHTHALENE = "O=[N+]([O-])c1ccc2ccccc2c1"


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


class GraphitCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inductive-cli-graphit-")
        cls.model = os.path.join(cls.dir, "m.safetensors")
        r = cls.run_cli("train", "--tu", MUTAG, *NAMES, "--folds", FOLDS, "--fold", "1", "--epochs", "8",
                        "--layers", "2", "--dim", "32", "--lap-pe", "2", "--gckn", "3", "--gckn-filters", "8",
                        "--out", cls.model, "--report", os.path.join(cls.dir, "r.json"))
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        cls.train_stderr = r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    @staticmethod
    def run_cli(*args, cwd=None):
        return subprocess.run([CLI, "graphit", *args], capture_output=True, text=True, timeout=300, cwd=cwd)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_refused(self, *args, out="bad.npy", contains=None):
        before = sorted(os.listdir(self.dir))
        r = self.run_cli(*args)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("error:"), r.stderr)
        if contains:
            self.assertIn(contains, lines[0])
        self.assertEqual(sorted(os.listdir(self.dir)), before)  # nothing written, no temp leftovers

    def test_train_reports_progress_and_history(self):
        self.assertIn("epoch 8/8", self.train_stderr)
        self.assertIn("ETA", self.train_stderr)
        with open(self.path("r.json")) as f:
            report = json.load(f)
        self.assertEqual(report["graphs"], {"train": 152, "val": 18, "test": 18})
        self.assertEqual(len(report["history"]), 8)
        self.assertEqual(report["config"]["graph"]["lap_pe"], 2)
        self.assertEqual(report["config"]["graph"]["gckn"]["path_size"], 3)
        self.assertEqual(report["config"]["input"]["node_labels"], ["C", "N", "O", "F", "I", "Cl", "Br"])
        for e in report["history"]:
            self.assertTrue(0 <= e["test_accuracy"] <= 1)

    def test_predict_dataset_and_smiles_agree(self):
        out, rep = self.path("p.npy"), self.path("p.json")
        r = self.run_cli("predict", "--model", self.model, "--tu", MUTAG, *NAMES, "--out", out, "--report", rep)
        self.assertEqual(r.returncode, 0, r.stderr)
        p = np.load(out)
        self.assertEqual(p.shape, (188, 2))
        np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-5)
        with open(rep) as f:
            self.assertGreater(json.load(f)["accuracy"], 0.5)
        r = self.run_cli("predict", "--model", self.model, "--smiles", NITRONAPHTHALENE, "--smiles", "CCO",
                         "--out", out, "--report", rep)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(np.load(out).shape, (2, 2))
        with open(rep) as f:
            self.assertIn(json.load(f)["graphs"][0]["prediction"], ["non-mutagenic", "mutagenic"])

    def test_attention_maps_are_row_stochastic_and_saliency_sums_to_one(self):
        d = self.path("att")
        r = self.run_cli("attention", "--model", self.model, "--smiles", NITRONAPHTHALENE, "--out-dir", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        a, s, k = (np.load(os.path.join(d, n)) for n in ("attention.npy", "saliency.npy", "kernel.npy"))
        self.assertEqual(a.shape, (2, 13, 13))
        np.testing.assert_allclose(a.sum(axis=2), 1, atol=1e-4)
        np.testing.assert_allclose(s.sum(axis=1), 1, atol=1e-4)
        np.testing.assert_allclose(s, a.sum(axis=1) / 13, atol=1e-5)  # saliency = column mass / n
        np.testing.assert_allclose(k, k.T, atol=1e-6)
        with open(os.path.join(d, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["nodes"][:3], ["O", "N", "O"])
        self.assertEqual(len(summary["edges"]), 14)
        r = self.run_cli("attention", "--model", self.model, "--tu", MUTAG, *NAMES, "--graph", "5", "--out-dir", d)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_checkpoint_resumes_to_the_same_model(self):
        full, part = self.path("full.safetensors"), self.path("part.safetensors")
        ck = self.path("ck.bin")
        common = ["--tu", MUTAG, "--folds", FOLDS, "--fold", "2", "--layers", "1", "--dim", "16", "--quiet"]
        self.assertEqual(self.run_cli("train", *common, "--epochs", "4", "--out", full).returncode, 0)
        r = self.run_cli("train", *common, "--epochs", "2", "--checkpoint", ck, "--out", part)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_cli("train", *common, "--epochs", "4", "--checkpoint", ck, "--out", part)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(full, "rb") as a, open(part, "rb") as b:
            self.assertEqual(a.read(), b.read())
        for name in ("full.safetensors", "part.safetensors", "ck.bin"):
            os.remove(self.path(name))

    def test_cv_runs_the_protocol(self):
        out = self.path("cv.json")
        r = self.run_cli("cv", "--tu", MUTAG, "--folds", FOLDS, "--folds-to-run", "1,3", "--epochs", "3",
                         "--grid-layers", "1,2", "--grid-dim", "16", "--last", "2", "--quiet", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual([f["fold"] for f in report["folds"]], [1, 3])
        self.assertEqual(len(report["folds"][0]["selection"]), 4)  # 2 layers x 2 weight decays
        self.assertTrue(0 <= report["mean_accuracy"] <= 1)
        os.remove(out)

    def test_bad_input(self):
        out = self.path("bad.npy")
        self.assert_refused("predict", "--model", self.model, "--smiles", "CS", "--out", out,
                            contains="atom 2 is S, which the model does not know")
        self.assert_refused("predict", "--model", self.model, "--smiles", "C1CC", "--out", out,
                            contains="never closed")
        self.assert_refused("predict", "--model", OTKE_MODEL, "--smiles", "CC", "--out", out,
                            contains="expected a graphit model")
        self.assert_refused("predict", "--model", self.model, "--tu", MUTAG, "--out", out,
                            contains="node label '0'")  # numbered labels, the model knows atom names
        self.assert_refused("train", "--tu", MUTAG, "--kernel", "heat", "--out", self.path("x.safetensors"),
                            contains="heat")
        self.assert_refused("train", "--tu", MUTAG, "--folds", FOLDS, "--fold", "11",
                            "--out", self.path("x.safetensors"), contains="--fold must be in [1, 10]")
        self.assert_refused("train", "--tu", self.path("nowhere"), "--out", self.path("x.safetensors"))
        self.assert_refused("attention", "--model", self.model, "--out-dir", self.path("att2"),
                            contains="explains one graph")


if __name__ == "__main__":
    unittest.main()
