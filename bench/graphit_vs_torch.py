#!/usr/bin/env python3
"""bench/graphit_vs_torch.py - GraphiT on the CPU next to a PyTorch baseline measured in the same run.

Configurations (a) and (b) of bench/graphit_bench.cpp ((b) is the reference's ZINC model: 10 layers, 8 heads,
BatchNorm, L1 loss, 9-37 nodes of 28 types, batch 128). `graphit_bench --export` writes the graphs, kernels and
targets; the baseline (bench/torch_graphit.py, Debian's python3-torch) reads the same files, so both sides run the
same batches through the same maths (tests/oracle/test_graphit_torch.py checks the baseline against the oracle):
inference in evaluation mode, and a training step = forward, backward w.r.t. every parameter (the inputs are
integer node types: no input gradient on either side), Adam (no weight decay). For each configuration and thread
count ours runs, then PyTorch, interleaved so both see the same machine, for --rounds rounds: this VM's speed
moves by a third between minutes (and PyTorch's by up to half), so a row gives each side's median and the median
of the rounds' ratios, with the ratios' range.

Padding differs and is reported: ours computes each graph's attention at its own size; the baseline pads the
attention to the batch's largest graph (`attention padding` = padded / true attention entries), as the GraphiT
reference does. PyTorch runs with the allocator settings of bench/otke_vs_torch.py.

`ceiling` is the ratio no implementation could pass on this machine: the configuration's FLOPs per graph (at each
graph's true size) at the core's FMA limit, both from `graphit_bench --roofline` in the same run, against PyTorch's
median rate (bench/roofline_ceiling.py). Where the target ratio is above it, the target is out of reach here.

  /usr/bin/python3 bench/graphit_vs_torch.py --bench build/native-release/bin/graphit_bench [--configs a,b]
                                             [--threads 1,2] [--budget 3] [--rounds 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from otke_vs_torch import TORCH_ENV  # noqa: E402  (one allocator setting for every PyTorch baseline)
from roofline_ceiling import ceiling, roofline  # noqa: E402

CONFIGS = ["a", "b"]


def ours(bench, config, threads):
    """(infer graphs/s, train graphs/s, config description) from graphit_bench's table."""
    out = subprocess.run([bench, f"--config={config}", f"--threads={threads}", "--kernel-only"], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.match(r"\(\w\)", cells[0]) and cells[1] == str(threads):
            return float(cells[3]), float(cells[4]), cells[0]
    sys.exit(f"error: no table row in the output of {bench} --config={config}:\n{out}")


def torch_baseline(workload, threads, budget):
    cmd = ["/usr/bin/python3", os.path.join(HERE, "torch_graphit.py"), "--workload", workload, "--threads",
           str(threads), "--budget", str(budget)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **TORCH_ENV))
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="our graphit_bench executable")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--budget", type=float, default=3.0, help="PyTorch: seconds per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="ours-then-PyTorch rounds per row (medians reported)")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error(f"--rounds: expected a positive count, got {a.rounds}")
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
    print("| config | threads | ours infer | PyTorch infer | ratio (range) | ceiling | ours train | PyTorch train | "
          "ratio (range) | ceiling | attention padding |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    version = ""
    with tempfile.TemporaryDirectory(prefix="graphit-vs-torch-") as tmp:
        subprocess.run([a.bench, "--export", tmp], check=True)
        for c in configs:
            for t in threads:
                rounds = []
                for _ in range(a.rounds):
                    oi, ot, name = ours(a.bench, c, t)
                    r = torch_baseline(os.path.join(tmp, c), t, a.budget)
                    rounds.append((oi, ot, r["infer_graphs_per_s"], r["train_graphs_per_s"]))
                    version = r["torch"]
                med = [statistics.median(x[k] for x in rounds) for k in range(4)]
                ri = [x[0] / x[2] for x in rounds]
                rt = [x[1] / x[3] for x in rounds]
                span = (lambda v: f" ({min(v):.2f}-{max(v):.2f})" if len(v) > 1 else "")
                if name not in work:
                    sys.exit(f"error: {a.bench} --roofline has no row {name!r}")
                ci, ct = (ceiling(limit, work[name][k], t, med[2 + k]) for k in range(2))
                print(f"| {name} | {t} | {med[0]:.0f} | {med[2]:.0f} | {statistics.median(ri):.2f}x{span(ri)} | "
                      f"{ci:.2f}x | {med[1]:.0f} | {med[3]:.0f} | {statistics.median(rt):.2f}x{span(rt)} | "
                      f"{ct:.2f}x | {r['attention_padding']:.2f}x |", flush=True)
    print(f"\ngraphs/s, medians of {a.rounds} interleaved rounds; PyTorch {version} on the CPU, measured in this run "
          "(allocator: "
          + ", ".join(f"{k}={v}" for k, v in TORCH_ENV.items()) + f"); ceiling: the ratio at this core's FMA limit, "
          f"{limit:.1f} GFLOP/s a thread, measured now")


if __name__ == "__main__":
    main()
