#!/usr/bin/env python3
"""bench/wasm_fma_probe.py - what relaxed SIMD's fused multiply-add would buy the wasm products (see wasm_fma_probe.cpp).

Compiles bench/wasm_fma_probe.cpp twice with the project's emscripten (a multiply and an add; relaxed SIMD's
f32x4.fma), rewrites the relaxed build's prototype opcode (0xfd 0xaf 0x01, what clang 14 emits) to the final
proposal's f32x4.relaxed_madd (0xfd 0x85 0x02) with wasm/relaxed_simd.mjs, the build's own checked rewrite, then runs the two under Node alternately and prints GFLOP/s. Node 20 runs
relaxed SIMD behind --experimental-wasm-relaxed-simd; Chromium has shipped it since 114.

  /usr/bin/python3 bench/wasm_fma_probe.py [--rounds 4]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def build(work, relaxed):
    name = "relaxed" if relaxed else "plain"
    out = os.path.join(work, f"{name}.js")
    cmd = ["em++", "-O3", "-std=c++17", "-msimd128", os.path.join(HERE, "wasm_fma_probe.cpp"), "-o", out,
           "-sENVIRONMENT=node", "-sMODULARIZE=1", "-sEXIT_RUNTIME=1"]
    if relaxed:
        cmd[4:4] = ["-mrelaxed-simd", "-DRELAXED"]
    done = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(os.environ, NODE_PATH=os.environ.get("NODE_PATH", "/usr/share/nodejs")))
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} failed:\n{done.stderr}")
    wasm = os.path.join(work, f"{name}.wasm")
    if relaxed:
        rewrite(wasm, out)
    return out, wasm


def rewrite(wasm, js):
    """The prototype fma's bytes to relaxed_madd's, checked: wasm/relaxed_simd.mjs, as the build rewrites the
    package's relaxed modules."""
    objdump = shutil.which("llvm-objdump-14") or shutil.which("llvm-objdump")
    if not objdump:
        fail("llvm-objdump is missing (apt-get install llvm-14): it checks the opcode rewrite")
    done = subprocess.run(["node", os.path.join(HERE, "..", "wasm", "relaxed_simd.mjs"), "--objdump", objdump,
                           "--wasm", wasm, "--js", js], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"the opcode rewrite failed:\n{done.stderr.strip()}")


def node_flags():
    """Node's flag for relaxed SIMD where it still has one (Node 20); none where it is on by default."""
    probe = subprocess.run(["node", "--experimental-wasm-relaxed-simd", "-e", "0"], capture_output=True, text=True)
    return ["--experimental-wasm-relaxed-simd"] if probe.returncode == 0 else []


def run(js, wasm, flags):
    loader = ("const fs = require('fs');"
              f"require({json.dumps(js)})({{wasmBinary: fs.readFileSync({json.dumps(wasm)}), print: console.log}});")
    done = subprocess.run(["node", *flags, "-e", loader], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"the probe ({js}) failed:\n{done.stdout}{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=4, help="alternations of the two builds (default 4)")
    args = ap.parse_args()
    if args.rounds < 1:
        fail("--rounds must be at least 1")
    if not shutil.which("em++") or not shutil.which("node"):
        fail("em++ and node are needed (scripts/setup.sh installs them)")
    with tempfile.TemporaryDirectory() as work:
        plain = build(work, False)
        relaxed = build(work, True)
        flags = node_flags()
        rows = {"mul_add": [], "relaxed_madd": []}
        for _ in range(args.rounds):
            rows["mul_add"].append(run(*plain, []))
            rows["relaxed_madd"].append(run(*relaxed, flags))
    sums = [r["checksum"] for v in rows.values() for r in v]
    if max(sums) - min(sums) > 1e-5 * abs(max(sums)):
        fail(f"the two builds' products differ beyond rounding: checksums {min(sums)} .. {max(sums)}")
    print(f"wasm SIMD128 product kernel, C = A B, 3000 x 64 by 64 x 96, GFLOP/s (medians of {args.rounds} "
          f"alternations; Node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()})\n")
    print("| block | multiply + add | relaxed_madd | ratio |")
    print("|---|---|---|---|")
    for key, label in (("gflops_4x2", "4 rows x 2 vectors (the library's wasm block)"), ("gflops_2x4", "2 rows x 4 vectors")):
        a = statistics.median(r[key] for r in rows["mul_add"])
        b = statistics.median(r[key] for r in rows["relaxed_madd"])
        print(f"| {label} | {a:.1f} | {b:.1f} | {b / a:.2f}x |")


if __name__ == "__main__":
    main()
