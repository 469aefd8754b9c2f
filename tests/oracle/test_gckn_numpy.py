"""GraphiT's GCKN path features (thesis ch. 3; Chen, Jacob & Mairal 2020) against a numpy oracle on MUTAG.

`inductive graphit train --gckn K --cache FILE` writes a graph cache (inductive/graph_cache.h): a safetensors file
of model kind "graph-cache" with every graph's standardised GCKN features concatenated ("gckn.features",
[sum n, K * n_filters]), the node counts ("nodes", I32) and the fitted model ("gckn.anchors.<l>" [n_filters, l d],
"gckn.factor.<l>" [n_filters, n_filters], "gckn.mean", "gckn.std"). This oracle shares none of the C++ code: it
parses the TU files itself, enumerates the simple paths with its own DFS and evaluates the formula of
inductive/gckn_paths.h from the cache's anchors, in float64:

    phi_l(u) = kappa(Z_l Z_l^T / l)^{-1/2} sum_{simple directed paths P = (u = p_1, ..., p_l)} kappa_P,
    (kappa_P)_a = kappa((1/l) sum_j cos(x_{p_j}, z_{a,j})),   kappa(s) = exp((s - 1) / sigma^2),

with x the one-hot node labels, z_{a,j} the l blocks of d columns of anchor a, and the inverse square root
V diag(1 / (sqrt(max(lambda, 0)) + reg)) V^T (inductive/nystrom.h), once with the factor stored in the cache and once
recomputed here with numpy.linalg.eigh. Then the standardisation: per column, over every node of the graphs GCKN was
fitted on (the run's train + validation graphs: cmd_graphit.cpp passes concat(train, val)), population std, a
(near-)constant column keeping std 1.

A second run on a tiny hand-made TU dataset with a single node label and one filter turns the features into path
counts (every kappa_P is kappa(1) = 1 and the factor is the scalar 1 / (1 + reg)), so the C++ enumeration itself is
checked against closed forms (complete graph, cycle, path, star) and a brute force over ordered node tuples.
"""
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "native"))
from safetensors_np import read_safetensors  # noqa: E402

CLI = os.environ.get("INDUCTIVE_CLI")
DATA = os.environ.get("INDUCTIVE_TEST_DATA")  # tests/data
ROOT = os.path.normpath(os.path.join(DATA, "..", "..") if DATA else os.path.join(HERE, "..", ".."))
MUTAG = os.path.join(ROOT, "data", "tu-MUTAG")
FOLDS = os.path.join(ROOT, "data", "graphit-folds", "MUTAG")

K = 3          # path size (nodes): --gckn 3
FILTERS = 4    # --gckn-filters 4
SIGMA = float(np.float32(0.6))  # the float32 default the core uses (GcknOptions::sigma)
REG = float(np.float32(1e-2))   # GcknOptions::reg
# The core's standardisation: a column whose std is <= 1e-6 max(1, |mean|) keeps std 1 (gckn_paths.cpp).
STD_FLOOR = 1e-6

# Tolerances. The core runs in float32 (path vectors, dot products, kappa, the sums over paths and the product with
# the factor), this oracle in float64 from the same stored float32 anchors and factors.
# - Features: 1e-5 of each column's scale (its largest |value| over all nodes); measured max 2.5e-7 with the
#   stored factor, 3.8e-7 with the eigh one (a few float32 ulp).
# - The factor recomputed with eigh: 1e-5 of its largest entry. The core forms kappa(Z Z^T) in float32 before its
#   double eigendecomposition, an error of ~1 ulp per entry that the inverse square root amplifies by about
#   1 / (2 sqrt(lambda_min) (sqrt(lambda_min) + reg)^2); with these anchors lambda_min is 0.5..0.94, so ~1 ulp
#   survives (measured 2e-8..3e-7). Anchors much closer together (tiny lambda_min) would need a looser bound.
# - Standardised features: absolute 1e-5 (they are O(1); the raw error over std, plus the mean's float32 rounding
#   over std: measured ~1e-6).
FEATURE_RTOL = 1e-5
FACTOR_RTOL = 1e-5
STANDARDISED_ATOL = 1e-5


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the inductive CLI)")
    if not os.path.isfile(CLI) or not os.access(CLI, os.X_OK):
        raise RuntimeError(f"INDUCTIVE_CLI={CLI} is not an executable")


# ---- the oracle ---------------------------------------------------------------------------------------------------

def load_tu(directory, name):
    """[(labels, adjacency sets)] per graph, node labels mapped to 0..L-1 in sorted value order, and L."""
    indicator = np.loadtxt(os.path.join(directory, f"{name}_graph_indicator.txt"), dtype=np.int64, ndmin=1)
    edges = np.loadtxt(os.path.join(directory, f"{name}_A.txt"), delimiter=",", dtype=np.int64, ndmin=2)
    raw_labels = np.loadtxt(os.path.join(directory, f"{name}_node_labels.txt"), dtype=np.int64, ndmin=1)
    values = sorted(set(raw_labels.tolist()))
    mapped = np.array([values.index(v) for v in raw_labels], dtype=np.int64)
    assert len(raw_labels) == len(indicator) and np.all(np.diff(indicator) >= 0) and indicator[0] == 1
    graphs = []
    for gid in range(1, indicator.max() + 1):
        nodes = np.nonzero(indicator == gid)[0]
        first, n = nodes[0], len(nodes)
        adj = [set() for _ in range(n)]
        for u, v in edges[indicator[edges[:, 0] - 1] == gid] - 1 - first:
            assert 0 <= u < n and 0 <= v < n, "cross-graph edge"
            if u != v:  # A lists both directions; a set keeps one neighbour entry each way
                adj[u].add(int(v))
                adj[v].add(int(u))
        graphs.append((mapped[first:first + n], [sorted(a) for a in adj]))
    return graphs, len(values)


def simple_paths(adj, k):
    """paths[l - 1]: int array [m, l] of every simple directed path of l nodes, path[:, 0] the start node."""
    out = [[] for _ in range(k)]

    def extend(path, on_path):
        out[len(path) - 1].append(tuple(path))
        if len(path) == k:
            return
        for v in adj[path[-1]]:
            if v not in on_path:
                on_path.add(v)
                path.append(v)
                extend(path, on_path)
                path.pop()
                on_path.discard(v)

    for s in range(len(adj)):
        extend([s], {s})
    return [np.array(p, dtype=np.int64).reshape(-1, l + 1) for l, p in enumerate(out)]


def path_counts(adj, k):
    """counts[u, l - 1] = number of simple paths of l nodes from u (from the oracle's DFS)."""
    counts = np.zeros((len(adj), k), dtype=np.int64)
    for l, p in enumerate(simple_paths(adj, k)):
        np.add.at(counts[:, l], p[:, 0], 1)
    return counts


def unit_anchor_rows(anchors, l, d):
    """[n_filters, l, d]: anchor a's l blocks z_{a,j}, each normalised (cosines do not depend on their scale)."""
    z = anchors.astype(np.float64).reshape(anchors.shape[0], l, d)
    return z / np.linalg.norm(z, axis=2, keepdims=True)


def kappa(s, sigma):
    return np.exp((s - 1.0) / sigma ** 2)


def anchor_gram(z, sigma):
    """kappa(Z Z^T / l): kappa of the mean over positions of cos(z_{a,j}, z_{b,j})."""
    return kappa(np.einsum("ajc,bjc->ab", z, z) / z.shape[1], sigma)


def inverse_sqrt(gram, reg):
    w, v = np.linalg.eigh(gram)
    return (v / (np.sqrt(np.maximum(w, 0.0)) + reg)) @ v.T, w


def path_kernel_sums(labels, adj, zs, sigma, k):
    """[n, k * n_filters]: per node and length, sum over the paths from it of kappa_P (before the factor)."""
    n, f = len(labels), zs[0].shape[0]
    out = np.zeros((n, k * f))
    for l, paths in enumerate(simple_paths(adj, k), start=1):
        if len(paths) == 0:
            continue
        labs = labels[paths]                                              # [m, l]
        # cos(one-hot x_p, z_{a,j}) = z_{a,j}[label of p]; the mean over the l positions.
        cos = zs[l - 1][:, np.arange(l)[None, :], labs]                   # [f, m, l]
        mean_cos = cos.sum(axis=2).T / l                                  # [m, f]
        np.add.at(out[:, (l - 1) * f:l * f], paths[:, 0], kappa(mean_cos, sigma))
    return out


def standardisation(raw, floor=STD_FLOOR, ddof=0):
    mean = raw.mean(axis=0)
    sd = raw.std(axis=0, ddof=ddof)
    return mean, np.where(sd > floor * np.maximum(1.0, np.abs(mean)), sd, 1.0)


def read_indices(path):
    with open(path) as f:
        return [int(t) for t in f.read().split()]


def run_cli(*args):
    proc = subprocess.run([CLI, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def read_cache(path):
    tensors, config = read_safetensors(path)
    nodes = tensors["nodes"].view(np.int32)  # the shared reader maps every tensor as float32: reinterpret the I32
    return tensors, config, nodes


def split_rows(features, nodes):
    offsets = np.concatenate([[0], np.cumsum(nodes)])
    return [features[offsets[i]:offsets[i + 1]] for i in range(len(nodes))]


# ---- MUTAG --------------------------------------------------------------------------------------------------------

class GcknMutagOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="inductive_gckn_oracle_")
        cache, model = os.path.join(cls.tmp, "cache.safetensors"), os.path.join(cls.tmp, "m.safetensors")
        t0 = time.time()
        run_cli("graphit", "train", "--tu", MUTAG, "--folds", FOLDS, "--fold", "1", "--gckn", str(K),
                "--gckn-filters", str(FILTERS), "--kernel", "none", "--layers", "1", "--heads", "1", "--dim", "8",
                "--epochs", "1", "--cache", cache, "--out", model, "--quiet")
        cls.cli_seconds = time.time() - t0
        cls.tensors, cls.config, cls.nodes = read_cache(cache)
        cls.model_tensors, _ = read_safetensors(model)
        cls.graphs, cls.n_labels = load_tu(MUTAG, "MUTAG")
        d = cls.n_labels
        cls.zs = [unit_anchor_rows(cls.tensors[f"gckn.anchors.{l}"], l, d) for l in range(1, K + 1)]
        cls.stored_factors = [cls.tensors[f"gckn.factor.{l}"].astype(np.float64) for l in range(1, K + 1)]
        cls.oracle_factors, cls.eigenvalues = zip(*(inverse_sqrt(anchor_gram(z, SIGMA), REG) for z in cls.zs))
        sums = [path_kernel_sums(labels, adj, cls.zs, SIGMA, K) for labels, adj in cls.graphs]

        def apply(factors):
            return [np.hstack([s[:, l * FILTERS:(l + 1) * FILTERS] @ factors[l] for l in range(K)]) for s in sums]

        cls.raw_stored = apply(cls.stored_factors)    # (a): the cache's factor
        cls.raw_oracle = apply(cls.oracle_factors)    # (b): recomputed with eigh
        cls.ours = split_rows(cls.tensors["gckn.features"].astype(np.float64), cls.nodes)
        mean = cls.tensors["gckn.mean"].astype(np.float64)
        std = cls.tensors["gckn.std"].astype(np.float64)
        cls.ours_raw = [f * std + mean for f in cls.ours]
        fold = os.path.join(FOLDS, "inner_folds")
        cls.train = read_indices(os.path.join(fold, "train_idx-1-1.txt"))
        cls.val = read_indices(os.path.join(fold, "val_idx-1-1.txt"))
        all_raw = np.vstack(cls.raw_oracle)
        cls.scale = np.maximum(np.abs(all_raw).max(axis=0), 1e-30)  # per column
        cls.errors = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if os.environ.get("INDUCTIVE_ORACLE_VERBOSE"):
            print(f"\ncli {cls.cli_seconds:.2f} s; max errors: " +
                  ", ".join(f"{k} {v:.3g}" for k, v in sorted(cls.errors.items())), file=sys.stderr)

    def record(self, name, value):
        type(self).errors[name] = max(type(self).errors.get(name, 0.0), float(value))

    def test_dataset_and_cache_shapes(self):
        self.assertEqual(len(self.graphs), 188)
        self.assertEqual(self.n_labels, 7)
        self.assertEqual(self.config["gckn"], {"feature_dim": 7, "use_attributes": False})
        self.assertEqual(self.config["graphs"], 188)
        self.assertEqual(self.nodes.tolist(), [len(labels) for labels, _ in self.graphs])
        self.assertEqual(self.tensors["gckn.features"].shape, (3371, K * FILTERS))
        for l in range(1, K + 1):
            self.assertEqual(self.tensors[f"gckn.anchors.{l}"].shape, (FILTERS, l * self.n_labels))
            self.assertEqual(self.tensors[f"gckn.factor.{l}"].shape, (FILTERS, FILTERS))
        self.assertEqual(sorted(self.train + self.val + read_indices(os.path.join(FOLDS, "test_idx-1.txt"))),
                         list(range(188)))
        self.assertEqual(len(self.train) + len(self.val), int(self.config["key"].split("gckn_train=")[1].split(":")[0]))

    def test_model_file_holds_the_cache_model(self):
        for name in [f"gckn.{w}.{l}" for l in range(1, K + 1) for w in ("anchors", "factor")] + ["gckn.mean",
                                                                                                  "gckn.std"]:
            np.testing.assert_array_equal(self.model_tensors[name], self.tensors[name], err_msg=name)

    def test_anchor_storage_convention(self):
        # Stored anchors are the concatenation of l unit rows over sqrt(l) (so that a path's mean of cosines is a dot
        # product of unit vectors): every block has norm 1/sqrt(l).
        for l in range(1, K + 1):
            a = self.tensors[f"gckn.anchors.{l}"].astype(np.float64).reshape(FILTERS, l, self.n_labels)
            np.testing.assert_allclose(np.linalg.norm(a, axis=2), 1.0 / np.sqrt(l), rtol=1e-6, err_msg=f"l={l}")

    def test_factor_matches_eigh(self):
        for l in range(K):
            stored, oracle, w = self.stored_factors[l], self.oracle_factors[l], self.eigenvalues[l]
            np.testing.assert_allclose(stored, stored.T, atol=1e-6 * np.abs(stored).max())
            err = np.abs(stored - oracle).max() / np.abs(oracle).max()
            self.record(f"factor{l + 1}", err)
            self.assertLessEqual(err, FACTOR_RTOL, f"length {l + 1}: eigenvalues {w}")

    def assert_features(self, name, oracle, ours, scale, atol):
        for g, (o, c) in enumerate(zip(oracle, ours)):
            self.assertEqual(o.shape, c.shape, f"graph {g}")
            err = (np.abs(o - c) / scale).max()
            self.record(name, err)
            self.assertLessEqual(err, atol, f"{name}: graph {g}, max error {err:.3g} of the column scale")

    def test_raw_features_with_stored_factor(self):
        self.assert_features("raw(a)", self.raw_stored, self.ours_raw, self.scale, FEATURE_RTOL)

    def test_raw_features_with_eigh_factor(self):
        self.assert_features("raw(b)", self.raw_oracle, self.ours_raw, self.scale, FEATURE_RTOL)

    def test_standardisation_over_train_and_val(self):
        fitted = np.vstack([self.raw_stored[i] for i in self.train + self.val])
        mean, std = standardisation(fitted)
        ours_mean = self.tensors["gckn.mean"].astype(np.float64)
        ours_std = self.tensors["gckn.std"].astype(np.float64)
        self.record("mean", (np.abs(mean - ours_mean) / std).max())
        self.record("std", (np.abs(std - ours_std) / std).max())
        np.testing.assert_allclose(ours_mean, mean, rtol=0, atol=1e-5 * std.max())
        np.testing.assert_allclose(ours_std, std, rtol=1e-5)
        standardised = [(r - mean) / std for r in self.raw_stored]
        self.assert_features("standardised", standardised, self.ours, 1.0, STANDARDISED_ATOL)
        # The comparison tells the alternatives apart: sample std, training graphs only, every graph.
        _, sample_std = standardisation(fitted, ddof=1)
        self.assertGreater(np.abs(sample_std - ours_std).max() / std.max(), 10 * 1e-5)
        for other in (self.train, list(range(188))):
            m, s = standardisation(np.vstack([self.raw_stored[i] for i in other]))
            self.assertGreater(max(np.abs(m - ours_mean).max(), np.abs(s - ours_std).max()) / std.max(), 10 * 1e-5)


# ---- path counts on hand-made graphs ------------------------------------------------------------------------------

def brute_force_counts(adj, k):
    n = len(adj)
    counts = np.zeros((n, k), dtype=np.int64)
    for l in range(1, k + 1):
        for t in itertools.permutations(range(n), l):
            if all(t[j + 1] in adj[t[j]] for j in range(l - 1)):
                counts[t[0], l - 1] += 1
    return counts


def tiny_graphs():
    """(edges, closed-form counts or None) for a few small graphs."""
    def complete(n):
        return [(u, v) for u in range(n) for v in range(u + 1, n)]
    k = 4
    out = []
    # K_n: (n-1)! / (n-l)! paths of l nodes from every node.
    n = 5
    out.append((n, complete(n), np.tile([np.prod(range(n - l + 1, n)) for l in range(1, k + 1)], (n, 1))))
    # C_n (n > k): 2 paths of every length >= 2.
    n = 7
    out.append((n, [(i, (i + 1) % n) for i in range(n)], np.tile([1] + [2] * (k - 1), (n, 1))))
    # P_n: one path each way that fits.
    n = 6
    out.append((n, [(i, i + 1) for i in range(n - 1)],
                np.array([[1] + [int(i >= l - 1) + int(i + l - 1 <= n - 1) for l in range(2, k + 1)]
                          for i in range(n)])))
    # Star with 4 leaves (centre 0): centre 1, 4, 0, 0; leaves 1, 1, 3, 0.
    out.append((5, [(0, i) for i in range(1, 5)], np.array([[1, 4, 0, 0]] + [[1, 1, 3, 0]] * 4)))
    # A triangle with a tail and a chord (brute force only).
    out.append((6, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (1, 4)], None))
    return out, k


class PathCounts(unittest.TestCase):
    def test_oracle_dfs_matches_closed_forms_and_brute_force(self):
        graphs, k = tiny_graphs()
        for n, edges, closed in graphs:
            adj = [set() for _ in range(n)]
            for u, v in edges:
                adj[u].add(v)
                adj[v].add(u)
            adj = [sorted(a) for a in adj]
            counts = path_counts(adj, k)
            np.testing.assert_array_equal(counts, brute_force_counts(adj, k), err_msg=str(edges))
            if closed is not None:
                np.testing.assert_array_equal(counts, closed, err_msg=str(edges))

    def test_core_counts_paths_as_the_formula_says(self):
        # One node label and one filter: every path vector equals the anchor, kappa_P = 1, and the factor is
        # 1 / (sqrt(kappa(1)) + reg): the features are path counts over (1 + reg).
        graphs, k = tiny_graphs()
        tmp = tempfile.mkdtemp(prefix="inductive_gckn_counts_")
        try:
            d = os.path.join(tmp, "tu-TINY")
            os.makedirs(d)
            a_lines, indicator, offset = [], [], 0
            for gid, (n, edges, _) in enumerate(graphs * 2, start=1):  # twice: enough graphs for a split
                for u, v in edges:
                    a_lines += [f"{u + 1 + offset}, {v + 1 + offset}", f"{v + 1 + offset}, {u + 1 + offset}"]
                indicator += [str(gid)] * n
                offset += n
            with open(os.path.join(d, "TINY_A.txt"), "w") as f:
                f.write("\n".join(a_lines) + "\n")
            with open(os.path.join(d, "TINY_graph_indicator.txt"), "w") as f:
                f.write("\n".join(indicator) + "\n")
            with open(os.path.join(d, "TINY_node_labels.txt"), "w") as f:
                f.write("\n".join(["3"] * len(indicator)) + "\n")
            with open(os.path.join(d, "TINY_graph_labels.txt"), "w") as f:
                f.write("\n".join(["1" if i % 2 else "-1" for i in range(2 * len(graphs))]) + "\n")
            cache = os.path.join(tmp, "cache.safetensors")
            run_cli("graphit", "train", "--tu", d, "--val-fraction", "0.3", "--gckn", str(k), "--gckn-filters", "1",
                    "--kernel", "none", "--layers", "1", "--heads", "1", "--dim", "8", "--epochs", "1",
                    "--cache", cache, "--out", os.path.join(tmp, "m.safetensors"), "--quiet")
            tensors, _, nodes = read_cache(cache)
            for l in range(1, k + 1):
                self.assertAlmostEqual(float(tensors[f"gckn.factor.{l}"][0, 0]), 1.0 / (1.0 + REG), places=6)
            raw = tensors["gckn.features"].astype(np.float64) * tensors["gckn.std"] + tensors["gckn.mean"]
            counts = raw * (1.0 + REG)
            for g, c in enumerate(split_rows(counts, nodes)):
                n, edges, _ = graphs[g % len(graphs)]
                adj = [set() for _ in range(n)]
                for u, v in edges:
                    adj[u].add(v)
                    adj[v].add(u)
                np.testing.assert_allclose(c, brute_force_counts(adj, k), rtol=0, atol=1e-4, err_msg=f"graph {g}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
