#!/usr/bin/env python3
"""bench/thread_contention.py - do 2 threads stay faster than 1 when another process keeps a core busy?

Runs `graphit_bench --config b --threads 1,2 --kernel-only` (GraphiT config (b): inference and training step,
graphs/s) with the core's two native parallel runtimes (inductive/parallel.h): its thread pool (the default, and the
runtime of the threaded wasm module) and OpenMP (INDUCTIVE_PARALLEL=openmp, the native default until 2026-11-29;
libgomp's team spins at each loop's end until every thread has arrived), each on an idle machine and next to a
competing busy loop (another process spinning on one core for the whole measurement). This VM's speed moves by a
third between minutes, so each round alternates the four cases and the table prints each case's median 2/1 ratio
over the rounds with its range. Nothing is asserted.

  /usr/bin/python3 bench/thread_contention.py --bench build/native-release/bin/graphit_bench [--rounds 3] [--config b]
"""
import argparse
import os
import statistics
import subprocess
import sys

RUNTIMES = {"pool": None, "openmp": "openmp"}


def run(bench, config, runtime, busy):
    env = dict(os.environ)
    env.pop("INDUCTIVE_PARALLEL", None)
    if RUNTIMES[runtime]:
        env["INDUCTIVE_PARALLEL"] = RUNTIMES[runtime]
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        out = subprocess.run([bench, "--config", config, "--threads", "1,2", "--kernel-only"], capture_output=True,
                             text=True, env=env, check=True).stdout
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0].startswith(f"({config})") and "GraphiT" in cells[2]:
            rows[int(cells[1])] = (float(cells[3]), float(cells[4]))
    if set(rows) != {1, 2}:
        sys.exit(f"error: unexpected output of {bench}:\n{out}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="graphit_bench executable")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the four cases (default 3)")
    ap.add_argument("--config", choices=("a", "b"), default="b", help="GraphiT configuration (default b)")
    a = ap.parse_args()
    if not os.access(a.bench, os.X_OK):
        ap.error(f"--bench {a.bench} is not an executable")
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    cases = [(rt, busy) for busy in (False, True) for rt in RUNTIMES]
    got = {c: [] for c in cases}
    for r in range(a.rounds):
        for c in cases:
            got[c].append(run(a.bench, a.config, *c))
            print(f"round {r + 1}/{a.rounds}: {c[0]} {'busy' if c[1] else 'idle'} done", file=sys.stderr, flush=True)
    print(f"GraphiT ({a.config}), graphs/s (medians of {a.rounds} rounds), {os.cpu_count()} CPUs; 'busy' = another "
          "process spinning on one core\n")
    print("| runtime | machine | inference 1 thr | inference 2 thr | 2 / 1 (range) | train 1 thr | train 2 thr | "
          "2 / 1 (range) |")
    print("|---|---|---|---|---|---|---|---|")
    for (runtime, busy), rows in got.items():
        med = lambda f: statistics.median(f(r) for r in rows)
        ratios = [[r[2][k] / r[1][k] for r in rows] for k in (0, 1)]
        cells = []
        for k in (0, 1):
            cells += [f"{med(lambda r: r[1][k]):.0f}", f"{med(lambda r: r[2][k]):.0f}",
                      f"{statistics.median(ratios[k]):.2f}x ({min(ratios[k]):.2f}-{max(ratios[k]):.2f})"]
        print(f"| {runtime} | {'busy' if busy else 'idle'} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
