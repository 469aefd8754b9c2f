#!/usr/bin/env bash
# Builds the Sinkhorn benchmark and runs it against POT (and the wasm build when present); prints one table.
#
#   scripts/bench.sh            full run (a few minutes: POT at 100 iterations takes seconds per batch)
#   scripts/bench.sh --quick    one timed pass per configuration (smoke test, noisy figures)
#
# Environment: INDUCTIVE_BUILD_DIR (default build/native-release, configured with its preset; any other folder
# is configured Release with INDUCTIVE_BUILD_BENCH=ON), INDUCTIVE_JOBS (build parallelism, default 2).
# The raw JSON lines are kept in $INDUCTIVE_BUILD_DIR/bench/sinkhorn.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3  # Debian's python has numpy and POT (python3-pot); a pyenv python on PATH may not
BUILD_DIR=${INDUCTIVE_BUILD_DIR:-build/native-release}
JOBS=${INDUCTIVE_JOBS:-2}
TIMING=(--min-time 1.0 --min-repeats 3)
QUICK=
if [[ ${1:-} == --quick ]]; then TIMING=(--min-time 0 --min-repeats 1); QUICK=1; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Build quietly; show the log only when something fails.
build() { "$@" >>"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }; }
echo "bench: building in $BUILD_DIR ..." >&2
if [[ $BUILD_DIR == build/native-release ]]; then
  build cmake --preset native-release
elif [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then
  build cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINDUCTIVE_BUILD_BENCH=ON
fi
build cmake --build "$BUILD_DIR" --target inductive_sinkhorn_bench inductive_otke_bench inductive_screening_bench inductive_screening_table inductive_graphit_bench -j "$JOBS"
BENCH=$BUILD_DIR/bin/sinkhorn_bench
mkdir -p "$BUILD_DIR/bench"
results=$BUILD_DIR/bench/sinkhorn.jsonl

# What the figures belong to (STYLE.md 13: device, commit, date).
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "none")
[[ -n $(git status --porcelain 2>/dev/null | head -1) ]] && commit="$commit (+ uncommitted changes)"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || uname -m)
$PY - "$commit" "$cpu" "$(nproc)" "$(c++ --version | head -1)" >"$results" <<'EOF'
import json, sys, datetime
commit, cpu, cores, compiler = sys.argv[1:]
print(json.dumps({"meta": {
    "problem": "batch 64 x (n ~ U[200, 1000], padded to 1000) x p 64, uniform costs in [0, 1), eps 0.5, "
               "fixed iteration count",
    "device": f"{cpu}, {cores} cores", "commit": commit, "compiler": compiler,
    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}}))
EOF

# Ours: the best kernel set first (it also writes the batch for the baselines), then each other set pinned.
echo "bench: inductive (native) ..." >&2
"$BENCH" --dump "$work" "${TIMING[@]}" | tee -a "$results" >"$work/best.jsonl"
best=$($PY -c 'import json,sys; print(next(json.loads(l)["simd"] for l in open(sys.argv[1]) if "simd" in l))' \
  "$work/best.jsonl")
for simd in scalar sse2 avx2 avx512; do
  [[ $simd == "$best" ]] && continue
  echo "bench: inductive (native, $simd) ..." >&2
  INDUCTIVE_SIMD=$simd "$BENCH" "${TIMING[@]}" >>"$results"
done

# POT, one problem at a time, single-threaded.
echo "bench: POT ..." >&2
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  $PY bench/pot_sinkhorn_bench.py "$work" "${TIMING[@]}" >>"$results"

# The wasm build, when a colleague's runner and the module exist.
if [[ -f bench/wasm_sinkhorn_bench.mjs && -f web/wasm/inductive.wasm ]] && command -v node >/dev/null; then
  echo "bench: wasm ..." >&2
  if node bench/wasm_sinkhorn_bench.mjs "$work" "${TIMING[@]}" >"$work/wasm.out"; then
    cat "$work/wasm.out" >>"$results"  # its JSON lines join the table; any other line is ignored there
  else
    echo "{\"skip\": \"wasm: bench/wasm_sinkhorn_bench.mjs failed (exit $?)\"}" >>"$results"
  fi
else
  echo '{"skip": "wasm: bench/wasm_sinkhorn_bench.mjs or web/wasm/inductive.wasm (or node) missing"}' >>"$results"
fi

echo
$PY bench/bench_table.py "$results"

# OTKE throughput and training-step memory (bench/otke_bench.cpp prints its own table).
echo
if [[ -x "$(dirname "$BENCH")/otke_bench" ]]; then
  "$(dirname "$BENCH")/otke_bench"
  # The same configurations next to a PyTorch CPU baseline measured now, interleaved (bench/otke_vs_torch.py).
  echo
  $PY bench/otke_vs_torch.py --bench "$(dirname "$BENCH")/otke_bench" ${QUICK:+--quick}
  # The work per sequence and the fraction of the GEMM peak (measured in the same process).
  echo
  "$(dirname "$BENCH")/otke_bench" --roofline
  # The library's products against Eigen's GEMM on the models' shapes (core/src/simd/small_gemm.h).
  echo
  "$(dirname "$BENCH")/otke_bench" --products
fi

# Safe screening (digits 9-vs-rest), when the shared data is present.
digits=../shared/data/sklearn-bundled/digits.csv.gz
echo
if [[ -f $digits && -x "$(dirname "$BENCH")/screening_bench" ]]; then
  "$(dirname "$BENCH")/screening_bench" "$digits"
else
  echo "bench: screening skipped ($digits absent)"
fi

# The screening evidence table (digits, a9a, MNIST, Fashion-MNIST, a9a path, interval regression; datasets that
# are absent are left out; interval regression is synthetic). --quick: digits + a9a, fewer repetitions.
echo
if [[ -x "$(dirname "$BENCH")/screening_table" ]]; then
  "$(dirname "$BENCH")/screening_table" ../shared/data ${QUICK:+--quick}
fi

# GraphiT throughput (synthetic molecule-like graphs; no data needed).
echo
if [[ -x "$(dirname "$BENCH")/graphit_bench" ]]; then
  "$(dirname "$BENCH")/graphit_bench"
  # The same graphs through a PyTorch GraphiT, interleaved (bench/graphit_vs_torch.py), and the roofline.
  echo
  $PY bench/graphit_vs_torch.py --bench "$(dirname "$BENCH")/graphit_bench" ${QUICK:+--budget 1}
  echo
  "$(dirname "$BENCH")/graphit_bench" --roofline
  # 1 vs 2 threads next to a busy process (sharing the cores, then holding one whole), OpenMP and the pool
  # (bench/thread_contention.py).
  echo
  $PY bench/thread_contention.py --bench "$(dirname "$BENCH")/graphit_bench"
fi

# The GraphiT and OTKE benchmarks compiled to wasm and run under Node (native vs wasm on the same code).
echo
if command -v emcmake > /dev/null && command -v node > /dev/null; then
  export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
  if [[ ! -f build/wasm-bench/CMakeCache.txt ]]; then
    cmake --preset wasm-release -B build/wasm-bench -DINDUCTIVE_BUILD_BENCH=ON -DINDUCTIVE_BUILD_TESTS=OFF > /dev/null
  fi
  cmake --build build/wasm-bench --target inductive_graphit_bench inductive_otke_bench -j "$JOBS" > /dev/null
  node build/wasm-bench/bin/graphit_bench.cjs
  echo
  node build/wasm-bench/bin/otke_bench.cjs
else
  echo "bench: wasm GraphiT skipped (no emscripten or node)"
fi
