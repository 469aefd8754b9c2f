#!/usr/bin/env python3
"""bench/gpu/torch_otke.py - PyTorch baseline of the OTKE workload, the reference bench/gpu/check.sh compares
our CUDA code against.

Workload (mirrors bench/otke_bench.cpp): per config kKpP (k = 128 or 512 feature dim, p = 64 or 10 supports),
a batch of B = 64 sets, n_b ~ U[200, 1000] (seeded), n_max = 1000, rows of psi [B, n_max, k] are unit-norm
standard normal vectors, padding rows zero. One reference z [p, k] (q = 1) ~ N(0, 1/k), head W [2, p*k] and
bias [2] zero-initialised. Log-domain Sinkhorn, similarity mode: K = psi z^T / eps, eps = 0.5, 10 iterations,
a_i = 1/n_b on valid rows, b_j = 1/p; plan P = exp(F_i + G_j + K_ij); Phi = sqrt(p) P^T psi -> [B, p*k];
logits = Phi W^T + bias; loss = mean cross-entropy against seeded random labels in {0, 1}.

Measures per config: (a) inference sets/s (forward under no_grad), (b) training-step sets/s (forward,
backward through the unrolled iterations, Adam(lr=0.01) on z, W, bias), (c) peak device memory of one training
step in MB above what was allocated before it (cuda only, -1 on cpu). GPU times use CUDA events; each figure is
the median of at least 10 repeats or 1 s, whichever is more, after 3 warm-ups (--quick: 1 warm-up, 2 repeats).

  python3 bench/gpu/torch_otke.py [--device cuda|cpu] [--configs k128p64,...] [--quick] [--threads N]
                                  [--json PATH] [--check]
"""
import argparse
import json
import math
import platform
import statistics
import time

import numpy as np
import torch

CONFIGS = {"k128p64": (128, 64), "k512p64": (512, 64), "k128p10": (128, 10), "k512p10": (512, 10)}
BATCH, N_MIN, N_MAX, EPS, ITERS, CLASSES = 64, 200, 1000, 0.5, 10, 2
NEG = -1e30  # finite "minus infinity" for padding: keeps logsumexp and its gradient free of NaN


def make_features(batch, k, n_min, n_max, seed, dtype, device):
    """psi [B, n_max, k] with unit-norm standard normal valid rows and zero padding; lengths n [B]."""
    rng = np.random.default_rng(seed)
    n = rng.integers(n_min, n_max + 1, size=batch)
    psi = rng.standard_normal((batch, n_max, k))
    psi /= np.linalg.norm(psi, axis=2, keepdims=True)
    psi[np.arange(n_max)[None, :] >= n[:, None]] = 0.0
    return (torch.tensor(psi, dtype=dtype, device=device), torch.tensor(n, device=device))


def sinkhorn_plan(psi, n, z, eps, iters):
    """Log-domain Sinkhorn plan P [B, n_max, p] between the rows of each set (a_i = 1/n) and z (b_j = 1/p)."""
    p = z.shape[0]
    mask = torch.arange(psi.shape[1], device=psi.device)[None, :] < n[:, None]            # [B, N]
    K = torch.matmul(psi, z.t()).div(eps).masked_fill(~mask[:, :, None], NEG)             # [B, N, p]
    log_a = -torch.log(n.to(psi.dtype))[:, None]                                          # [B, 1]
    log_b = -math.log(p)
    F = torch.zeros(mask.shape, dtype=psi.dtype, device=psi.device)
    G = torch.zeros((psi.shape[0], p), dtype=psi.dtype, device=psi.device)
    for _ in range(iters):
        G = log_b - torch.logsumexp(F[:, :, None] + K, dim=1)
        F = torch.where(mask, log_a - torch.logsumexp(G[:, None, :] + K, dim=2), torch.zeros_like(F))
    return torch.exp(F[:, :, None] + G[:, None, :] + K)                                   # 0 on padding rows


def forward(psi, n, z, W, bias, eps=EPS, iters=ITERS):
    P = sinkhorn_plan(psi, n, z, eps, iters)
    phi = math.sqrt(z.shape[0]) * torch.matmul(P.transpose(1, 2), psi)                    # [B, p, k], q = 1
    return torch.nn.functional.linear(phi.reshape(psi.shape[0], -1), W, bias)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_seconds(body, device, warmup, min_reps, min_time):
    for _ in range(warmup):
        body()
    sync(device)
    times = []
    while len(times) < min_reps or sum(times) < min_time:
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            body()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            body()
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_config(name, device, quick):
    k, p = CONFIGS[name]
    psi, n = make_features(BATCH, k, N_MIN, N_MAX, 11, torch.float32, device)
    gen = torch.Generator().manual_seed(7)
    z = (torch.randn(p, k, generator=gen) / math.sqrt(k)).to(device).requires_grad_()
    W = torch.zeros(CLASSES, p * k, device=device, requires_grad=True)
    bias = torch.zeros(CLASSES, device=device, requires_grad=True)
    y = torch.randint(0, CLASSES, (BATCH,), generator=gen).to(device)
    opt = torch.optim.Adam([z, W, bias], lr=0.01)

    def infer():
        with torch.no_grad():
            forward(psi, n, z, W, bias)

    def train():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(forward(psi, n, z, W, bias), y).backward()
        opt.step()

    warmup, reps, min_time = (1, 2, 0.0) if quick else (3, 10, 1.0)
    t_inf = median_seconds(infer, device, warmup, reps, min_time)
    t_train = median_seconds(train, device, warmup, reps, min_time)
    assert all(bool(torch.isfinite(t.grad).all()) for t in (z, W, bias)), "non-finite gradient"
    peak_mb = -1.0
    if device.type == "cuda":
        sync(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        train()
        sync(device)
        peak_mb = (torch.cuda.max_memory_allocated(device) - before) / 2**20
    return {"config": name, "device": device.type,
            "device_name": torch.cuda.get_device_name(device) if device.type == "cuda"
            else (platform.processor() or platform.machine()),
            "torch": torch.__version__, "infer_sets_per_s": BATCH / t_inf,
            "train_sets_per_s": BATCH / t_train, "train_peak_mb": peak_mb}


def check(device):
    """Tiny float64 problem: after 200 iterations the plan has marginals a and b; gradients are finite."""
    psi, n = make_features(3, 4, 2, 6, 3, torch.float64, device)
    z = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5)).to(device)
    z.requires_grad_()
    P = sinkhorn_plan(psi, n, z, EPS, 200)
    mask = torch.arange(psi.shape[1], device=device)[None, :] < n[:, None]
    a = torch.where(mask, 1.0 / n.to(torch.float64)[:, None], torch.zeros_like(mask, dtype=torch.float64))
    row_err = (P.sum(2) - a).abs().max().item()
    col_err = (P.sum(1) - 1.0 / 3).abs().max().item()
    assert row_err < 1e-5 and col_err < 1e-5, f"marginals off: rows {row_err:.3g}, columns {col_err:.3g}"
    W = torch.randn(CLASSES, 12, dtype=torch.float64, device=device, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(forward(psi, n, z, W, None), torch.tensor([0, 1, 0], device=device))
    loss.backward()
    assert bool(torch.isfinite(z.grad).all()) and bool(torch.isfinite(W.grad).all()), "non-finite gradient"
    print(f"check ok (n = {n.tolist()}, row err {row_err:.2e}, column err {col_err:.2e}, gradients finite)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=["cpu", "cuda"],
                    default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--quick", action="store_true", help="1 warm-up, 2 repeats (tests)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads on cpu")
    ap.add_argument("--json", help="write one JSON object per config, one per line")
    ap.add_argument("--check", action="store_true", help="also verify Sinkhorn marginals on a tiny problem")
    args = ap.parse_args()
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in names:
        if c not in CONFIGS:
            ap.error(f"unknown config {c!r}; known: {', '.join(CONFIGS)}")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda but torch.cuda.is_available() is false")
    if args.device == "cpu" and args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.check:
        check(device)
    rows = []
    for c in names:
        rows.append(bench_config(c, device, args.quick))
    if args.json:
        with open(args.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    print(f"PyTorch {torch.__version__} OTKE baseline on {args.device} ({rows[0]['device_name'] if rows else ''}),"
          f" batch {BATCH}, n ~ U[{N_MIN}, {N_MAX}], eps {EPS}, {ITERS} iterations"
          + (f", {torch.get_num_threads()} threads" if args.device == "cpu" else ""))
    print(f"{'config':<9} {'infer sets/s':>13} {'train sets/s':>13} {'train peak MB':>14}")
    for r in rows:
        print(f"{r['config']:<9} {r['infer_sets_per_s']:>13.0f} {r['train_sets_per_s']:>13.0f}"
              f" {r['train_peak_mb']:>14.1f}")


if __name__ == "__main__":
    main()
