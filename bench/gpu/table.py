#!/usr/bin/env python3
"""The GPU check's summary table (bench/gpu/check.sh): gpu_bench's JSON lines next to PyTorch's on the same GPU.

usage: table.py GPU_BENCH.jsonl TORCH_OTKE.jsonl [TORCH_GRAPHIT.jsonl]   (any may be missing: its columns read '-')
Prints a markdown table, one row per section and config, with items/s (OTKE: sets; GraphiT: graphs) for our CUDA
code, our 1-thread CPU code and PyTorch on the GPU, the ratios, the roofline fractions and the peak device memory.
"""
import json
import sys


def read(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return []


def fmt(x, spec="{:.0f}"):
    return "-" if x is None or x < 0 else spec.format(x)


def main(ours_path, torch_path, torch_graphit_path=""):
    ours = read(ours_path)
    torch = {r["config"]: r for r in read(torch_path)}
    # bench/torch_graphit.py names its workloads a and b; gpu_bench names them graphit-a and graphit-b.
    torch.update({"graphit-" + r["workload"]: r for r in read(torch_graphit_path) if r.get("device") == "cuda"})
    device = next((r["device"] for r in ours if r["backend"] == "cuda"), "?")
    print(f"GPU: {device}; PyTorch {next(iter(torch.values()), {}).get('torch', '-')}")
    print("| section | config | cuda items/s | cpu 1-thread items/s | PyTorch (GPU) items/s | cuda / PyTorch | "
          "cuda / cpu | FP32 roofline | bandwidth roofline | peak MB (cuda / PyTorch) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = {}
    for r in ours:
        rows.setdefault((r["section"], r["config"]), {})[r["backend"]] = r
    torch_key = {"otke_embed": "infer_sets_per_s", "otke_train": "train_sets_per_s",
                 "otke_train_streamed": "train_sets_per_s", "graphit_infer": "infer_graphs_per_s",
                 "graphit_train": "train_graphs_per_s"}
    for (section, config), by in rows.items():
        cuda, cpu = by.get("cuda"), by.get("cpu")
        t = torch.get(config, {}).get(torch_key.get(section, ""), None)
        t_peak = torch.get(config, {}).get("train_peak_mb") if section.startswith("otke_train") else None
        c = cuda["sets_per_s"] if cuda else None
        print(f"| {section} | {config} | {fmt(c)} | {fmt(cpu['sets_per_s'] if cpu else None)} | {fmt(t)} | "
              f"{fmt(c / t if c and t else None, '{:.2f}x')} | "
              f"{fmt(c / cpu['sets_per_s'] if c and cpu else None, '{:.1f}x')} | "
              f"{fmt(100 * cuda['fp32_roofline'] if cuda else None, '{:.1f} %')} | "
              f"{fmt(100 * cuda['bandwidth_roofline'] if cuda else None, '{:.1f} %')} | "
              f"{fmt(cuda['peak_mb'] if cuda else None)} / {fmt(t_peak)} |")
    return 0 if ours else 1


if __name__ == "__main__":
    sys.exit(main(*(sys.argv[1:4] + [""] * (3 - len(sys.argv[1:4])))))
