"""`inductive graphit train | cv | predict | attention` as a user drives them, on the vendored MUTAG and its
GraphiT folds (classification) and on a slice of the vendored ZINC molecules (regression): outputs exist and are
consistent, checkpoints resume, bad input is refused with one `error:` line and no output file."""
import csv
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
ZINC_VAL = os.path.join(ROOT, "data", "zinc-partial", "zinc12k_val_reconstructed.csv")
ZINC_TARGET = "penalized_logP_normalized"


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def run_cli(*args, cwd=None):
    return subprocess.run([CLI, "graphit", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


class RefusalAssertions:
    """A refused command exits 2 with one `error:` line and writes nothing into the test's directory."""

    def assert_refused(self, *args, out="bad.npy", contains=None):
        before = sorted(os.listdir(self.dir))
        r = run_cli(*args)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("error:"), r.stderr)
        if contains:
            self.assertIn(contains, lines[0])
        self.assertEqual(sorted(os.listdir(self.dir)), before)  # nothing written, no temp leftovers


class GraphitCli(RefusalAssertions, unittest.TestCase):
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

    run_cli = staticmethod(run_cli)

    def path(self, name):
        return os.path.join(self.dir, name)

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
                         "--grid-layers", "1,2", "--grid-dim", "16", "--last", "2", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        # Progress on stderr: each fold's preparation, each grid point's validation score and each fold's test
        # score, with an ETA for the whole protocol.
        lines = r.stderr.splitlines()
        self.assertEqual(sum("graphit: prepared" in l for l in lines), 2, r.stderr)
        self.assertEqual(sum(" val " in l and "ETA" in l for l in lines), 8, r.stderr)
        self.assertTrue(any(l.startswith("graphit cv: fold 3: test accuracy") and "ETA 0 s" in l for l in lines),
                        r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual([f["fold"] for f in report["folds"]], [1, 3])
        self.assertEqual(len(report["folds"][0]["selection"]), 4)  # 2 layers x 2 weight decays
        self.assertTrue(0 <= report["mean_accuracy"] <= 1)
        self.assertEqual(report["backend"], "cpu")
        os.remove(out)

    def test_backend_is_chosen_and_a_missing_one_is_refused(self):
        with open(os.path.join(self.dir, "r.json")) as f:
            self.assertEqual(json.load(f)["backend"], "cpu")
        # No silent fallback: without a GPU (or a CUDA build) `--backend cuda` is refused before any work, by train,
        # cv and predict: exit 2, one line, nothing written. (With a GPU they train on it: tests/cuda.)
        if shutil.which("nvidia-smi") is None:
            self.assert_refused("train", "--tu", MUTAG, "--epochs", "1", "--backend", "cuda",
                                "--out", os.path.join(self.dir, "cuda.safetensors"), contains="cuda")
            self.assert_refused("cv", "--tu", MUTAG, "--folds", FOLDS, "--epochs", "1", "--backend", "cuda",
                                "--out", os.path.join(self.dir, "cuda.json"), contains="cuda")
            self.assert_refused("predict", "--model", self.model, "--smiles", "CCO", "--backend", "cuda",
                                "--out", os.path.join(self.dir, "cuda.npy"), contains="cuda")
            self.assert_refused("attention", "--model", self.model, "--smiles", "CCO", "--backend", "cuda",
                                "--out-dir", os.path.join(self.dir, "cuda-attention"), contains="cuda")
            self.assertFalse(os.path.exists(os.path.join(self.dir, "cuda-attention")), "attention made its folder")
        self.assert_refused("train", "--tu", MUTAG, "--epochs", "1", "--backend", "tpu",
                            "--out", os.path.join(self.dir, "tpu.safetensors"), contains="unknown backend 'tpu'")

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


class GraphitRegressionCli(RefusalAssertions, unittest.TestCase):
    """Regression on molecules: the first rows of the vendored (reconstructed) ZINC val set, typed with charges."""

    N_ROWS = 120

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inductive-cli-graphit-reg-")
        with open(ZINC_VAL, newline="") as f:
            rows = list(csv.DictReader(f))[: cls.N_ROWS]
        cls.smiles = [r["smiles"] for r in rows]
        cls.targets = np.array([float(r[ZINC_TARGET]) for r in rows])
        cls.csv = os.path.join(cls.dir, "zinc.csv")
        with open(cls.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        cls.model = os.path.join(cls.dir, "m.safetensors")
        cls.report_path = os.path.join(cls.dir, "r.json")
        r = run_cli("train", "--task", "regression", "--smiles-csv", cls.csv, "--target-column", ZINC_TARGET,
                    "--atom-types", "element-charge", "--epochs", "30", "--layers", "1", "--dim", "16", "--heads", "2",
                    "--lr", "0.003", "--seed", "3", "--out", cls.model, "--report", cls.report_path)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        cls.train_stderr = r.stderr
        with open(cls.report_path) as f:
            cls.report = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_train_reports_mae_and_records_the_atom_typing(self):
        self.assertIn("epoch 30/30", self.train_stderr)
        self.assertIn("train MAE", self.train_stderr)
        self.assertIn("val MAE", self.train_stderr)
        self.assertEqual(self.report["task"], "regression")
        self.assertEqual(self.report["graphs"], {"train": 108, "val": 12, "test": 0})
        self.assertEqual(self.report["config"]["task"]["type"], "regression")
        self.assertEqual(self.report["config"]["task"]["outputs"], 1)
        self.assertEqual(self.report["config"]["graph"]["atom_typing"], "element-charge")
        self.assertIn("N+", self.report["config"]["input"]["node_labels"])
        history = self.report["history"]
        self.assertEqual(len(history), 30)
        self.assertLess(history[-1]["train_mae"], history[0]["train_mae"])
        # A seeded random split (no classes to stratify by): the same seed gives the same validation graphs.
        self.assertEqual(len(self.report["val_indices"]), 12)

    def test_model_beats_the_mean_on_its_training_set(self):
        out, rep = self.path("train.npy"), self.path("train.json")
        r = run_cli("predict", "--model", self.model, "--smiles-csv", self.csv, "--target-column", ZINC_TARGET,
                    "--out", out, "--report", rep)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("MAE", r.stderr)
        p = np.load(out)
        self.assertEqual(p.shape, (self.N_ROWS, 1))
        train = np.setdiff1d(np.arange(self.N_ROWS), self.report["val_indices"])
        y = self.targets[train]
        mean_baseline = np.abs(y - y.mean()).mean()
        model_mae = np.abs(p[train, 0] - y).mean()
        self.assertLess(model_mae, mean_baseline)
        with open(rep) as f:
            report = json.load(f)
        self.assertAlmostEqual(report["mae"], np.abs(p[:, 0] - self.targets).mean(), places=4)
        self.assertAlmostEqual(report["graphs"][0]["target"], self.targets[0], places=5)

    def test_smiles_command_shows_the_node_types_of_each_typing(self):
        src, out = self.path("m.csv"), self.path("m.jsonl")
        with open(src, "w") as f:
            f.write("smiles\nC[NH3+]\nO=[N+]([O-])c1ccccc1\n")
        got = {}
        for typing in ("element", "element-charge"):
            r = subprocess.run([CLI, "smiles", "--csv", src, "--atom-types", typing, "--out", out],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                got[typing] = [json.loads(line)["types"] for line in f]
        self.assertEqual(got["element"], [["C", "N"], ["O", "N", "O"] + ["C"] * 6])
        self.assertEqual(got["element-charge"], [["C", "N+"], ["O", "N+", "O-"] + ["C"] * 6])
        r = subprocess.run([CLI, "smiles", "--csv", src, "--atom-types", "charge", "--out", self.path("x.jsonl")],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(self.path("x.jsonl")))

    def test_predict_smiles_types_atoms_as_training_did(self):
        out, rep = self.path("s.npy"), self.path("s.json")
        r = run_cli("predict", "--model", self.model, "--smiles-csv", self.csv, "--target-column", ZINC_TARGET,
                    "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        from_csv = np.load(out)
        charged = [i for i, s in enumerate(self.smiles) if "+]" in s or "-]" in s][:3]
        self.assertEqual(len(charged), 3)
        args = [a for i in charged for a in ("--smiles", self.smiles[i])]
        r = run_cli("predict", "--model", self.model, *args, "--out", out, "--report", rep)
        self.assertEqual(r.returncode, 0, r.stderr)
        # (Batches of other sizes sum in another order: equal up to float rounding.)
        np.testing.assert_allclose(np.load(out)[:, 0], from_csv[charged, 0], atol=1e-5)
        with open(rep) as f:
            self.assertIsInstance(json.load(f)["graphs"][0]["prediction"], float)
        # The charged nitrogen is its own type: a model typed by charge does not know an "N-" it never saw.
        if "N-" not in self.report["config"]["input"]["node_labels"]:
            self.assert_refused("predict", "--model", self.model, "--smiles", "C[N-]C", "--out", self.path("x.npy"),
                                contains="atom 2 is N-, which the model does not know")

    def test_test_csv_and_keep_best(self):
        # Train on the first 80 rows, test every epoch on the other 40 (a second file), keep the best-val model.
        train_csv, test_csv = self.path("head.csv"), self.path("tail.csv")
        with open(self.csv) as f:
            lines = f.read().splitlines()
        with open(train_csv, "w") as f:
            f.write("\n".join(lines[:81]) + "\n")
        with open(test_csv, "w") as f:
            f.write("\n".join(lines[:1] + lines[81:]) + "\n")
        model, rep = self.path("best.safetensors"), self.path("best.json")
        r = run_cli("train", "--task", "regression", "--smiles-csv", train_csv, "--test-csv", test_csv,
                    "--target-column", ZINC_TARGET, "--atom-types", "element-charge", "--epochs", "12",
                    "--layers", "1", "--dim", "16", "--heads", "2", "--lr", "0.003", "--keep-best", "--quiet",
                    "--out", model, "--report", rep)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(rep) as f:
            report = json.load(f)
        self.assertEqual(report["graphs"], {"train": 72, "val": 8, "test": 40})
        self.assertEqual(report["saved_epoch"], report["best_epoch"])
        best = report["history"][report["best_epoch"] - 1]
        self.assertEqual(best["val_mae"], min(e["val_mae"] for e in report["history"]))
        # The saved model is the best epoch's: its test MAE is the one the history recorded then.
        out = self.path("t.npy")
        r = run_cli("predict", "--model", model, "--smiles-csv", test_csv, "--target-column", ZINC_TARGET,
                    "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        p = np.load(out)[:, 0]
        self.assertAlmostEqual(np.abs(p - self.targets[80:]).mean(), best["test_mae"], places=4)
        self.assertAlmostEqual(report["test_mae_at_best"], best["test_mae"], places=6)
        for name in ("head.csv", "tail.csv", "best.safetensors", "best.json", "t.npy"):
            os.remove(self.path(name))

    def test_cv_selects_the_lowest_validation_mae(self):
        # Ten folds of the 120 molecules in GraphiT's layout (test_idx-K, inner_folds/{train,val}_idx-K-1).
        folds = self.path("folds")
        os.makedirs(os.path.join(folds, "inner_folds"))
        idx = np.arange(self.N_ROWS)
        for k in range(1, 11):
            test = idx[(idx % 10) == k - 1]
            rest = np.setdiff1d(idx, test)
            for name, part in (("test_idx-%d.txt" % k, test), ("inner_folds/val_idx-%d-1.txt" % k, rest[::9]),
                               ("inner_folds/train_idx-%d-1.txt" % k, np.setdiff1d(rest, rest[::9]))):
                np.savetxt(os.path.join(folds, name), part, fmt="%d")
        out = self.path("cv.json")
        r = run_cli("cv", "--task", "regression", "--smiles-csv", self.csv, "--target-column", ZINC_TARGET,
                    "--atom-types", "element-charge", "--folds", folds, "--folds-to-run", "2", "--epochs", "3",
                    "--grid-layers", "1", "--grid-dim", "8,16", "--grid-heads", "2", "--grid-weight-decay", "0",
                    "--last", "2", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("test MAE", r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["task"], "regression")
        fold = report["folds"][0]
        best = min(fold["selection"], key=lambda s: s["val_mae_last"])
        self.assertEqual(fold["selected"]["dim"], best["dim"])
        self.assertGreater(report["mean_mae"], 0)
        shutil.rmtree(folds)
        os.remove(out)

    def test_attention_on_a_regression_model(self):
        d = self.path("att")
        r = run_cli("attention", "--model", self.model, "--smiles", self.smiles[0], "--out-dir", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "summary.json")) as f:
            self.assertEqual(len(json.load(f)["prediction"]), 1)
        shutil.rmtree(d)

    def test_bad_input(self):
        model = self.path("x.safetensors")
        common = ["train", "--task", "regression", "--smiles-csv", self.csv, "--epochs", "1", "--out", model]
        bad = self.path("bad.csv")
        with open(self.csv) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        col = header.index(ZINC_TARGET)
        cells = lines[2].split(",")
        cells[col] = "n/a"
        lines[2] = ",".join(cells)
        with open(bad, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.assert_refused("train", "--task", "regression", "--smiles-csv", bad, "--target-column", ZINC_TARGET,
                            "--out", model, contains=f"bad.csv: line 3: target '{ZINC_TARGET}' must be a finite "
                                                     "number: got 'n/a'")
        os.remove(bad)
        self.assert_refused(*common, "--target-column", "logp", contains="no column 'logp' in the header")
        self.assert_refused(*common, contains="--task regression needs --target-column")
        self.assert_refused(*common, "--target-column", ZINC_TARGET, "--label-column", "logP",
                            contains="--label-column names integer classes")
        self.assert_refused(*common, "--target-column", ZINC_TARGET, "--class-names", "a,b",
                            contains="--class-names names classes")
        self.assert_refused("train", "--smiles-csv", self.csv, "--target-column", ZINC_TARGET, "--out", model,
                            contains="--target-column is for --task regression")
        self.assert_refused("train", "--task", "regression", "--tu", MUTAG, "--target-column", "x", "--out", model,
                            contains="not a TU dataset")
        self.assert_refused("train", "--task", "ranking", "--smiles-csv", self.csv, "--out", model,
                            contains="--task must be classification or regression: got 'ranking'")
        self.assert_refused(*common, "--target-column", ZINC_TARGET, "--atom-types", "charge",
                            contains="--atom-types: atom typing must be element or element-charge: got 'charge'")
        self.assert_refused("train", "--tu", MUTAG, "--atom-types", "element-charge", "--out", model,
                            contains="--atom-types types the atoms of molecules")
        out = self.path("x.npy")
        self.assert_refused("predict", "--model", self.model, "--smiles", "CCO", "--atom-types", "element",
                            "--out", out, contains="the model types atoms as element-charge")
        self.assert_refused("predict", "--model", self.model, "--smiles", "CCO", "--task", "classification",
                            "--out", out, contains="the model was trained for regression")
        self.assert_refused("predict", "--model", self.model, "--smiles-csv", self.csv, "--out", out,
                            contains="--task regression needs --target-column")


if __name__ == "__main__":
    unittest.main()
