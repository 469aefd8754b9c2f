#!/usr/bin/env bash
# Builds, here with nvcc, the binaries bench/gpu/check.sh runs on a GPU machine, so that a short visit spends its
# minutes on the GPU instead of compiling: the CUDA test suite, the CLI and the two benchmarks, with Hopper code
# (sm_90 machine code plus its PTX), CPU code for any x86-64-v3 processor (the GPU machine's is not this one), no MPI
# (that machine has no Open MPI) and the core's own thread pool (no OpenMP runtime to find). The binaries land in
# .gpu-prebuilt/ (ignored by git, about 30 MiB); carry it and run `bash bench/gpu/check.sh --prebuilt .gpu-prebuilt`.
# When a binary does not load there, check.sh builds from source instead (carry .gpu-deps too: vendor_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build/gpu-prebuilt
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINDUCTIVE_CUDA=ON -DINDUCTIVE_MPI=OFF \
  -DINDUCTIVE_OPENMP=OFF -DINDUCTIVE_NATIVE_ARCH=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 \
  -DCMAKE_CUDA_ARCHITECTURES="${INDUCTIVE_CUDA_ARCH:-90}" -DINDUCTIVE_BUILD_BENCH=ON -DINDUCTIVE_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target inductive_cuda_tests inductive_cli inductive_gpu_bench \
  inductive_graphit_bench
dest=.gpu-prebuilt
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp/tests" "$dest.tmp/bin"
cp "$build/tests/inductive_cuda_tests" "$dest.tmp/tests/"
cp "$build/bin/inductive" "$build/bin/gpu_bench" "$build/bin/graphit_bench" "$dest.tmp/bin/"
strip --strip-debug "$dest.tmp"/tests/* "$dest.tmp"/bin/*
rm -rf "$dest" && mv "$dest.tmp" "$dest"
du -sh "$dest" | sed 's/^/prebuilt: /'
