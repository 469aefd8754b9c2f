"""`otke fit --reference-update barycenter` against POT's free-support Wasserstein barycenter.

The oracle is POT's `ot.lp.free_support_barycenter` (exact OT plans, Cuturi & Doucet 2014), started from the same
point as ours: the k-means reference that `--reference-update kmeans` learns with the same seed. Ours uses entropic
plans with a small eps (--barycenter-eps 0.002, relative to each plan's mean squared distance, ~5 here; each plan's
Sinkhorn run to an L1 marginal error of 1e-7), so the two barycenters
agree to the entropic blur. The sets have different sizes and different cluster proportions, so the barycenter
(every set weighs the same) is not the k-means centre of the pooled points (every point weighs the same): the test
also checks that the update moved the reference. Identity embedding: the reference lives in the sets' own space.
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import ot  # Debian's python3-pot, installed by scripts/setup.sh; run with /usr/bin/python3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native"))
from safetensors_np import read_safetensors  # noqa: E402

CLI = os.environ.get("INDUCTIVE_CLI")


def support_distance(a, b):
    """Largest distance from a support of a to its nearest support of b (supports are unordered)."""
    return max(np.min(np.linalg.norm(b - row, axis=1)) for row in a)


class BarycenterAgainstPot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CLI:
            raise RuntimeError("set INDUCTIVE_CLI to the inductive executable")
        cls.dir = tempfile.mkdtemp(prefix="inductive-pot-barycenter-")
        rng = np.random.default_rng(11)
        centres = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
        sets, lengths = [], []
        for b in range(16):
            n = int(rng.integers(3, 13))
            weights = rng.dirichlet(np.ones(3) * 2)
            which = rng.choice(3, size=n, p=weights)
            which[:3] = [0, 1, 2]  # every set touches every cluster
            sets.append(centres[which] + 0.2 * rng.standard_normal((n, 2)))
            lengths.append(n)
        cls.sets = sets
        x = np.zeros((16, max(lengths), 2), np.float32)
        for b, s in enumerate(sets):
            x[b, : len(s)] = s
        np.save(os.path.join(cls.dir, "x.npy"), x)
        np.save(os.path.join(cls.dir, "n.npy"), np.array(lengths, np.int32))
        np.save(os.path.join(cls.dir, "y.npy"), (np.arange(16) % 2).astype(np.int32))

    def fit(self, name, *args):
        out = os.path.join(self.dir, f"{name}.safetensors")
        done = subprocess.run([CLI, "otke", "fit", "--quiet", "--sets", "x.npy", "--lengths", "n.npy", "--labels",
                               "y.npy", "--embedding", "identity", "--p", "3", "--seed", "3", "--max-samples", "1000",
                               *args, "--out", out], cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        tensors, _ = read_safetensors(out)
        return tensors["otk.references"][0].astype(np.float64)

    def test_barycenter_equals_pot_from_the_same_start(self):
        start = self.fit("kmeans", "--reference-update", "kmeans")
        ours = self.fit("barycenter", "--reference-update", "barycenter", "--barycenter-eps", "0.002",
                        "--barycenter-iters", "40", "--barycenter-sinkhorn-iters", "20000",
                        "--barycenter-sinkhorn-tol", "1e-7")
        weights = [np.full(len(s), 1.0 / len(s)) for s in self.sets]
        pot = ot.lp.free_support_barycenter([s.astype(np.float64) for s in self.sets], weights, start.copy(),
                                            b=np.full(3, 1.0 / 3), numItermax=200, stopThr=1e-10)
        self.assertGreater(support_distance(ours, start), 0.05, "the barycenter should move the k-means reference")
        err = max(support_distance(ours, pot), support_distance(pot, ours))
        self.assertLess(err, 5e-3, f"ours {ours.tolist()} vs POT {pot.tolist()}")

    def test_bad_barycenter_options_exit_2(self):
        done = subprocess.run([CLI, "otke", "fit", "--quiet", "--sets", "x.npy", "--lengths", "n.npy", "--labels",
                               "y.npy", "--embedding", "identity", "--p", "3", "--reference-update", "barycentre",
                               "--out", "never.safetensors"], cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--reference-update must be kmeans or barycenter", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "never.safetensors")))
        done = subprocess.run([CLI, "otke", "fit", "--quiet", "--sets", "x.npy", "--lengths", "n.npy", "--labels",
                               "y.npy", "--embedding", "identity", "--p", "3", "--reference-update", "barycenter",
                               "--barycenter-eps", "0", "--out", "never.safetensors"], cwd=self.dir,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("barycenter: eps must be", done.stderr)


if __name__ == "__main__":
    unittest.main()
