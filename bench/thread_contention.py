#!/usr/bin/env python3
"""bench/thread_contention.py - do 2 threads stay faster than 1 when another process keeps a core busy?

Runs `graphit_bench --config b --threads 1,2` (GraphiT config (b): training step and inference, graphs/s) with the
core's two native parallel runtimes (inductive/parallel.h): OpenMP (INDUCTIVE_PARALLEL unset; libgomp spins
waiting threads for a while) and the condition-variable ThreadPool (INDUCTIVE_PARALLEL=pool; the one the threaded
wasm module uses), each on an idle machine and then next to a competing busy loop (another process spinning on
one core for the whole measurement). Prints one table; nothing is asserted.

  /usr/bin/python3 bench/thread_contention.py --bench build/native-release/bin/graphit_bench
"""
import argparse
import os
import re
import subprocess
import sys


def run(bench, runtime, busy):
    env = dict(os.environ)
    env.pop("INDUCTIVE_PARALLEL", None)
    if runtime == "pool":
        env["INDUCTIVE_PARALLEL"] = "pool"
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        out = subprocess.run([bench, "--config", "b", "--threads", "1,2", "--kernel-only"], capture_output=True, text=True, env=env,
                             check=True).stdout
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0].startswith("(b)") and "GraphiT" in cells[2]:
            rows[int(cells[1])] = (float(cells[3]), float(cells[4]))
    if set(rows) != {1, 2}:
        sys.exit(f"error: unexpected output of {bench}:\n{out}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="graphit_bench executable")
    a = ap.parse_args()
    if not os.access(a.bench, os.X_OK):
        ap.error(f"--bench {a.bench} is not an executable")
    print(f"GraphiT (b), graphs/s, {os.cpu_count()} CPUs; 'busy' = another process spinning on one core\n")
    print("| runtime | machine | inference 1 thr | inference 2 thr | 2 / 1 | train 1 thr | train 2 thr | 2 / 1 |")
    print("|---|---|---|---|---|---|---|---|")
    for runtime in ("openmp", "pool"):
        for busy in (False, True):
            r = run(a.bench, runtime, busy)
            (i1, t1), (i2, t2) = r[1], r[2]
            print(f"| {runtime} | {'busy' if busy else 'idle'} | {i1:.0f} | {i2:.0f} | {i2 / i1:.2f}x | {t1:.0f} | "
                  f"{t2:.0f} | {t2 / t1:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
