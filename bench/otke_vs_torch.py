#!/usr/bin/env python3
"""bench/otke_vs_torch.py - OTKE on the CPU next to a PyTorch baseline measured in the same run.

For each configuration (k128p64, k512p64, k128p10, k512p10: batch 64, n ~ U[200, 1000], eps 0.5, 10 iterations)
it runs ours (`otke_bench --config kXpY`: 1 and 2 threads) and then PyTorch (`bench/gpu/torch_otke.py --device
cpu --threads T`, Debian's python3-torch), interleaved so both see the same machine, and prints inference and
training-step throughput with the ratio ours / PyTorch.

Same workload on both sides: identity features psi (unit-norm rows), one reference z [p, k], a linear head on the
sqrt(p)-scaled pooled features; Sinkhorn in similarity mode, 10 iterations; the training step differentiates
w.r.t. z and the head only (no input gradient) and takes an Adam step. Padding: ours solves each set at its true
size (masked); the PyTorch baseline computes on the padded n_max = 1000 rows with masked logits, as OTK's
reference does. Allocator: PyTorch runs with glibc's mmap threshold raised to 32 MiB and the trim threshold to
1 GiB (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_), so that its large temporaries are not mapped and unmapped
at every call (on this VM that alone costs it up to 2x); ours uses the default allocator.

`ceiling` is the ratio no implementation could pass on this machine: the configuration's FLOPs per sequence (at each
set's true size; exps not counted) at the core's FMA limit, both from `otke_bench --roofline` in the same run,
against PyTorch's rate (bench/roofline_ceiling.py).

  /usr/bin/python3 bench/otke_vs_torch.py --bench build/native-release/bin/otke_bench [--configs k128p64,...]
                                          [--threads 1,2] [--quick]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from roofline_ceiling import ceiling, roofline  # noqa: E402
CONFIGS = ["k128p64", "k512p64", "k128p10", "k512p10"]
TORCH_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(2**30)}


def ours(bench, config):
    """{threads: (infer seq/s, train seq/s)} from otke_bench's first table."""
    out = subprocess.run([bench, f"--config={config}"], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"k(\d+) p(\d+)\s+(\d+)\s+(\d+)\s+\S+\s+(\d+)", line)
        if m:
            rows[int(m.group(3))] = (float(m.group(4)), float(m.group(5)))
    if not rows:
        sys.exit(f"error: no table rows in the output of {bench} --config={config}:\n{out}")
    return rows


def torch_baseline(config, threads, quick):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = ["/usr/bin/python3", os.path.join(HERE, "gpu", "torch_otke.py"), "--device", "cpu", "--configs", config,
               "--threads", str(threads), "--json", f.name] + (["--quick"] if quick else [])
        subprocess.run(cmd, check=True, capture_output=True, text=True, env=dict(os.environ, **TORCH_ENV))
        r = json.loads(open(f.name).read().splitlines()[0])
    return r["infer_sets_per_s"], r["train_sets_per_s"], r["torch"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="our otke_bench executable")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true", help="PyTorch: 1 warm-up, 2 repeats")
    a = ap.parse_args()
    configs = [c for c in a.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown config {c!r}; known: {', '.join(CONFIGS)}")
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        ap.error(f"--threads: expected integers, got {a.threads!r}")
    if not os.access(a.bench, os.X_OK):
        ap.error(f"--bench {a.bench} is not an executable (build it: cmake --build build/native-release)")
    limit, work = roofline(a.bench)
    print("| config | threads | ours infer | PyTorch infer | ratio | ceiling | ours train | PyTorch train | ratio | "
          "ceiling |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    version = ""
    for c in configs:
        mine = ours(a.bench, c)
        for t in threads:
            if t not in mine:
                continue
            ti, tt, version = torch_baseline(c, t, a.quick)
            oi, ot = mine[t]
            ci, ct = ceiling(limit, work[c][0], t, ti), ceiling(limit, work[c][1], t, tt)
            print(f"| {c} | {t} | {oi:.0f} | {ti:.0f} | {oi / ti:.2f}x | {ci:.2f}x | {ot:.0f} | {tt:.0f} | "
                  f"{ot / tt:.2f}x | {ct:.2f}x |", flush=True)
    print(f"\nseq/s; PyTorch {version} on the CPU, measured in this run (allocator: "
          + ", ".join(f"{k}={v}" for k, v in TORCH_ENV.items()) + f"); ceiling: the ratio at this core's FMA limit, "
          f"{limit:.1f} GFLOP/s a thread, measured now")


if __name__ == "__main__":
    main()
