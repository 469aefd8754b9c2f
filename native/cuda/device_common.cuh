// native/cuda/device_common.cuh - device helpers shared by the CUDA kernels of one block per problem (Sinkhorn
// forward and backward): the block size, the work split over columns and rows, and exact block reductions.
// Included by .cu files only; everything has internal linkage (no relocatable device code).
#pragma once

#include <cmath>
#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::cuda {
namespace {

constexpr int kThreads = 512;  // per block: the kernel's loops and reductions assume exactly this many
constexpr int kWarps = kThreads / 32;
constexpr int kMaxGroups = 32;     // row slices per column: bounds the serial merge for very narrow problems
constexpr int kValuesPerLane = 8;  // row passes: a row gets the fewest lanes that leave <= 8 values each
constexpr double kMaxLogit = elementwise::kMaxLogit;  // the CPU's clamp of |C/eps|
constexpr float kNegInf = -INFINITY;
constexpr unsigned kFullMask = 0xffffffffu;

// Sum over aligned segments of `width` lanes (a power of two <= 32); every lane of the warp must call it.
template <typename T>
__device__ __forceinline__ T segment_sum(T v, int width) {
  for (int off = width >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(kFullMask, v, off);
  return v;
}

// Sum over the block, returned to every thread in the same order, hence bit-identical everywhere: a decision
// taken on it (the tolerance test) is block-uniform. Every thread of the block must call it.
__device__ double block_sum(double v, double* red) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(kFullMask, v, off);
  __syncthreads();  // `red` may still be read by the previous call
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < kWarps; ++w) total += red[w];
  return total;
}

// ---- marginals --------------------------------------------------------------------------------------------------

// log of a weight, in double then rounded, as detail::log_marginal does; log 0 = -inf marks a point without mass.
__device__ __forceinline__ float log_weight(const float* w, int i, int len) {
  if (!w) return static_cast<float>(-log(static_cast<double>(len)));
  const float x = w[i];
  return x > 0.f ? static_cast<float>(log(static_cast<double>(x))) : kNegInf;
}

__device__ __forceinline__ float weight(const float* w, int i, int len) {
  return w ? w[i] : static_cast<float>(1.0 / len);
}

// ---- work split -------------------------------------------------------------------------------------------------

struct Mapping {
  int cw;      // columns covered by one row slice: min(p, kThreads)
  int groups;  // row slices per column (1 when p > kThreads / 2)
  int col;     // this thread's first column in column passes
  int group;   // this thread's row slice; >= groups: idle in column passes
  int lanes;   // threads per row in row passes (power of two <= 32)
  int rows_per_warp;
  int sub;  // lane within the row's segment
  int seg;  // segment (row) within the warp
};

// The work split of a block of `Threads` threads (kThreads unless a kernel says otherwise).
template <int Threads = kThreads>
__device__ Mapping mapping_for(int p) {
  Mapping mp;
  const int t = threadIdx.x;
  mp.cw = min(p, Threads);
  mp.groups = p >= Threads ? 1 : min(Threads / p, kMaxGroups);
  mp.col = t % mp.cw;
  mp.group = t / mp.cw;
  int lanes = 1;
  while (lanes < 32 && lanes * kValuesPerLane < p) lanes <<= 1;
  mp.lanes = lanes;
  mp.rows_per_warp = 32 / lanes;
  const int lane = t & 31;
  mp.sub = lane & (lanes - 1);
  mp.seg = lane / lanes;
  return mp;
}

}  // namespace
}  // namespace inductive::cuda
