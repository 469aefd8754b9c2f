#!/usr/bin/env python3
"""bench/torch_graphit.py - GraphiT in PyTorch, written as a fair PyTorch user would for speed: the baseline of
bench/graphit_vs_torch.py.

The maths is ours (thesis ch. 3, restated at the top of inductive/graphit.h and in tests/oracle/test_graphit_torch.py,
whose test `BenchBaselineIsTheSameMaths` checks this module against that oracle): node embeddings, per layer
Q = X Wq^T (queries = keys), V = X Wv^T, per head A = (exp(S - rowmax S) o K) / max(rowsum, 1e-6) with
S = Q_h Q_h^T / sqrt(dh), a residual scaled by (1 + deg)^-1/2, LayerNorm or BatchNorm (over the real nodes of the
batch), a ReLU feed-forward block, mean pooling, a Linear-ReLU-Linear head; cross-entropy or L1.

Layout: node-wise layers (Linear, norms, feed-forward) run on the packed nodes [N, d], as ours do; attention runs
batched on graphs padded to the batch's largest graph, [B, H, n_max, n_max], with padded keys masked (the GraphiT
reference pads the same way). Padding is the one difference in the work done, and the driver reports it.

  /usr/bin/python3 bench/torch_graphit.py --workload DIR/b --threads 1 [--json FILE] [--budget 3] [--device cuda]
DIR comes from `graphit_bench --export DIR`. With --device cuda (bench/gpu/check.sh, next to bench/gpu/gpu_bench's
graphit rows) the parameters and every batch live on the GPU and each timed call ends with a synchronisation.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

NORM_EPS = 1e-5
ROW_SUM_FLOOR = 1e-6


def init_params(config, dtype=torch.float32, seed=0):
    """Random parameters with the model file's names and shapes (PyTorch's default Linear init), and the
    BatchNorm running statistics (not trained)."""
    g = torch.Generator().manual_seed(seed)
    enc, ro, task = config["encoder"], config["readout"], config["task"]
    d, ffn, hidden, vocab = enc["d"], enc["ffn"], ro["hidden"], config["input"]["vocab"]
    p, stats = {}, {}

    def linear(name, out, inp, bias=True):
        bound = 1 / math.sqrt(inp)
        p[name + ".weight"] = (torch.rand(out, inp, generator=g, dtype=dtype) * 2 - 1) * bound
        if bias:
            p[name + ".bias"] = (torch.rand(out, generator=g, dtype=dtype) * 2 - 1) * bound

    p["embedding.weight"] = torch.randn(vocab, d, generator=g, dtype=dtype)
    for l in range(enc["layers"]):
        pre = f"layers.{l}."
        linear(pre + "attn.q", d, d, bias=False)
        linear(pre + "attn.v", d, d, bias=False)
        linear(pre + "attn.out", d, d)
        for norm in ("norm1", "norm2"):
            p[pre + norm + ".weight"] = torch.ones(d, dtype=dtype)
            p[pre + norm + ".bias"] = torch.zeros(d, dtype=dtype)
            if enc["norm"] == "batch":
                stats[pre + norm + ".running_mean"] = torch.zeros(d, dtype=dtype)
                stats[pre + norm + ".running_var"] = torch.ones(d, dtype=dtype)
        linear(pre + "ffn1", ffn, d)
        linear(pre + "ffn2", d, ffn)
    linear("head.hidden", hidden, d)
    linear("head.out", task["outputs"], hidden)
    for t in p.values():
        t.requires_grad_()
    return p, stats


class Batch:
    """A batch packed once, before timing (ours packs its batches before timing too)."""

    def __init__(self, sizes, labels, degree, kernels, targets, task, dtype=torch.float32):
        sizes = [int(n) for n in sizes]
        self.B, self.n_max, self.N = len(sizes), max(sizes), sum(sizes)
        self.labels = torch.as_tensor(np.asarray(labels), dtype=torch.long)
        graph = np.repeat(np.arange(self.B), sizes)
        pos = np.concatenate([np.arange(n) for n in sizes])
        self.graph, self.pos = torch.as_tensor(graph), torch.as_tensor(pos)
        self.counts = torch.as_tensor(sizes, dtype=dtype)[:, None]
        self.residual = ((1 + torch.as_tensor(np.asarray(degree), dtype=dtype)) ** -0.5)[:, None]
        self.kernel = torch.zeros(self.B, 1, self.n_max, self.n_max, dtype=dtype)
        for b, (n, k) in enumerate(zip(sizes, kernels)):
            self.kernel[b, 0, :n, :n] = torch.as_tensor(np.asarray(k).reshape(n, n), dtype=dtype)
        key = torch.zeros(self.B, self.n_max, dtype=torch.bool)
        key[self.graph, self.pos] = True
        self.key_mask = key[:, None, None, :]
        if task == "classification":
            self.targets = torch.as_tensor(np.asarray(targets), dtype=torch.long)
        else:
            self.targets = torch.as_tensor(np.asarray(targets), dtype=dtype).reshape(self.B, -1)

    def to(self, device):
        for name in ("labels", "graph", "pos", "counts", "residual", "kernel", "key_mask", "targets"):
            setattr(self, name, getattr(self, name).to(device))
        return self

    def pad(self, x):
        out = x.new_zeros(self.B, self.n_max, x.shape[1])
        out[self.graph, self.pos] = x
        return out

    def unpad(self, x):
        return x[self.graph, self.pos]


def forward(p, stats, config, batch, training):
    """The model's outputs [B, outputs] (see the module docstring)."""
    enc = config["encoder"]
    d, H = enc["d"], enc["heads"]
    dh = d // H
    B, n = batch.B, batch.n_max

    def norm(y, pre):
        w, b = p[pre + ".weight"], p[pre + ".bias"]
        if enc["norm"] == "layer":
            return F.layer_norm(y, (d,), w, b, eps=NORM_EPS)
        return F.batch_norm(y, stats[pre + ".running_mean"], stats[pre + ".running_var"], w, b, training=training,
                            momentum=0.1, eps=NORM_EPS)

    x = p["embedding.weight"][batch.labels]
    residual = batch.residual if enc["degree_scaling"] else 1.0
    for l in range(enc["layers"]):
        pre = f"layers.{l}."
        q = batch.pad(F.linear(x, p[pre + "attn.q.weight"])).view(B, n, H, dh).transpose(1, 2)
        v = batch.pad(F.linear(x, p[pre + "attn.v.weight"])).view(B, n, H, dh).transpose(1, 2)
        s = (q @ q.transpose(-1, -2)) * (1 / math.sqrt(dh))
        s = s.masked_fill(~batch.key_mask, float("-inf"))
        e = torch.exp(s - s.amax(dim=-1, keepdim=True))
        if enc["kernel"]:
            e = e * batch.kernel
        a = e / e.sum(dim=-1, keepdim=True).clamp(min=ROW_SUM_FLOOR)
        heads = batch.unpad((a @ v).transpose(1, 2).reshape(B, n, d))
        attn = F.linear(heads, p[pre + "attn.out.weight"], p[pre + "attn.out.bias"])
        x1 = norm(x + residual * attn, pre + "norm1")
        ffn = F.linear(F.relu(F.linear(x1, p[pre + "ffn1.weight"], p[pre + "ffn1.bias"])), p[pre + "ffn2.weight"],
                       p[pre + "ffn2.bias"])
        x = norm(x1 + ffn, pre + "norm2")
    pooled = x.new_zeros(B, d).index_add_(0, batch.graph, x)
    if config["readout"]["pooling"] == "mean":
        pooled = pooled / batch.counts
    hidden = F.relu(F.linear(pooled, p["head.hidden.weight"], p["head.hidden.bias"]))
    return F.linear(hidden, p["head.out.weight"], p["head.out.bias"])


def loss_fn(outputs, config, batch):
    if config["task"]["type"] == "classification":
        return F.cross_entropy(outputs, batch.targets)
    return F.l1_loss(outputs, batch.targets)


def load_workload(directory):
    """(model config, batch size, [Batch]) from `graphit_bench --export`."""
    meta = json.load(open(os.path.join(directory, "config.json")))
    config, bs = meta["model"], meta["batch"]
    arr = {k: np.load(os.path.join(directory, k + ".npy")) for k in ("sizes", "labels", "degree", "kernel", "targets")}
    node_off = np.concatenate([[0], np.cumsum(arr["sizes"])])
    kern_off = np.concatenate([[0], np.cumsum(arr["sizes"].astype(np.int64) ** 2)])
    batches = []
    for start in range(0, len(arr["sizes"]), bs):
        idx = range(start, min(start + bs, len(arr["sizes"])))
        lo, hi = node_off[idx[0]], node_off[idx[-1] + 1]
        batches.append(Batch(arr["sizes"][idx[0]:idx[-1] + 1], arr["labels"][lo:hi], arr["degree"][lo:hi],
                             [arr["kernel"][kern_off[i]:kern_off[i + 1]] for i in idx],
                             arr["targets"][idx[0]:idx[-1] + 1], config["task"]["type"]))
    return config, bs, batches


def median_seconds(budget, body, sync=lambda: None):
    t, start = [], time.perf_counter()
    while len(t) < 3 or (time.perf_counter() - start < budget and len(t) < 200):
        t0 = time.perf_counter()
        body()
        sync()
        t.append(time.perf_counter() - t0)
    return sorted(t)[len(t) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", required=True, help="a directory written by graphit_bench --export (DIR/a or DIR/b)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kernel", choices=["on", "off"], default="on", help="off: the plain transformer")
    ap.add_argument("--budget", type=float, default=3.0, help="seconds per measurement (at least 3 repeats)")
    ap.add_argument("--json", help="append the result as one JSON line to this file")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = ap.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda: this PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    if a.threads < 1:
        ap.error("--threads must be >= 1")
    if not os.path.isfile(os.path.join(a.workload, "config.json")):
        ap.error(f"--workload {a.workload}: no config.json (write it with graphit_bench --export DIR)")
    torch.set_num_threads(a.threads)
    config, bs, batches = load_workload(a.workload)
    batches = [b.to(a.device) for b in batches]
    if a.kernel == "off":
        config["encoder"]["kernel"] = config["encoder"]["degree_scaling"] = False
    p, stats = init_params(config)
    p = {k: v.detach().to(a.device).requires_grad_() for k, v in p.items()}
    stats = {k: v.to(a.device) for k, v in stats.items()}
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    opt = torch.optim.Adam(list(p.values()), lr=1e-3)
    step = [0]

    def nxt():
        step[0] += 1
        return batches[step[0] % len(batches)]

    def infer():
        with torch.no_grad():
            forward(p, stats, config, nxt(), training=False)

    def train():
        opt.zero_grad(set_to_none=True)
        b = nxt()
        loss_fn(forward(p, stats, config, b, training=True), config, b).backward()
        opt.step()

    for _ in range(2):  # warm-up: allocator, OpenMP pool
        infer()
        train()
    sync()
    t_inf, t_train = median_seconds(a.budget * 2 / 3, infer, sync), median_seconds(a.budget, train, sync)
    padded = sum(b.B * b.n_max ** 2 for b in batches) / sum(float((b.counts ** 2).sum()) for b in batches)
    result = {"workload": os.path.basename(os.path.normpath(a.workload)), "threads": a.threads, "device": a.device,
              "kernel": a.kernel == "on", "infer_graphs_per_s": bs / t_inf, "train_graphs_per_s": bs / t_train,
              "attention_padding": padded, "torch": torch.__version__}
    print(json.dumps(result))
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    sys.exit(main())
