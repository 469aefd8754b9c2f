"""`inductive otke embed` (float32) against an independent PyTorch implementation (float64) of the same maths.

The oracle re-derives the embedding from the thesis' formulas (ch. 2; restated in inductive/otke.h, nystrom.h and
otk_pooling.h), reading only the model file's tensors and config, never our code:
  xhat = x / max(||x||, 1e-2);  psi = kappa(xhat W^T) F  (kappa(u) = exp((u - 1) / sigma^2); times ||x|| with
  keep_norm; psi = x for the identity embedding)
  S^r = psi z_r^T;  log-domain Sinkhorn on K = S^r / eps with a = 1/n, b = 1/p: per iteration
  G = log b - LSE_i(F + K), F = log a - LSE_j(G + K); P = exp(F + G + K)
  P <- P o exp(-(i/n - j/p)^2 / sigma_pos^2) (when sigma_pos > 0);  Phi^r = c P^T psi,  c = sqrt(p/q) or p
Ablations: plan "attention" is P = softmax_i(K) / p column by column (no Sinkhorn); "sinusoidal" adds
PE(i) / sqrt(k/2) to psi before pooling, PE_2m(i) = sin(i / 10000^(2m/k)), PE_2m+1(i) = cos(...).
Every variant: Nystrom and identity embeddings, keep_norm, q = 1 and 3, positional weighting, both scales, both
ablations; sets of different lengths in one file. The bar: max |ours - torch| <= 1e-5 x max |torch|.
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import torch  # Debian's python3-torch, installed by scripts/setup.sh; run with /usr/bin/python3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native"))
from safetensors_np import read_safetensors  # noqa: E402

CLI = os.environ.get("INDUCTIVE_CLI")
TOL = 1e-5


def read_model(path):
    tensors, config = read_safetensors(path)
    return {name: t.astype(np.float64) for name, t in tensors.items()}, config


def oracle_embedding(tensors, config, x, lengths):
    t = lambda a: torch.tensor(a, dtype=torch.float64)
    emb, pool = config["embedding"], config["pooling"]
    q, p, eps, iters = pool["q"], pool["p"], pool["eps"], pool["iters"]
    sigma_pos = pool.get("sigma_pos", 0.0)
    c = float(np.sqrt(p / q)) if pool.get("scale", "paper") == "paper" else float(p)
    out = []
    for b, n in enumerate(lengths):
        xb = t(x[b, :n])
        if emb["type"] == "nystrom":
            norm = xb.norm(dim=1, keepdim=True)
            xhat = xb / norm.clamp(min=1e-2)
            kx = torch.exp((xhat @ t(tensors["nystrom.anchors"]).T - 1.0) / emb["sigma"] ** 2)
            psi = kx @ t(tensors["nystrom.factor"])
            if emb.get("keep_norm", False):
                psi = psi * norm
        else:
            psi = xb
        if pool.get("sinusoidal", False):
            k = psi.shape[1]
            i = torch.arange(n, dtype=torch.float64)[:, None]
            freq = 10000.0 ** (-2.0 * torch.arange((k + 1) // 2, dtype=torch.float64) / k)
            pe = torch.zeros(n, k, dtype=torch.float64)
            pe[:, 0::2] = torch.sin(i * freq)
            pe[:, 1::2] = torch.cos(i * freq)[:, : k // 2]
            psi = psi + pe / np.sqrt(max(k, 2) / 2)
        phis = []
        for r in range(q):
            z = t(tensors["otk.references"][r])
            K = psi @ z.T / eps
            la = torch.full((n,), -np.log(n), dtype=torch.float64)
            lb = torch.full((p,), -np.log(p), dtype=torch.float64)
            F = torch.zeros(n, dtype=torch.float64)
            G = torch.zeros(p, dtype=torch.float64)
            for _ in range(iters):
                G = lb - torch.logsumexp(F[:, None] + K, dim=0)
                F = la - torch.logsumexp(G[None, :] + K, dim=1)
            P = torch.exp(F[:, None] + G[None, :] + K)
            if pool.get("plan", "sinkhorn") == "attention":
                P = torch.softmax(K, dim=0) / p
            if sigma_pos > 0:
                i = torch.arange(n, dtype=torch.float64)[:, None] / n
                j = torch.arange(p, dtype=torch.float64)[None, :] / p
                P = P * torch.exp(-((i - j) ** 2) / sigma_pos ** 2)
            phis.append((c * P.T @ psi).reshape(-1))
        out.append(torch.cat(phis))
    return torch.stack(out).numpy()


class OtkeEmbeddingAgainstTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CLI:
            raise RuntimeError("set INDUCTIVE_CLI to the inductive executable")
        cls.dir = tempfile.mkdtemp(prefix="inductive-torch-")
        rng = np.random.default_rng(5)
        cls.lengths = rng.integers(1, 40, size=12).astype(np.int32)
        cls.lengths[0] = 40
        cls.x = rng.standard_normal((12, 40, 6)).astype(np.float32)
        cls.x[3, :5] *= 1e-3  # rows under the 1e-2 norm floor
        for b, n in enumerate(cls.lengths):
            cls.x[b, n:] = 0
        cls.y = (np.arange(12) % 2).astype(np.int32)
        for name, a in (("x.npy", cls.x), ("n.npy", cls.lengths), ("y.npy", cls.y)):
            np.save(os.path.join(cls.dir, name), a)

    def run_cli(self, *args):
        done = subprocess.run([CLI, *args], cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done

    def check(self, name, *fit_args):
        data = ["--sets", "x.npy", "--lengths", "n.npy"]
        self.run_cli("otke", "fit", "--quiet", *data, "--labels", "y.npy", *fit_args, "--seed", "3", "--out",
                     f"{name}.safetensors")
        self.run_cli("otke", "embed", "--quiet", "--model", f"{name}.safetensors", *data, "--out", f"{name}.npy")
        ours = np.load(os.path.join(self.dir, f"{name}.npy"))
        tensors, config = read_model(os.path.join(self.dir, f"{name}.safetensors"))
        ref = oracle_embedding(tensors, config, self.x, self.lengths)
        self.assertEqual(ours.shape, ref.shape)
        err = np.abs(ours - ref).max() / np.abs(ref).max()
        self.assertLessEqual(err, TOL, f"{name}: relative error {err:.2e}")
        return err

    def test_nystrom_one_reference(self):
        self.check("nystrom", "--anchors", "5", "--p", "4", "--iters", "20")

    def test_nystrom_keep_norm_three_references_positional_weighting(self):
        self.check("positional", "--anchors", "7", "--p", "5", "--q", "3", "--sigma-pos", "0.3", "--keep-norm")

    def test_identity_embedding(self):
        self.check("identity", "--embedding", "identity", "--p", "6", "--eps", "1.0")

    def test_attention_plan_with_positional_weighting(self):
        self.check("attention", "--anchors", "5", "--p", "4", "--q", "2", "--plan", "attention", "--sigma-pos", "0.3")

    def test_sinusoidal_encoding(self):
        self.check("sinusoidal", "--anchors", "6", "--p", "4", "--sinusoidal")

    def test_sinusoidal_encoding_odd_dimension_attention(self):
        self.check("sinusoidal_odd", "--anchors", "5", "--p", "3", "--sinusoidal", "--plan", "attention")

    def test_otk_compatible_scale_and_small_eps(self):
        self.check("otkscale", "--anchors", "4", "--p", "3", "--eps", "0.1", "--scale", "otk-compatible")


if __name__ == "__main__":
    unittest.main()
