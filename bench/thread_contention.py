#!/usr/bin/env python3
"""bench/thread_contention.py - do 2 threads stay faster than 1 when another process keeps a core busy?

Runs `graphit_bench --config b --threads 1,2 --kernel-only` (GraphiT config (b): inference and training step,
graphs/s) with the core's two native parallel runtimes (inductive/parallel.h): its thread pool (the default, and the
runtime of the threaded wasm module) and OpenMP (INDUCTIVE_PARALLEL=openmp, the native default until 2026-11-29;
libgomp's team spins at each loop's end until every thread has arrived), on an idle machine and next to a competing
process that spins for the whole measurement. Two competitors (`--busy`):

  share  a plain spinner at the same priority as the bench: the kernel shares the cores between it and our threads,
         and it gets what the scheduler gives it (measured: about half a core next to 2 of our threads);
  core   the same spinner pinned to the last CPU at nice -20: it holds that core whole (the column says how much it
         got), so our 2 threads share the other core; the case "one core busy with another process".

The competitor's CPU time is read from /proc/PID/stat when it is stopped and printed as its share of one core over
the run. This VM's speed moves by a third between minutes, so each round alternates every case and the table
prints each case's median 2/1 ratio over the rounds with its range. Nothing is asserted.

  /usr/bin/python3 bench/thread_contention.py --bench build/native-release/bin/graphit_bench [--rounds 3]
      [--config b] [--busy share,core] [--runtimes pool,openmp]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

RUNTIMES = {"pool": None, "openmp": "openmp"}
BUSY = ("share", "core")


def start_competitor(kind):
    """A process spinning on a core; 'core' pins it to the last CPU with the highest priority."""
    def hold_a_core():
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=hold_a_core if kind == "core" else None)


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (fields 14 and 15 of /proc/PID/stat, after the command's name)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(bench, config, runtime, busy):
    env = dict(os.environ)
    env.pop("INDUCTIVE_PARALLEL", None)
    if RUNTIMES[runtime]:
        env["INDUCTIVE_PARALLEL"] = RUNTIMES[runtime]
    spinner = start_competitor(busy) if busy else None
    share = None
    try:
        if spinner:
            time.sleep(0.2)  # let it reach its core before the bench starts
            t0, c0 = time.monotonic(), cpu_seconds(spinner.pid)
        out = subprocess.run([bench, "--config", config, "--threads", "1,2", "--kernel-only"], capture_output=True,
                             text=True, env=env, check=True).stdout
        if spinner:
            share = (cpu_seconds(spinner.pid) - c0) / (time.monotonic() - t0)
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
    return rows, share


def names(text, allowed, what, ap):
    got = [x for x in text.split(",") if x]
    bad = [x for x in got if x not in allowed]
    if bad or not got:
        ap.error(f"--{what} takes a comma-separated list of {', '.join(allowed)} (got {text!r})")
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, help="graphit_bench executable")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the cases (default 3)")
    ap.add_argument("--config", choices=("a", "b"), default="b", help="GraphiT configuration (default b)")
    ap.add_argument("--busy", default="share,core", help="competitors to run next to: share, core (default both)")
    ap.add_argument("--runtimes", default="pool,openmp", help="parallel runtimes: pool, openmp (default both)")
    a = ap.parse_args()
    if not os.access(a.bench, os.X_OK):
        ap.error(f"--bench {a.bench} is not an executable")
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    busy = names(a.busy, BUSY, "busy", ap)
    runtimes = names(a.runtimes, RUNTIMES, "runtimes", ap)
    if "core" in busy and len(os.sched_getaffinity(0)) < 2:
        ap.error("--busy core needs at least 2 CPUs (it takes one whole)")
    cases = [(rt, b) for b in [None] + busy for rt in runtimes]
    got = {c: [] for c in cases}
    for r in range(a.rounds):
        for c in cases:
            got[c].append(run(a.bench, a.config, *c))
            print(f"round {r + 1}/{a.rounds}: {c[0]} {c[1] or 'idle'} done", file=sys.stderr, flush=True)
    print(f"GraphiT ({a.config}), graphs/s (medians of {a.rounds} rounds), {os.cpu_count()} CPUs; 'share' = another "
          "process spinning at the same priority, 'core' = one pinned to a CPU at nice -20; 'competitor' = the CPU it "
          "got, in cores\n")
    print("| runtime | machine | competitor | inference 1 thr | inference 2 thr | 2 / 1 (range) | train 1 thr | "
          "train 2 thr | 2 / 1 (range) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (runtime, b), results in got.items():
        rows = [r for r, _ in results]
        med = lambda f: statistics.median(f(r) for r in rows)
        ratios = [[r[2][k] / r[1][k] for r in rows] for k in (0, 1)]
        cells = []
        for k in (0, 1):
            cells += [f"{med(lambda r: r[1][k]):.0f}", f"{med(lambda r: r[2][k]):.0f}",
                      f"{statistics.median(ratios[k]):.2f}x ({min(ratios[k]):.2f}-{max(ratios[k]):.2f})"]
        shares = [s for _, s in results if s is not None]
        competitor = f"{statistics.median(shares):.2f}" if shares else "-"
        print(f"| {runtime} | {b or 'idle'} | {competitor} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
