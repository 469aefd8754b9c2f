"""The DeepSEA-style OTKE model from the command line: conv front end -> OT pooling -> MLP head with dropout,
multilabel outputs (a sigmoid per label, binary cross-entropy), per-label auROC and auPRC in `otke eval`.

Data: the vendored promoter subsets (data/SOURCE.md), each sequence labelled with the set of {promoter, b_subtilis}
that applies: 100 B. subtilis promoters ("promoter,b_subtilis"), 100 B. subtilis non-promoters ("b_subtilis"),
150 E. coli promoters ("promoter") and 150 E. coli non-promoters ("-", no label).
Oracle: the model file's tensors applied in NumPy to `otke embed`'s embeddings, and scikit-learn's metrics.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from safetensors_np import read_safetensors

CLI = os.environ.get("INDUCTIVE_CLI")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PROMOTERS = os.path.join(REPO, "data", "promoters")
SETS = [("promoter,b_subtilis", "bsubtilis_prom_100.fa"), ("b_subtilis", "bsubtilis_non_prom_100.fa"),
        ("promoter", "ecoli_prom_150.fa"), ("-", "ecoli_non_prom_150.fa")]
CLASSES = [arg for name, f in SETS for arg in ("--class", f"{name}={os.path.join(PROMOTERS, f)}")]
FASTAS = [arg for _, f in SETS for arg in ("--fasta", os.path.join(PROMOTERS, f))]
# Small and fast: 16 conv filters on 8-mers, 8 supports, a hidden layer of 16 with dropout 0.2.
DEEPSEA = ["--multilabel", "--embedding", "conv", "--kmer", "8", "--p", "8", "--sigma-pos", "0.1", "--iters", "30",
           "--hidden", "16", "--dropout", "0.2", "--seed", "3"]


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def run_cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


class DeepseaModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inductive-otke-ml-")
        cls.init = os.path.join(cls.dir, "init.safetensors")
        cls.model = os.path.join(cls.dir, "trained.safetensors")
        fit = run_cli("otke", "fit", *CLASSES, *DEEPSEA, "--anchors", "16", "--quiet", "--out", cls.init)
        assert fit.returncode == 0, fit.stderr
        cls.fit = json.loads(fit.stdout)
        train = run_cli("otke", "train", "--init", cls.init, *CLASSES, "--epochs", "12", "--batch-size", "32",
                        "--lr", "0.01", "--seed", "1", "--quiet", "--out", cls.model)
        assert train.returncode == 0, train.stderr
        cls.train = json.loads(train.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_fit_makes_a_multilabel_mlp_head_for_otke_train(self):
        self.assertEqual(self.fit["labels"], ["b_subtilis", "promoter"])
        self.assertEqual(self.fit["label_counts"], {"b_subtilis": 200, "promoter": 250})
        self.assertEqual(self.fit["head"]["type"], "mlp")
        self.assertFalse(self.fit["head"]["fitted"])
        tensors, config = read_safetensors(self.init)
        self.assertEqual(config["head"]["hidden"], 16)
        self.assertAlmostEqual(config["head"]["dropout"], 0.2, places=6)
        self.assertTrue(config["head"]["multilabel"])
        self.assertEqual(tensors["head.hidden.weight"].shape, (16, self.fit["embedding_dim"]))
        self.assertEqual(tensors["head.weight"].shape, (2, 16))

    def test_training_lowers_the_binary_cross_entropy(self):
        history = self.train["history"]
        self.assertLess(min(e["val_loss"] for e in history), 0.9 * history[0]["val_loss"])
        self.assertLess(history[-1]["train_loss"], history[0]["train_loss"])

    def test_eval_reports_per_label_metrics_that_match_numpy_and_sklearn(self):
        done = run_cli("otke", "eval", "--model", self.model, *CLASSES, "--quiet")
        self.assertEqual(done.returncode, 0, done.stderr)
        ev = json.loads(done.stdout)
        emb = self.path("emb.npy")
        e = run_cli("otke", "embed", "--model", self.model, *FASTAS, "--quiet", "--out", emb)
        self.assertEqual(e.returncode, 0, e.stderr)
        # The MLP head from the file's tensors, evaluated here: ReLU(E W_h^T + b_h) W^T + b, then a sigmoid.
        t, _ = read_safetensors(self.model)
        hidden = np.maximum(np.load(emb) @ t["head.hidden.weight"].T + t["head.hidden.bias"], 0)
        logits = hidden @ t["head.weight"].T + t["head.bias"]
        probs = 1 / (1 + np.exp(-logits.astype(np.float64)))
        counts = [100, 100, 150, 150]
        targets = np.array([[1, 1]] * 100 + [[1, 0]] * 100 + [[0, 1]] * 150 + [[0, 0]] * 150)  # b_subtilis, promoter
        self.assertEqual(sum(counts), len(probs))
        self.assertEqual(ev["labels"], ["b_subtilis", "promoter"])
        for c, name in enumerate(ev["labels"]):
            self.assertAlmostEqual(ev["auroc_per_label"][name], roc_auc_score(targets[:, c], probs[:, c]), places=4)
            self.assertAlmostEqual(ev["auprc_per_label"][name],
                                   average_precision_score(targets[:, c], probs[:, c]), places=4)
        self.assertAlmostEqual(ev["auroc"], np.mean(list(ev["auroc_per_label"].values())), places=12)
        self.assertAlmostEqual(ev["auprc"], np.mean(list(ev["auprc_per_label"].values())), places=12)
        self.assertAlmostEqual(ev["label_accuracy"], np.mean((logits > 0) == targets), places=6)
        self.assertAlmostEqual(ev["exact_match"], np.mean(((logits > 0) == targets).all(axis=1)), places=6)
        bce = np.mean(np.logaddexp(0, logits) - targets * logits)
        self.assertAlmostEqual(ev["bce"], bce, places=4)
        # Learnt, not chance: both labels are well separated on the training data.
        self.assertGreater(ev["auroc_per_label"]["promoter"], 0.8)
        self.assertGreater(ev["auroc_per_label"]["b_subtilis"], 0.8)

    def assert_refused(self, args, pattern, out=None):
        done = run_cli(*args)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(done.stdout, "")
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith("error:"), lines[0])
        self.assertRegex(lines[0], pattern)
        if out:
            self.assertFalse(os.path.exists(out))

    def test_bad_label_sets_and_options_get_one_error_line_and_no_output(self):
        out = self.path("never.safetensors")
        pos = os.path.join(PROMOTERS, "ecoli_prom_150.fa")
        self.assert_refused(["otke", "eval", "--model", self.model, "--class", f"promoter,enhancer={pos}"],
                            r"label 'enhancer' \(in 'promoter,enhancer'\) is not one of the model's labels: "
                            r"b_subtilis, promoter")
        self.assert_refused(["otke", "fit", *CLASSES, "--multilabel", "--class", f"promoter,,x={pos}", "--out", out],
                            r"empty label name", out)
        self.assert_refused(["otke", "fit", *CLASSES, "--dropout", "0.3", "--out", out], r"head.hidden > 0", out)
        self.assert_refused(["otke", "train", "--init", self.init, *CLASSES, "--head-refit-every", "2", "--out", out],
                            r"head refits .* train it end to end", out)


if __name__ == "__main__":
    unittest.main()
