"""Prints the JSON lines of the Sinkhorn benchmarks (native, POT, wasm) as one table with ratios.

Input: a file of JSON lines as written by bench/sinkhorn_bench.cpp and bench/pot_sinkhorn_bench.py (any other
source using the same fields joins the table): {"impl", "dtype", "simd", "threads", "iters", "batch",
"ms_per_batch", "problems_per_s"}; {"meta": {...}} lines describe the run, {"skip": "..."} lines become notes.

Columns: `ms min` and `ms median` wall time per batch; problems/s and every ratio use the minimum ("ms_min", or
"ms_per_batch" when a source gives only that), because on a shared machine interference only ever adds time.
`cpu ms` is the process CPU time per batch (all threads): with 1 thread, wall well above it means other work
took the core; with 2 threads, wall near cpu/2 means both threads really ran at once.
`ours/POT f64` and `ours/POT f32` are time ratios against single-threaded POT at the same iteration count
(below 1 = we are faster); `vs scalar` is the speed-up over our scalar kernels at the same thread count.
"""
import json
import sys

SIMD_ORDER = {"scalar": 0, "sse2": 1, "avx2": 2, "avx512": 3}


def is_pot(row):
    return row["impl"].startswith("POT")


def best_ms(row):
    return row.get("ms_min", row["ms_per_batch"])


def main(path):
    rows, notes, meta = [], [], {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            obj = json.loads(line)
            if "meta" in obj:
                meta.update(obj["meta"])
            elif "skip" in obj:
                notes.append(obj["skip"])
            else:
                rows.append(obj)

    for key in ("problem", "device", "commit", "date", "compiler"):
        if key in meta:
            print(f"{key:>8}: {meta[key]}")
    pot = {(r["iters"], r["dtype"]): best_ms(r) for r in rows if is_pot(r)}
    scalar = {(r["impl"], r["threads"], r["iters"]): best_ms(r) for r in rows if r["simd"] == "scalar"}

    def ratio(num, den):
        return f"{num / den:.3f}" if den else "-"

    header = ["impl", "dtype", "simd", "thr", "iters", "ms min", "ms median", "cpu ms", "problems/s",
              "ours/POT f64", "ours/POT f32", "vs scalar"]
    table = []
    order = sorted(rows, key=lambda r: (r["iters"], is_pot(r), r["impl"], r["threads"],
                                        SIMD_ORDER.get(r["simd"], 9), r["dtype"]))
    for r in order:
        ms = best_ms(r)
        ours = not is_pot(r)
        base = scalar.get((r["impl"], r["threads"], r["iters"]))
        table.append([r["impl"], r["dtype"], r["simd"], str(r["threads"]), str(r["iters"]), f"{ms:.1f}",
                      f"{r['ms_per_batch']:.1f}", f"{r['cpu_ms']:.1f}" if "cpu_ms" in r else "-",
                      f"{r['batch'] / (ms * 1e-3):.1f}",
                      ratio(ms, pot.get((r["iters"], "float64"))) if ours else "",
                      ratio(ms, pot.get((r["iters"], "float32"))) if ours else "",
                      f"{base / ms:.2f}x" if ours and base else ""])
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    prev_iters = None
    for r, row in zip(order, table):
        if prev_iters is not None and r["iters"] != prev_iters:
            print()
        prev_iters = r["iters"]
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    main(sys.argv[1])
