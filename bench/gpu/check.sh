#!/usr/bin/env bash
# The GPU check: one short visit to a GPU machine (one H100/H200, 16 cores, nvcc, CMake, ninja, compute-sanitizer,
# a python3 with CUDA PyTorch; none of our Debian packages, no registry). Run here first:
#
#   bench/gpu/vendor_deps.sh          # copies Eigen, xsimd, nlohmann-json, CLI11, GoogleTest sources to .gpu-deps/
#
# then, on the GPU machine, from the repository root with .gpu-deps carried along:
#
#   bash bench/gpu/check.sh [--out DIR] [--skip-memcheck] [--skip-bench] [--prebuilt DIR] [--budget SECONDS]
#
# --prebuilt DIR uses a build made here with nvcc (bench/gpu/prebuild.sh: the CUDA tests, the CLI and the benchmarks,
# CPU code for any x86-64-v3 processor, sm_90 code): when its binaries load there, the visit spends no time compiling;
# when one does not (a missing library), the check builds from source as without the flag.
# --budget SECONDS bounds the whole check (default 3600): each stage's time limit is cut to what is left, and a
# stage that cannot start with 20 s left is reported as skipped. The stages run most wanted first.
#
# It builds only what the check needs (the CUDA tests, the CLI, the GPU benchmark) with every core, runs the CUDA
# test suite, runs it again under compute-sanitizer memcheck, then the GPU benchmarks next to PyTorch on the same
# GPU (bench/gpu/torch_otke.py, bench/torch_graphit.py --device cuda) and the 1-thread CPU figure, and times a part
# of an NCI1 `graphit cv` cell (bench/gpu/nci1_cell.py). Logs and JSON land in --out (default build/gpu/out);
# the summary table is printed last. Every stage runs even when an earlier one failed; the exit status is that of
# the first failing stage.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT_DIR=build/gpu/out
MEMCHECK=1
BENCH=1
PREBUILT=
BUDGET=3600
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) OUT_DIR=$2; shift 2 ;;
    --skip-memcheck) MEMCHECK=0; shift ;;
    --skip-bench) BENCH=0; shift ;;
    --prebuilt) PREBUILT=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT_DIR"
BUILD=${INDUCTIVE_GPU_BUILD:-build/gpu}
status=0
summary=()
t_start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - t_start) )); }
stage() {  # stage NAME COMMAND...: runs, logs to $OUT_DIR/NAME.log, records pass/fail and seconds
  local name=$1; shift
  local t0; t0=$(date +%s)
  "$@" >"$OUT_DIR/$name.log" 2>&1
  local rc=$?
  local secs=$(( $(date +%s) - t0 ))
  if [[ $rc -eq 0 ]]; then summary+=("ok    $name (${secs}s)"); else
    summary+=("FAIL  $name (${secs}s, exit $rc): see $OUT_DIR/$name.log"); [[ $status -eq 0 ]] && status=$rc
    tail -n 40 "$OUT_DIR/$name.log" | sed "s/^/[$name] /"
  fi
  echo "--- $name: exit $rc in ${secs}s" >&2
  return $rc
}
timed() {  # timed NAME SECONDS COMMAND...: a stage under `timeout`, its limit cut to the budget that is left
  local name=$1 limit=$2; shift 2
  local rest; rest=$(( $(left) - 10 ))
  if (( rest < 20 )); then summary+=("skip  $name (budget spent)"); echo "--- $name: skipped" >&2; return 0; fi
  (( limit > rest )) && limit=$rest
  stage "$name" timeout -k 5 "$limit" "$@"
}

{
  echo "date: $(date -u +%FT%TZ)"; echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  nvcc --version | tail -1; c++ --version | head -1; cmake --version | head -1; ninja --version
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' 2>&1
  nproc; grep -m1 'model name' /proc/cpuinfo
} >"$OUT_DIR/env.txt" 2>&1
cat "$OUT_DIR/env.txt"

[[ -f .gpu-deps/include/Eigen/Core ]] || { echo "error: .gpu-deps missing: run bench/gpu/vendor_deps.sh here and carry .gpu-deps" >&2; exit 2; }
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
arch=${arch:-90}
loads() {  # loads DIR: every binary the check runs is there and finds its libraries
  local b
  for b in tests/inductive_cuda_tests bin/inductive bin/gpu_bench bin/graphit_bench; do
    [[ -x $1/$b ]] || { echo "prebuilt: $1/$b is missing"; return 1; }
    if ldd "$1/$b" | grep -q 'not found'; then echo "prebuilt: $b:"; ldd "$1/$b" | grep 'not found'; return 1; fi
  done
}
# The CUDA libraries a prebuilt binary links (cudart, cuBLAS): the toolkit's, else the ones PyTorch's wheels bring.
if [[ -n $PREBUILT ]] && ! loads "$PREBUILT" >/dev/null; then
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
  for d in "$nv"/*/lib "$nv"/cu13/lib; do [[ -d $d ]] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d; done
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >>"$OUT_DIR/env.txt"
fi
if [[ -n $PREBUILT ]] && loads "$PREBUILT" >>"$OUT_DIR/env.txt"; then
  BUILD=$PREBUILT
  echo "build: prebuilt $BUILD" | tee -a "$OUT_DIR/env.txt"
else
  stage configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINDUCTIVE_CUDA=ON \
    -DINDUCTIVE_VENDORED_DEPS="$PWD/.gpu-deps" -DINDUCTIVE_BUILD_BENCH=ON -DINDUCTIVE_BUILD_TESTS=ON \
    -DINDUCTIVE_MPI=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch"
  stage build cmake --build "$BUILD" -j "$(nproc)" --target inductive_cuda_tests inductive_cli inductive_gpu_bench \
    inductive_graphit_bench
fi
# NCCL for the 1-GPU data-parallel test: the system's (found through the loader's path or the CUDA toolkit's lib64,
# which the build's RUNPATH names), else the one PyTorch's wheels bring (nvidia-nccl-cu*).
if [[ -z "${INDUCTIVE_NCCL_LIBRARY:-}" ]] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 ' \
    && [[ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]]; then
  nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' \
    2>/dev/null)
  [[ -n "$nccl" && -e "$nccl" ]] && export INDUCTIVE_NCCL_LIBRARY=$nccl
fi
echo "nccl: ${INDUCTIVE_NCCL_LIBRARY:-libnccl.so.2 as the dynamic loader finds it}" | tee -a "$OUT_DIR/env.txt"
# Every stage that runs our code on the GPU has a time limit: a hung kernel must not eat a short visit. Most wanted
# first: the tests, the benchmarks, the CLI as users run it, PyTorch beside, NCI1, memcheck, the profile.
timed cuda_tests 180 "$BUILD/tests/inductive_cuda_tests" --gtest_output=xml:"$OUT_DIR/cuda_tests.xml"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$OUT_DIR/cuda_tests.log" | head -30
if [[ $BENCH -eq 1 ]]; then
  timed gpu_bench 180 "$BUILD/bin/gpu_bench" --json "$OUT_DIR/gpu_bench.jsonl"
  cat "$OUT_DIR/gpu_bench.log"
fi
timed cli_parity 150 python3 bench/gpu/cli_parity.py "$BUILD/bin/inductive" "$OUT_DIR/cli" --epochs 20
tail -n 25 "$OUT_DIR/cli_parity.log"
if [[ $BENCH -eq 1 ]]; then
  timed torch_bench 120 python3 bench/gpu/torch_otke.py --device cuda --json "$OUT_DIR/torch_otke.jsonl"
  # GraphiT (a) and (b) in PyTorch on the same GPU: the graphs gpu_bench times (bench/graphit_workload.h).
  stage graphit_export "$BUILD/bin/graphit_bench" --export "$OUT_DIR/graphit-workload"
  rm -f "$OUT_DIR/torch_graphit.jsonl"
  timed torch_graphit 120 bash -c "for w in a b; do python3 bench/torch_graphit.py --device cuda --budget 2 \
    --workload '$OUT_DIR/graphit-workload/'\$w --json '$OUT_DIR/torch_graphit.jsonl' || exit 1; done"
  stage table python3 bench/gpu/table.py "$OUT_DIR/gpu_bench.jsonl" "$OUT_DIR/torch_otke.jsonl" \
    "$OUT_DIR/torch_graphit.jsonl"
  cat "$OUT_DIR/table.log"
  # The NCI1 cell target (10 folds x 300 epochs under 10 minutes): 15 epochs of fold 1, extrapolated.
  timed nci1_cell 120 python3 bench/gpu/nci1_cell.py "$BUILD/bin/inductive" "$OUT_DIR/nci1" --epochs 15
  cat "$OUT_DIR/nci1_cell.log"
fi
if [[ $MEMCHECK -eq 1 ]]; then
  # memcheck slows kernels 10-100x: the suite without the benchmark-shape and out-of-memory tests, time-limited;
  # without the NCCL test too (NCCL's own kernels and memory pools are not ours to check; ours ran in the others).
  timed memcheck "${MEMCHECK_SECONDS:-150}" compute-sanitizer --tool memcheck --error-exitcode 3 \
    --leak-check full "$BUILD/tests/inductive_cuda_tests" --gtest_filter='-*BenchmarkShape*:*OutOfDeviceMemory*:*Nccl*'
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT_DIR/memcheck.log" | tail -n 5
fi
# Where a resident k512p64 training step spends its time, per kernel (Nsight Compute, clocks left alone).
if [[ $BENCH -eq 1 ]] && command -v ncu >/dev/null; then
  timed profile 120 ncu --clock-control none --profile-from-start off --print-summary per-kernel \
    "$BUILD/bin/gpu_bench" --profile k512p64
  grep -E "^  [a-zA-Z_].*\(|Duration|^    [a-z_]+.*[0-9]" "$OUT_DIR/profile.log" | head -60
fi
echo
echo "GPU check summary ($(( $(date +%s) - t_start ))s):"
printf '  %s\n' "${summary[@]}"
exit $status
