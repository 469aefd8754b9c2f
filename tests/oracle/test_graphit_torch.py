"""GraphiT's loss, outputs and gradients (C++, float32) against an independent PyTorch implementation (float64).

inductive_graphit_dump initialises a model, packs the graphs written here and runs one loss evaluation with its
backward pass. The oracle reads only the model file's config and tensors and re-derives everything from the
formulas (thesis ch. 3; restated at the top of inductive/graphit.h), never calling our code; autograd gives the
gradients. For packed graphs with nodes X (n x d per graph), per layer and H heads of width dh = d / H:
  Q = X Wq^T (queries = keys), V = X Wv^T;  per head: S = Q_h Q_h^T / sqrt(dh), E = exp(S - rowmax S),
  A = (E o K) / max(rowsum(E o K), 1e-6) (K = 1 without a kernel), head_h = A V_h, per graph only;
  X1 = Norm1(X + (1 + deg)^-1/2 o ([head_1 ... head_H] Wo^T + bo))   (scale 1 without degree scaling);
  X  = Norm2(X1 + W2 ReLU(W1 X1 + b1) + b2)
Norms: PyTorch's LayerNorm / BatchNorm1d with eps 1e-5; BatchNorm in training mode takes biased batch statistics
over the real (concatenated) nodes of all graphs, in evaluation mode the running statistics of the model file.
Input: E[label] + F Wf^T + Lin(LapPE) + Lin(GCKN path features). Readout: mean or sum over a graph's nodes, then
Linear-ReLU-Linear. Loss: mean cross-entropy, or L1 averaged over graphs and targets.
Kernels are random, symmetric and positive, with a zero row (the 1e-6 floor, no gradient) and a row small enough
that the floor is active with a gradient (which then also flows through the row max, to its argmax).
The bar, per tensor (outputs, loss, every parameter's gradient): max |ours - torch| <= 1e-5 x max(1, max |torch|),
and, since the gradients here are all under 1 (the attention's in-projections' near 1e-4), also
max |ours - torch| <= 1e-4 x max |torch| for every tensor that is not zero by the maths (max |torch| >= 1e-6; e.g.
the FFN's output bias just before a training-mode BatchNorm is exactly 0, and ours is float32 round-off there).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import torch  # Debian's python3-torch, installed by scripts/setup.sh; run with /usr/bin/python3
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native"))
from safetensors_np import read_safetensors  # noqa: E402

DUMP = os.environ.get("INDUCTIVE_GRAPHIT_DUMP")
TOL = 1e-5       # against max(1, max |torch|)
REL_TOL = 1e-4   # against max |torch| alone: float32 round-off measured here stays under 5e-6
ZERO = 1e-6      # max |torch| under this: a tensor that is zero by the maths, checked by TOL only
NORM_EPS = 1e-5  # PyTorch's LayerNorm / BatchNorm1d default
ROW_SUM_FLOOR = 1e-6


def errors(ours, ref):
    """(max |ours - ref| / max(1, max |ref|), max |ours - ref| / max |ref| or 0 where ref is zero by the maths)."""
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    if ours.shape != ref.shape:
        return float("inf"), float("inf")
    diff, top = float(np.abs(ours - ref).max(initial=0.0)), float(np.abs(ref).max(initial=0.0))
    return diff / max(1.0, top), diff / top if top >= ZERO else 0.0


def compare(ours, ref):
    """{name: errors} for every name of either dict (a name missing from one side scores inf)."""
    return {name: errors(ours[name], ref[name]) if name in ours and name in ref else (float("inf"), float("inf"))
            for name in sorted(set(ours) | set(ref))}


def failures(ratios):
    """The tensors over the bar (the negations also catch NaN)."""
    return {name: e for name, e in ratios.items() if not (e[0] <= TOL and e[1] <= REL_TOL)}


def random_kernel(rng, n, special=None):
    """Symmetric, positive entries. special="zero": row/column 0 is zero (rowsum 0, floored, no gradient);
    "tiny": row/column 0 is ~1e-7, so rowsum(E o K) <= n 2e-7 < 1e-6 for n <= 4: floored with a gradient."""
    m = rng.uniform(0.05, 1.0, (n, n))
    k = (m + m.T) / 2 + np.eye(n)
    if special == "zero":
        k[0, :] = k[:, 0] = 0
    elif special == "tiny":
        assert n <= 4
        t = rng.uniform(1e-7, 2e-7, n)
        k[0, :] = k[:, 0] = t
    return k.astype(np.float32)


def make_inputs(rng, config, sizes, special_kernels=()):
    """Per-graph arrays as the dump tool reads them, and the targets."""
    inp, enc, task = config["input"], config["encoder"], config["task"]
    graphs = []
    for i, n in enumerate(sizes):
        g = {}
        if inp["vocab"]:
            g["labels"] = rng.integers(0, inp["vocab"], n).astype(np.int32)
        if inp["features"]:
            g["features"] = rng.standard_normal((n, inp["features"])).astype(np.float32)
        if inp["pe"]:
            g["pe"] = rng.standard_normal((n, inp["pe"])).astype(np.float32)
        if inp["path"]:
            g["path"] = rng.uniform(0, 1, (n, inp["path"])).astype(np.float32)
        if enc["kernel"]:
            g["kernel"] = random_kernel(rng, n, special_kernels[i] if i < len(special_kernels) else None)
        if enc["degree_scaling"]:
            g["degree"] = rng.integers(0, 6, n).astype(np.float32)
        graphs.append(g)
    if task["type"] == "classification":
        targets = {"classes": rng.permutation(np.arange(len(sizes)) % task["outputs"]).astype(np.int32)}
    else:
        targets = {"values": rng.standard_normal((len(sizes), task["outputs"])).astype(np.float32)}
    return graphs, targets


def oracle(tensors, config, graphs, targets, training):
    """(outputs, loss, {parameter name: gradient}) in float64 from the formulas in the module docstring."""
    t = lambda a: torch.tensor(np.asarray(a), dtype=torch.float64)
    stats = {k: t(v) for k, v in tensors.items() if "running_" in k}
    p = {k: t(v).requires_grad_() for k, v in tensors.items() if "running_" not in k}
    inp, enc, ro, task = config["input"], config["encoder"], config["readout"], config["task"]
    d, H = enc["d"], enc["heads"]
    dh = d // H
    sizes = [len(next(iter(g.values()))) for g in graphs]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    cat = lambda key: t(np.concatenate([g[key] for g in graphs]))

    x = torch.zeros(offsets[-1], d, dtype=torch.float64)
    if inp["vocab"]:
        x = x + p["embedding.weight"][torch.tensor(np.concatenate([g["labels"] for g in graphs]), dtype=torch.long)]
    if inp["features"]:
        x = x + cat("features") @ p["features.weight"].T
    if inp["pe"]:
        x = x + cat("pe") @ p["pe.weight"].T + p["pe.bias"]
    if inp["path"]:
        x = x + cat("path") @ p["path.weight"].T + p["path.bias"]
    residual = (1 + cat("degree")) ** -0.5 if enc["degree_scaling"] else torch.ones(offsets[-1], dtype=torch.float64)

    def norm(y, pre):
        w, b = p[pre + ".weight"], p[pre + ".bias"]
        if enc["norm"] == "layer":
            return F.layer_norm(y, (d,), w, b, eps=NORM_EPS)
        if training:  # batch statistics over every node of the batch; nothing to update
            return F.batch_norm(y, None, None, w, b, training=True, eps=NORM_EPS)
        return F.batch_norm(y, stats[pre + ".running_mean"], stats[pre + ".running_var"], w, b, training=False,
                            eps=NORM_EPS)

    for l in range(enc["layers"]):
        pre = f"layers.{l}."
        q = x @ p[pre + "attn.q.weight"].T
        v = x @ p[pre + "attn.v.weight"].T
        blocks = []
        for g, (o, n) in enumerate(zip(offsets[:-1], sizes)):
            heads = []
            for h in range(H):
                qh, vh = q[o:o + n, h * dh:(h + 1) * dh], v[o:o + n, h * dh:(h + 1) * dh]
                s = qh @ qh.T / np.sqrt(dh)
                e = torch.exp(s - s.max(dim=1, keepdim=True).values)
                if enc["kernel"]:
                    e = e * t(graphs[g]["kernel"])
                a = e / e.sum(dim=1, keepdim=True).clamp(min=ROW_SUM_FLOOR)
                heads.append(a @ vh)
            blocks.append(torch.cat(heads, dim=1))
        attn = torch.cat(blocks) @ p[pre + "attn.out.weight"].T + p[pre + "attn.out.bias"]
        x1 = norm(x + residual[:, None] * attn, pre + "norm1")
        ffn = torch.relu(x1 @ p[pre + "ffn1.weight"].T + p[pre + "ffn1.bias"]) @ p[pre + "ffn2.weight"].T
        x = norm(x1 + ffn + p[pre + "ffn2.bias"], pre + "norm2")

    pool = (lambda z: z.mean(dim=0)) if ro["pooling"] == "mean" else (lambda z: z.sum(dim=0))
    pooled = torch.stack([pool(x[o:o + n]) for o, n in zip(offsets[:-1], sizes)])
    hidden = torch.relu(pooled @ p["head.hidden.weight"].T + p["head.hidden.bias"])
    out = hidden @ p["head.out.weight"].T + p["head.out.bias"]
    if task["type"] == "classification":
        loss = F.cross_entropy(out, torch.tensor(targets["classes"], dtype=torch.long))
    else:
        loss = F.l1_loss(out, t(targets["values"]))
    loss.backward()
    grads = {k: (v.grad if v.grad is not None else torch.zeros_like(v)).numpy() for k, v in p.items()}
    return out.detach().numpy(), loss.item(), grads


def config_json(vocab=0, features=0, pe=0, path=0, d=8, layers=1, heads=1, ffn=12, norm="layer", kernel=True,
                degree_scaling=None, pooling="mean", hidden=6, task="classification", outputs=3):
    # Every dimension distinct (d 8, ffn 12, hidden 6, 3 classes) so that a transposed weight cannot pass.
    return {"input": {"vocab": vocab, "features": features, "pe": pe, "path": path, "node_labels": []},
            "encoder": {"d": d, "layers": layers, "heads": heads, "ffn": ffn, "norm": norm, "dropout": 0.0,
                        "kernel": kernel, "degree_scaling": kernel if degree_scaling is None else degree_scaling},
            "readout": {"pooling": pooling, "hidden": hidden},
            "task": {"type": task, "outputs": outputs, "labels": []}}


class GraphitAgainstTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not DUMP:
            # A missing tool is a failure, not a skip: an oracle that does not run proves nothing.
            raise RuntimeError("set INDUCTIVE_GRAPHIT_DUMP to the inductive_graphit_dump executable (ctest does)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="inductive-graphit-torch-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_case(self, name, config, sizes=(2, 9, 5, 4), special_kernels=(), training=False, seed=1):
        """Writes the inputs, runs the dump tool and the oracle: (ours, torch), each {name: array}."""
        directory = os.path.join(self.tmp.name, name)
        os.makedirs(directory)
        rng = np.random.default_rng(seed)
        graphs, targets = make_inputs(rng, config, sizes, special_kernels)
        with open(os.path.join(directory, "config.json"), "w") as f:
            json.dump(config, f)
        for file, text in (("seed", str(seed)), ("training", str(int(training)))):
            with open(os.path.join(directory, file), "w") as f:
                f.write(text + "\n")
        for i, g in enumerate(graphs):
            for key, a in g.items():
                np.save(os.path.join(directory, f"g{i}.{key}.npy"), a)
        for key, a in targets.items():
            np.save(os.path.join(directory, f"{key}.npy"), a)
        done = subprocess.run([DUMP, directory], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)

        model, model_config = read_safetensors(os.path.join(directory, "model.safetensors"))
        self.assertEqual(model_config["encoder"], config["encoder"])  # the tool ran what we asked for
        grads, _ = read_safetensors(os.path.join(directory, "grads.safetensors"))
        with open(os.path.join(directory, "loss.txt")) as f:
            loss = float(f.read())
        ours = {"outputs": np.load(os.path.join(directory, "outputs.npy")), "loss": np.array(loss)}
        ours.update({"grad " + k: v for k, v in grads.items() if "running_" not in k})
        out, ref_loss, ref_grads = oracle(model, model_config, graphs, targets, training)
        ref = {"outputs": out, "loss": np.array(ref_loss)}
        ref.update({"grad " + k: v for k, v in ref_grads.items()})
        return ours, ref

    def check(self, name, config, **kwargs):
        ours, ref = self.run_case(name, config, **kwargs)
        ratios = compare(ours, ref)
        self.assertEqual(failures(ratios), {}, f"{name}: tensors over the bar ({TOL:g}, {REL_TOL:g} relative)")
        worst = max(ratios, key=lambda k: ratios[k][0])
        worst_rel = max(ratios, key=lambda k: ratios[k][1])
        print(f"\n  {name}: {len(ratios)} tensors, worst {ratios[worst][0]:.1e} ({worst}), worst relative "
              f"{ratios[worst_rel][1]:.1e} ({worst_rel}) ", file=sys.stderr, end="")
        return ours, ref

    def test_kernel_attention_with_degree_scaling_and_row_sum_floor(self):
        # Graph 1 has a zero kernel row, graph 3 one under the floor: both branches of max(rowsum, 1e-6).
        self.check("kernel", config_json(vocab=5, layers=2, heads=2), special_kernels=(None, "zero", None, "tiny"))

    def test_softmax_transformer_without_degree_scaling_sum_pooling(self):
        self.check("softmax", config_json(vocab=5, kernel=False, pooling="sum"), seed=2)

    def test_lappe_input_regression_one_target(self):
        self.check("lappe", config_json(pe=4, heads=2, task="regression", outputs=1), sizes=(3, 7, 6), seed=3)

    def test_gckn_path_inputs_regression_two_targets_sum_pooling(self):
        self.check("gckn", config_json(vocab=3, path=6, layers=2, pooling="sum", task="regression", outputs=2),
                   special_kernels=("tiny",), sizes=(4, 8, 2), seed=4)

    def test_dense_features_degree_scaling_without_kernel(self):
        self.check("features", config_json(features=3, kernel=False, degree_scaling=True, heads=2), seed=5)

    def test_batchnorm_training_statistics_all_inputs(self):
        # Batch statistics over the real nodes of all graphs couple the graphs: the whole batch is one function.
        self.check("batchnorm", config_json(vocab=5, features=3, pe=4, path=6, layers=2, heads=2, norm="batch"),
                   special_kernels=(None, "zero", None, "tiny"), training=True, seed=6)

    def test_batchnorm_evaluation_running_statistics(self):
        self.check("batchnorm-eval", config_json(vocab=5, pe=4, norm="batch", task="regression", outputs=2),
                   training=False, seed=7)

    def test_the_comparison_rejects_a_wrong_gradient_entry_and_ignored_degree_scaling(self):
        config = config_json(vocab=5, layers=2, heads=2)
        ours, ref = self.check("mutation", config, seed=8)
        bad = {k: v.copy() for k, v in ours.items()}
        name = "grad layers.0.attn.q.weight"
        bad[name][1, 2] += 3 * TOL * max(1.0, float(np.abs(ref[name]).max()))
        self.assertEqual(list(failures(compare(bad, ref))), [name])
        # A 1% error in the small attention gradients is under 1e-5 in absolute terms: the relative bar sees it.
        bad[name] = ours[name] * 1.01
        self.assertLess(errors(bad[name], ref[name])[0], TOL)
        self.assertEqual(list(failures(compare(bad, ref))), [name])
        del bad[name]
        self.assertIn(name, failures(compare(bad, ref)))  # a missing gradient is a failure too
        # The oracle with the degrees set to 0 (no scaling) must disagree: the variants see the residual scale.
        rng = np.random.default_rng(8)
        graphs, targets = make_inputs(rng, config, (2, 9, 5, 4))
        for g in graphs:
            g["degree"] = np.zeros_like(g["degree"])
        model, model_config = read_safetensors(os.path.join(self.tmp.name, "mutation", "model.safetensors"))
        out, _, _ = oracle(model, model_config, graphs, targets, False)
        self.assertGreater(errors(ours["outputs"], out)[0], 100 * TOL)


class BenchBaselineIsTheSameMaths(unittest.TestCase):
    """bench/torch_graphit.py, the speed baseline of bench/graphit_vs_torch.py (padded, batched attention, packed
    node-wise layers), computes what the oracle computes: outputs, loss and every gradient, in float64, for the
    variants the benchmark runs (kernel or not, LayerNorm or BatchNorm in both modes, CE or L1). A baseline that
    did less work would make our ratios look better than they are."""

    def check(self, config, training, seed, sizes=(2, 9, 5, 4)):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
        import torch_graphit
        rng = np.random.default_rng(seed)
        graphs, targets = make_inputs(rng, config, sizes)
        p, stats = torch_graphit.init_params(config, torch.float64, seed=seed)
        tensors = {k: v.detach().numpy().copy() for k, v in {**p, **stats}.items()}
        out_ref, loss_ref, grads_ref = oracle(tensors, config, graphs, targets, training)
        batch = torch_graphit.Batch(
            sizes, np.concatenate([g["labels"] for g in graphs]),
            np.concatenate([g.get("degree", np.zeros(n, np.float32)) for g, n in zip(graphs, sizes)]),
            [g.get("kernel", np.ones((n, n), np.float32)) for g, n in zip(graphs, sizes)],
            targets.get("classes", targets.get("values")), config["task"]["type"], dtype=torch.float64)
        out = torch_graphit.forward(p, stats, config, batch, training)
        loss = torch_graphit.loss_fn(out, config, batch)
        loss.backward()
        ours = {"outputs": out.detach().numpy(), "loss": np.array(loss.item())}
        ours.update({"grad " + k: v.grad.numpy() for k, v in p.items()})
        ref = {"outputs": out_ref, "loss": np.array(loss_ref)}
        ref.update({"grad " + k: v for k, v in grads_ref.items()})
        for name, (absolute, _) in compare(ours, ref).items():
            self.assertLess(absolute, 1e-10, name)

    def test_kernel_layernorm_cross_entropy(self):
        self.check(config_json(vocab=5, layers=2, heads=2), training=True, seed=11)

    def test_kernel_batchnorm_l1_training_and_evaluation(self):
        config = config_json(vocab=5, layers=2, heads=2, norm="batch", task="regression", outputs=1)
        self.check(config, training=True, seed=12)
        self.check(config, training=False, seed=13)

    def test_plain_transformer(self):
        self.check(config_json(vocab=5, layers=2, heads=2, kernel=False), training=True, seed=14)


if __name__ == "__main__":
    unittest.main()
