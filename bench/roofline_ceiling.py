"""bench/roofline_ceiling.py - the highest ratio against a same-run baseline that any implementation could reach here.

A ratio "ours / PyTorch" says little alone: it moves with how fast PyTorch is on this core as much as with us. Its
ceiling does not depend on us. `otke_bench --roofline` and `graphit_bench --roofline` print each configuration's
FLOPs per item (the products the model must compute, at each item's true size) and the core's FMA limit, measured in
the same process (independent fused multiply-adds in registers: nothing runs faster). An implementation that
computed those products at that limit and did nothing else would take FLOPs / limit per item; divided by PyTorch's
time per item measured now, that is the ratio no implementation can pass on this machine. With T threads the limit
is taken as T times one core's (an upper bound too).

    ceiling = T * fma_limit_gflops * 1e3 / mflop_per_item / pytorch_items_per_s
"""
import re
import subprocess
import sys


def parse_roofline(text):
    """(fma limit in GFLOP/s, {row name: (MFLOP per item inference, MFLOP per item training step)}) from the
    output of `otke_bench --roofline` or `graphit_bench --roofline`."""
    m = re.search(r"FMA limit ([0-9.]+) GFLOP/s", text)
    if not m:
        raise ValueError("no 'FMA limit N GFLOP/s' in the roofline output")
    limit = float(m.group(1))
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0].startswith("("):  # GraphiT: a training step is 3x the forward's products
            rows[cells[0]] = (float(cells[1]), 3 * float(cells[1]))
        elif len(cells) == 11 and re.fullmatch(r"k\d+ p\d+", cells[0]):  # OTKE: both counts are printed
            rows[cells[0].replace(" ", "")] = (float(cells[1]), float(cells[6]))
    if not rows:
        raise ValueError("no configuration rows in the roofline output")
    return limit, rows


def roofline(bench):
    """Runs `bench --roofline` (a few seconds: it also times each configuration once) and parses it."""
    out = subprocess.run([bench, "--roofline"], capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        sys.exit(f"error: {bench} --roofline failed: {last}")
    try:
        return parse_roofline(out.stdout)
    except ValueError as e:
        sys.exit(f"error: {bench} --roofline: {e}")


def ceiling(limit_gflops, mflop_per_item, threads, baseline_items_per_s):
    """The ratio an implementation at `threads` times the FMA limit would reach against the baseline's rate."""
    return threads * limit_gflops * 1e3 / mflop_per_item / baseline_items_per_s
