"""`inductive graph-kernel` against scipy on the vendored MUTAG graphs.

The oracle builds each graph from the TU text files itself (numpy only), forms the normalised Laplacian the way
PyTorch Geometric's get_laplacian(normalization="sym") does (self-loops removed, L = I - D^-1/2 A D^-1/2, isolated
nodes L_ii = 1), and compares:
- the diffusion kernel with scipy.linalg.expm(-beta L) (Pade scaling and squaring, no eigendecomposition);
- the p-step kernel with numpy.linalg.matrix_power(I - gamma L, p), and the adjacency kernel with D^-1/2 A D^-1/2;
- LapPE with numpy.linalg.eigh: the same eigenvalue equation, orthonormal columns, the sign convention, and the
  spanned subspace (eigenvectors of repeated eigenvalues are only defined up to rotation).
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

try:
    import scipy.linalg
except ImportError:  # pragma: no cover - Debian's python3 has scipy
    scipy = None

CLI = os.environ.get("INDUCTIVE_CLI")
DATA = os.environ.get("INDUCTIVE_TEST_DATA")
GRAPHS = [0, 1, 17, 42, 99, 150, 187]


def setUpModule():
    if scipy is None:
        raise RuntimeError("scipy is not installed; run with /usr/bin/python3")
    if not CLI or not DATA:
        raise RuntimeError("INDUCTIVE_CLI / INDUCTIVE_TEST_DATA are not set (ctest sets them)")


def mutag_dir():
    return os.path.normpath(os.path.join(DATA, "..", "..", "data", "tu-MUTAG"))


def load_mutag_graphs():
    d = mutag_dir()
    indicator = np.loadtxt(os.path.join(d, "MUTAG_graph_indicator.txt"), dtype=np.int64)
    edges = np.loadtxt(os.path.join(d, "MUTAG_A.txt"), delimiter=",", dtype=np.int64)
    graphs = []
    for gid in range(1, indicator.max() + 1):
        nodes = np.nonzero(indicator == gid)[0]
        first, n = nodes[0], len(nodes)
        a = np.zeros((n, n))
        mask = indicator[edges[:, 0] - 1] == gid
        for u, v in edges[mask] - 1 - first:
            if u != v:
                a[u, v] = a[v, u] = 1.0
        graphs.append(a)
    return graphs


def normalised_laplacian(a):
    deg = a.sum(axis=1)
    inv = np.where(deg > 0, 1.0 / np.sqrt(np.maximum(deg, 1e-300)), 0.0)
    return np.eye(len(a)) - inv[:, None] * a * inv[None, :]


class GraphKernelOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.graphs = load_mutag_graphs()
        cls.tmp = tempfile.mkdtemp(prefix="inductive_graph_oracle_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_cli(self, graph, *extra):
        out = os.path.join(self.tmp, f"k{graph}.npy")
        cmd = [CLI, "graph-kernel", "--tu", mutag_dir(), "--name", "MUTAG", "--graph", str(graph), "--out", out,
               *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        summary = json.loads(proc.stdout)
        self.assertEqual(summary["graph"], graph)
        return np.load(out)

    def test_dataset_shape(self):
        self.assertEqual(len(self.graphs), 188)
        self.assertEqual(sum(len(a) for a in self.graphs), 3371)

    def test_diffusion_matches_expm(self):
        for beta in (0.5, 1.0, 2.0):
            for g in GRAPHS:
                k = self.run_cli(g, "--kernel", "diffusion", "--beta", str(beta))
                ref = scipy.linalg.expm(-beta * normalised_laplacian(self.graphs[g]))
                self.assertEqual(k.dtype, np.float32)
                np.testing.assert_allclose(k, ref, atol=2e-6, rtol=0, err_msg=f"graph {g} beta {beta}")

    def test_diffusion_zero_diagonal(self):
        k = self.run_cli(42, "--kernel", "diffusion", "--zero-diagonal")
        ref = scipy.linalg.expm(-normalised_laplacian(self.graphs[42]))
        np.fill_diagonal(ref, 0.0)
        np.testing.assert_allclose(k, ref, atol=2e-6, rtol=0)

    def test_pstep_and_adjacency_match_numpy(self):
        for g in GRAPHS[:4]:
            lap = normalised_laplacian(self.graphs[g])
            eye = np.eye(len(lap))
            for gamma, p in ((0.5, 2), (0.5, 3), (1.0, 1)):
                k = self.run_cli(g, "--kernel", "pstep", "--gamma", str(gamma), "--p", str(p))
                ref = np.linalg.matrix_power(eye - gamma * lap, p)
                np.testing.assert_allclose(k, ref, atol=2e-6, rtol=0, err_msg=f"graph {g} gamma {gamma} p {p}")
            a = self.graphs[g]
            deg = a.sum(axis=1)
            ref = a / np.sqrt(np.outer(deg, deg))
            np.testing.assert_allclose(self.run_cli(g, "--kernel", "adjacency"), ref, atol=1e-7, rtol=0)

    def test_lap_pe_matches_eigh(self):
        m = 3
        for g in GRAPHS:
            pe_path = os.path.join(self.tmp, f"pe{g}.npy")
            self.run_cli(g, "--pe-dim", str(m), "--out-pe", pe_path)
            pe = np.load(pe_path).astype(np.float64)
            lap = normalised_laplacian(self.graphs[g])
            w, v = np.linalg.eigh(lap)
            self.assertEqual(pe.shape, (len(lap), m))
            np.testing.assert_allclose(pe.T @ pe, np.eye(m), atol=1e-5)
            for j in range(m):
                np.testing.assert_allclose(lap @ pe[:, j], w[j + 1] * pe[:, j], atol=1e-5)
                i = np.argmax(np.abs(pe[:, j]))
                self.assertGreater(pe[i, j], 0.0)
            # Same subspace as eigh's eigenvectors 1..m when eigenvalue m+1 is not tied with eigenvalue m.
            if w[m + 1] - w[m] > 1e-6:
                ref = v[:, 1:m + 1]
                np.testing.assert_allclose(pe @ pe.T, ref @ ref.T, atol=1e-5)

    def test_bad_arguments_exit_2(self):
        out = os.path.join(self.tmp, "never.npy")
        for extra, fragment in ((["--graph", "188"], "--graph 188 is out of range: expected 0..187"),
                                (["--kernel", "heat"], "unknown kernel 'heat'"),
                                (["--kernel", "pstep", "--p", "0"], "p must be in [1, 1000]")):
            proc = subprocess.run([CLI, "graph-kernel", "--tu", mutag_dir(), "--name", "MUTAG", "--out", out,
                                   *extra], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertTrue(proc.stderr.startswith("error: "), proc.stderr)
            self.assertIn(fragment, proc.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
