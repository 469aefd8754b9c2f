"""`inductive otke eval` reports the metrics scikit-learn computes on the same scores.

How the scores reach the metrics unchanged: a hand-written model file with input "vectors" (dim C), identity
embedding, mean pooling and the head W = I, b = 0. A sample given as a set of one vector s then has logits s, so
the CLI's metrics are computed on scores we choose. Its auROC uses softmax probabilities (as documented in
inductive/metrics.h), so the oracle sees softmax(s) too.

sklearn conventions matched: roc_auc_score (binary: on the positive class' probability; multi-class:
multi_class="ovr", average="macro"), average_precision_score (per class on "label == c" and that class'
probability; macro over the classes present), top_k_accuracy_score, confusion_matrix (rows = true class).
"""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

import numpy as np

try:
    from sklearn import metrics
except ImportError:  # pragma: no cover - Debian's python3 has scikit-learn
    metrics = None

CLI = os.environ.get("INDUCTIVE_CLI")


def setUpModule():
    if metrics is None:
        raise RuntimeError("scikit-learn is not installed; run with /usr/bin/python3")
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def write_identity_model(path, classes):
    """An otke model whose logits are its (single-vector) inputs, written with struct + json only."""
    config = {"input": {"type": "vectors", "dim": classes}, "embedding": {"type": "identity"},
              "pooling": {"type": "mean"}, "head": {"classes": classes, "labels": [f"c{c}" for c in range(classes)]}}
    weight = np.eye(classes, dtype="<f4").tobytes()
    bias = np.zeros(classes, dtype="<f4").tobytes()
    header = {
        "__metadata__": {"format": "inductive", "format_version": "1", "model": "otke",
                         "config": json.dumps(config), "producer": "test_metrics_sklearn.py"},
        "head.bias": {"dtype": "F32", "shape": [classes], "data_offsets": [0, len(bias)]},
        "head.weight": {"dtype": "F32", "shape": [classes, classes],
                        "data_offsets": [len(bias), len(bias) + len(weight)]},
    }
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bias + weight)


def softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class EvalMatchesSklearn(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-metrics-")
        self.addCleanup(shutil.rmtree, self.dir)

    def evaluate(self, scores, y):
        """Runs the CLI on these scores and labels; returns its JSON."""
        scores = np.asarray(scores, np.float32)
        m, classes = scores.shape
        model = os.path.join(self.dir, "identity.safetensors")
        write_identity_model(model, classes)
        np.save(os.path.join(self.dir, "x.npy"), scores.reshape(m, 1, classes))
        np.save(os.path.join(self.dir, "n.npy"), np.ones(m, np.int32))
        np.save(os.path.join(self.dir, "y.npy"), np.asarray(y, np.int32))
        done = subprocess.run([CLI, "otke", "eval", "--quiet", "--model", model, "--sets", "x.npy", "--lengths",
                               "n.npy", "--labels", "y.npy"], capture_output=True, text=True, cwd=self.dir,
                              timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_binary_scores_with_ties(self):
        rng = np.random.default_rng(1)
        # Few distinct rows, so many samples tie exactly (identical rows give identical probabilities).
        levels = np.array([[0.0, v] for v in (-1.0, -0.25, 0.0, 0.5, 2.0)], np.float32)
        scores = levels[rng.integers(0, len(levels), 400)]
        y = (rng.random(400) < 0.3 + 0.1 * scores[:, 1]).astype(np.int32)
        out = self.evaluate(scores, y)
        probs = softmax(scores.astype(np.float64))
        self.assertAlmostEqual(out["auroc"], metrics.roc_auc_score(y, probs[:, 1]), places=9)
        self.assertAlmostEqual(out["auroc_per_class"]["c0"], out["auroc"], places=12)
        # Ties: identical rows give identical probabilities, which sklearn takes as one threshold too.
        ap = [metrics.average_precision_score(y == c, probs[:, c]) for c in (0, 1)]
        self.assertAlmostEqual(out["auprc_per_class"]["c1"], ap[1], places=9)
        self.assertAlmostEqual(out["auprc_per_class"]["c0"], ap[0], places=9)
        self.assertAlmostEqual(out["auprc"], np.mean(ap), places=9)
        self.assertAlmostEqual(out["accuracy"], metrics.accuracy_score(y, scores.argmax(axis=1)), places=12)
        self.assertEqual(out["confusion_matrix"]["matrix"],
                         metrics.confusion_matrix(y, scores.argmax(axis=1), labels=[0, 1]).tolist())
        self.assertEqual(list(out["top_k_accuracy"]), ["1"])  # k = 5, 10 need more than k classes

    def test_multiclass_ovr_macro_auroc_and_top_k(self):
        rng = np.random.default_rng(2)
        classes, m = 12, 600
        y = rng.integers(0, classes, m).astype(np.int32)
        scores = rng.normal(size=(m, classes)).astype(np.float32)
        scores[np.arange(m), y] += 1.5  # informative but imperfect
        out = self.evaluate(scores, y)
        probs = softmax(scores.astype(np.float64))
        self.assertAlmostEqual(out["auroc"], metrics.roc_auc_score(y, probs, multi_class="ovr", average="macro"),
                               places=6)
        onehot = np.eye(classes, dtype=int)[y]
        self.assertAlmostEqual(out["auprc"], metrics.average_precision_score(onehot, probs, average="macro"),
                               places=6)
        for c in (0, 5, 11):
            self.assertAlmostEqual(out["auprc_per_class"][f"c{c}"],
                                   metrics.average_precision_score(y == c, probs[:, c]), places=6)
        for k in (1, 5, 10):
            expected = metrics.top_k_accuracy_score(y, scores, k=k, labels=np.arange(classes))
            self.assertAlmostEqual(out["top_k_accuracy"][str(k)], expected, places=12, msg=f"top-{k}")
        self.assertEqual(out["confusion_matrix"]["matrix"],
                         metrics.confusion_matrix(y, scores.argmax(axis=1), labels=np.arange(classes)).tolist())

    def test_class_absent_from_the_data_has_no_auroc(self):
        rng = np.random.default_rng(3)
        y = rng.integers(0, 2, 50).astype(np.int32)  # class 2 never occurs
        scores = rng.normal(size=(50, 3)).astype(np.float32)
        out = self.evaluate(scores, y)
        self.assertIsNone(out["auroc_per_class"]["c2"])
        self.assertIsNone(out["auprc_per_class"]["c2"])  # no positive: sklearn would warn and return 0
        probs = softmax(scores.astype(np.float64))
        expected = np.mean([metrics.roc_auc_score(y == c, probs[:, c]) for c in (0, 1)])
        self.assertAlmostEqual(out["auroc"], expected, places=6)
        expected = np.mean([metrics.average_precision_score(y == c, probs[:, c]) for c in (0, 1)])
        self.assertAlmostEqual(out["auprc"], expected, places=6)


if __name__ == "__main__":
    unittest.main()
