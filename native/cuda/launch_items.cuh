// native/cuda/launch_items.cuh - one kernel launch that calls a per-item functor (graphit_device_ops.h,
// sinkhorn_implicit_ops.h) once for every item: the device side of the executors' `launch(count, functor)`.
// Included by .cu files only; internal linkage (no relocatable device code).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda_util.h"

namespace inductive::cuda {
namespace {

constexpr int kItemThreads = 128;

template <typename F>
__global__ void each_item(F functor, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) functor(i);
}

// functor(i) for i < count on `stream` (a grid-stride loop past 65535 blocks); a failed launch throws
// Error{kBackend} naming `what`.
template <typename F>
void launch_items(int64_t count, const F& functor, cudaStream_t stream, const char* what) {
  if (count <= 0) return;
  const int64_t blocks = (count + kItemThreads - 1) / kItemThreads;
  each_item<F><<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kItemThreads, 0, stream>>>(functor, count);
  check(cudaGetLastError(), what);
}

// An executor for the functors' passes (`pass(exec, args)`): each launch one kernel on `stream`.
struct StreamExec {
  cudaStream_t stream;
  const char* what;
  template <typename F>
  void launch(int64_t count, const F& functor) {
    launch_items(count, functor, stream, what);
  }
};

}  // namespace
}  // namespace inductive::cuda
