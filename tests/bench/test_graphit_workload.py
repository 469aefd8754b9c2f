"""The GraphiT benchmark and its PyTorch baseline run the same workload (bench/graphit_vs_torch.py).

`graphit_bench --export DIR` writes the graphs, kernels, targets and model config it times; bench/torch_graphit.py
reads them back into padded batches. These tests check what the export promises (the issue's configurations, the
reference's node-count range and node types for (b)), that the baseline's batches hold the very same kernels and
graphs, and the bench's manners (--help runs nothing, a bad argument is one error line and exit 2). Timing is not
tested here; the baseline's maths is checked against the oracle in tests/oracle/test_graphit_torch.py.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

BENCH = os.environ.get("INDUCTIVE_GRAPHIT_BENCH", "")
OTKE_BENCH = os.environ.get("INDUCTIVE_OTKE_BENCH", "")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import roofline_ceiling  # noqa: E402
import torch_graphit  # noqa: E402

EXPECTED = {  # config: (layers, heads, norm, task, vocab, batch, smallest, largest graph)
    "a": (3, 4, "layer", "classification", 7, 32, 18, 28),
    "b": (10, 8, "batch", "regression", 28, 128, 9, 37),
}


class GraphitBenchWorkload(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(BENCH, os.X_OK):
            raise AssertionError(f"INDUCTIVE_GRAPHIT_BENCH={BENCH!r} is not an executable (ctest sets it)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="inductive-graphit-workload-")
        done = subprocess.run([BENCH, "--export", cls.tmp.name], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_export_holds_the_issue_configurations(self):
        for key, (layers, heads, norm, task, vocab, batch, lo, hi) in EXPECTED.items():
            d = os.path.join(self.tmp.name, key)
            meta = json.load(open(os.path.join(d, "config.json")))
            model = meta["model"]
            self.assertEqual((model["encoder"]["layers"], model["encoder"]["heads"], model["encoder"]["norm"]),
                             (layers, heads, norm), key)
            self.assertEqual((model["task"]["type"], model["input"]["vocab"], meta["batch"]), (task, vocab, batch), key)
            self.assertTrue(model["encoder"]["kernel"] and model["encoder"]["degree_scaling"], key)
            sizes = np.load(os.path.join(d, "sizes.npy"))
            labels, degree = np.load(os.path.join(d, "labels.npy")), np.load(os.path.join(d, "degree.npy"))
            kernel, targets = np.load(os.path.join(d, "kernel.npy")), np.load(os.path.join(d, "targets.npy"))
            self.assertEqual(len(sizes) % batch, 0, key)
            self.assertTrue(lo <= sizes.min() and sizes.max() <= hi, (key, sizes.min(), sizes.max()))
            self.assertGreater(sizes.max() - sizes.min(), (hi - lo) // 2, key)  # the range is used, not one size
            self.assertEqual(len(labels), sizes.sum(), key)
            self.assertTrue(0 <= labels.min() and labels.max() < vocab, key)
            self.assertGreater(len(np.unique(labels)), 3, key)
            self.assertEqual(len(degree), sizes.sum(), key)
            self.assertTrue(np.all(degree == np.round(degree)) and degree.min() >= 1 and degree.max() <= 4, key)
            self.assertEqual(len(kernel), int((sizes.astype(np.int64) ** 2).sum()), key)
            first = kernel[:sizes[0] ** 2].reshape(sizes[0], sizes[0])
            np.testing.assert_allclose(first, first.T, atol=1e-6)  # a diffusion kernel is symmetric
            self.assertTrue(np.all(np.diag(first) > 0), key)
            self.assertEqual(targets.shape[0], len(sizes), key)
            if task == "classification":
                self.assertEqual(set(np.unique(targets)), {0, 1}, key)
            else:
                self.assertEqual(targets.shape, (len(sizes), 1), key)

    def test_baseline_batches_hold_the_exported_graphs(self):
        d = os.path.join(self.tmp.name, "b")
        config, batch_size, batches = torch_graphit.load_workload(d)
        sizes, kernel = np.load(os.path.join(d, "sizes.npy")), np.load(os.path.join(d, "kernel.npy"))
        self.assertEqual(sum(b.B for b in batches), len(sizes))
        self.assertTrue(all(b.B == batch_size for b in batches))
        # The last graph of the second batch, read back from the padded kernel tensor.
        g = 2 * batch_size - 1
        n, at = int(sizes[g]), int((sizes[:g].astype(np.int64) ** 2).sum())
        b = batches[1]
        np.testing.assert_array_equal(b.kernel[-1, 0, :n, :n].numpy(), kernel[at:at + n * n].reshape(n, n))
        self.assertEqual(float(b.kernel[-1, 0, n:, :].abs().sum()), 0.0)  # padding holds no kernel mass
        p, stats = torch_graphit.init_params(config)
        out = torch_graphit.forward(p, stats, config, b, training=True)
        self.assertEqual(tuple(out.shape), (batch_size, 1))
        self.assertTrue(torch.isfinite(out).all())

    def test_roofline_counts_the_exported_graphs_products_and_bounds_the_ratio(self):
        # graphit_vs_torch.py's `ceiling` divides these FLOPs at the FMA limit by PyTorch's rate: per layer and graph of
        # n nodes 6 n d^2 + 4 n d ffn + 4 n^2 d (inductive/graphit.h's products), averaged over the timed graphs.
        done = subprocess.run([BENCH, "--roofline"], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        limit, rows = roofline_ceiling.parse_roofline(done.stdout)
        self.assertGreater(limit, 0)
        self.assertEqual(len(rows), 2)
        for key in EXPECTED:
            d = os.path.join(self.tmp.name, key)
            enc = json.load(open(os.path.join(d, "config.json")))["model"]["encoder"]
            n = np.load(os.path.join(d, "sizes.npy")).astype(np.float64)
            dm, ffn = enc["d"], enc.get("ffn", 2 * enc["d"])
            mflop = (enc["layers"] * (6 * n * dm * dm + 4 * n * dm * ffn + 4 * n * n * dm)).mean() / 1e6
            (name,) = [r for r in rows if r.startswith(f"({key})")]
            self.assertAlmostEqual(rows[name][0], mflop, delta=0.006, msg=key)  # printed to 2 decimals
            self.assertEqual(rows[name][1], 3 * rows[name][0])
        # 100 GFLOP/s a thread, 4.31 MFLOP a graph, a baseline of 5000 graphs/s: 2 threads could be 9.28x faster.
        self.assertAlmostEqual(roofline_ceiling.ceiling(100.0, 4.31, 2, 5000.0), 2 * 100e3 / 4.31 / 5000, places=9)
        with self.assertRaises(ValueError):
            roofline_ceiling.parse_roofline("| (a) x | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |")  # no FMA limit printed

    def test_otke_roofline_gives_otke_vs_torch_its_rows(self):
        # otke_vs_torch.py looks its configurations up by name (k128p64 ...) in otke_bench's roofline table, which
        # prints each one's MFLOP per sequence for inference and for a training step.
        self.assertTrue(os.access(OTKE_BENCH, os.X_OK), f"INDUCTIVE_OTKE_BENCH={OTKE_BENCH!r} (ctest sets it)")
        done = subprocess.run([OTKE_BENCH, "--roofline"], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        limit, rows = roofline_ceiling.parse_roofline(done.stdout)
        self.assertGreater(limit, 0)
        self.assertEqual(sorted(rows), ["k128p10", "k128p64", "k512p10", "k512p64"])
        # Per set of n rows (otke_bench.cpp's roofline_table): inference 4 n p k + 40 n p; a training step
        # 8 n p k + 180 n p (the scaling domain, for every p since narrow problems train in it too). n cancels in
        # the ratio; the table prints one decimal, so the ratio is good to about 3 %.
        for name, (infer, train) in rows.items():
            k, p = (int(v) for v in name[1:].split("p"))
            expected = (8 * k + 180) / (4 * k + 40)
            self.assertAlmostEqual(train / infer / expected, 1.0, delta=0.03, msg=(name, infer, train))

    def test_bench_manners(self):
        done = subprocess.run([BENCH, "--help"], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 0)
        self.assertIn("--export", done.stdout)
        self.assertNotIn("graphs/s (median", done.stdout)  # --help runs nothing
        done = subprocess.run([BENCH, "--config", "c"], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr.strip().splitlines(), ["error: --config: expected a or b, got 'c'"])
        done = subprocess.run([BENCH, "--phase", "backward"], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr.strip().splitlines(),
                         ["error: --phase: expected inference or training, got 'backward'"])
        with tempfile.NamedTemporaryFile() as f:  # a file where the export wants a directory
            done = subprocess.run([BENCH, "--export", f.name], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2)
        self.assertTrue(done.stderr.startswith("error: --export"), done.stderr)


if __name__ == "__main__":
    unittest.main()
