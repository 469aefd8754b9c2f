#!/usr/bin/env python3
"""The ring all-reduce model of bench/README.md ("On paper, for clusters" and "Buckets"): what summing the gradients
costs per step on N GPUs, with one message per step or with the buckets of native/cuda/device_allreduce.h.

A ring all-reduce of S bytes over N ranks takes about 2 (N - 1) a + 2 (N - 1) / N x S / B (a the per-hop latency,
B the link bandwidth). GradientBuckets starts a bucket once the backward pass has finished at least `bucket`
gradients since the last one and a bucket's worth is still to come, walking the layers from the head to the inputs;
NCCL runs the buckets one after the
other on their own stream while the backward pass goes on. With each layer's backward taking `--layer-ms`, the
exposed communication is how long the last sum ends after the backward pass; one message per step exposes all of
it. No GPU timed any of this: it is arithmetic, and `--layer-ms` is an assumption until gpu_bench's GraphiT
training rows measure it.

  /usr/bin/python3 bench/allreduce_model.py
"""
import argparse
import sys

# Parameters per layer of GraphiT with d 64 (ffn 128): q, v, out weights and out bias, two norms, the FFN.
D, FFN = 64, 128
LAYER = 3 * D * D + D + 2 * D + FFN * D + FFN + D * FFN + D + 2 * D
MODELS = {
    # name: (inputs, [layer sizes, first to last], head), in model-file order (native/cuda/graphit_device_pass.h)
    "GraphiT (a), 3 layers": (448, [LAYER] * 3, 4290),
    "GraphiT (b), 10 layers": (513, [LAYER] * 10, 4225),
}


def ring_ms(values, ranks, gbps, hop_us):
    if values == 0:
        return 0.0
    bytes_ = 4 * values
    return (2 * (ranks - 1) * hop_us * 1e-6 + 2 * (ranks - 1) / ranks * bytes_ / (gbps * 1e9 / 8)) * 1e3


def buckets(inputs, layers, head, bucket):
    """The buckets GradientBuckets forms, last layers first: (gradients, layers of backward done when it starts)."""
    out, pending = [], head
    for done, size in enumerate(reversed(layers), 1):
        pending += size
        rest = inputs + sum(layers[:len(layers) - done])
        if pending >= bucket and rest >= bucket:
            out.append((pending, done))
            pending = 0
    pending += inputs
    if pending:
        out.append((pending, len(layers)))
    return out


def exposed_ms(bs, layers, layer_ms, ranks, gbps, hop_us):
    """How long after the backward pass the last bucket's sum ends (one stream of sums, in bucket order)."""
    end = 0.0
    for values, done in bs:
        end = max(end, done * layer_ms) + ring_ms(values, ranks, gbps, hop_us)
    return max(0.0, end - layers * layer_ms)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bucket", type=int, default=1 << 17, help="gradients per bucket (default: the code's, 128 K)")
    ap.add_argument("--layer-ms", type=float, default=0.1, help="backward time of one layer, ms (default 0.1)")
    ap.add_argument("--hop-us", type=float, default=5.0, help="per-hop latency, microseconds (default 5)")
    ap.add_argument("--gbps", type=float, nargs="+", default=[25, 100, 400], help="link bandwidths, Gb/s")
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 16, 64], help="GPU counts")
    a = ap.parse_args(argv)
    if a.bucket < 1 or a.layer_ms < 0 or a.hop_us < 0 or min(a.gbps) <= 0 or min(a.ranks) < 2:
        ap.error("--bucket >= 1, --layer-ms >= 0, --hop-us >= 0, --gbps > 0 and --ranks >= 2")
    print(f"bucket {a.bucket} gradients, {a.layer_ms} ms backward per layer, {a.hop_us} us per hop\n")
    print("| model | params | buckets | link | " +
          " | ".join(f"{n} GPUs: exposed ms, one message / buckets" for n in a.ranks) + " |")
    print("|---|---|---|---|" + "---|" * len(a.ranks))
    for name, (inputs, layers, head) in MODELS.items():
        total = inputs + sum(layers) + head
        bs = buckets(inputs, layers, head, a.bucket)
        for g in a.gbps:
            cells = [f"{ring_ms(total, n, g, a.hop_us):.3f} / "
                     f"{exposed_ms(bs, len(layers), a.layer_ms, n, g, a.hop_us):.3f}" for n in a.ranks]
            print(f"| {name} | {total} | {' + '.join(str(v) for v, _ in bs)} | {g:g} Gb/s | " + " | ".join(cells) +
                  " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
