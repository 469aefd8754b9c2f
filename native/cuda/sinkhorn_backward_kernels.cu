// Batched log-domain Sinkhorn, backward pass through the unrolled iterations (contract in sinkhorn_kernels.h).
//
// The CPU's recursion (core/src/ot/sinkhorn_backward.cpp), one thread block per problem:
//   W = dP * P:  dK = W, dF = W 1 (row sums), dG = W^T 1 (column sums); then for t = T..1, with G^t = lb - cl^t,
//   F^{t-1} = la - rl^{t-1} (0 for t = 1) from the tape:
//     R pass  R_ij = exp(G_j + K_ij - rl_i):       dG_j -= sum_i dF_i R_ij,  dK_ij -= dF_i R_ij
//     Q pass  Q_ij = exp(F^{t-1}_i + K_ij - cl_j):  dF_i  = -sum_j Q_ij dG_j, dK_ij -= Q_ij dG_j;  then dG = 0
//   dC = scale dK (0 where the logit was clamped).
// The R pass reduces over rows, so threads own columns (the forward's column split, row slices merged in shared
// memory); the Q pass reduces over columns, so segments of a warp own rows (the forward's row split). Each pass
// reads the similarities, not stored logits: K is recomputed exactly as the forward formed it (elementwise::logit),
// and dK accumulates in the output buffer. No atomics: the result is the same on every run.
#include <cmath>
#include <cstdint>

#include "cuda_util.h"
#include "device_common.cuh"
#include "inductive/elementwise.h"
#include "inductive/error.h"
#include "sinkhorn_kernels.h"

namespace inductive::cuda {
namespace {

// Twice the forward's block: the kernel needs 54 registers a thread (no spills at the 64 that 1024 threads
// leave), and with one set per block and fewer sets than SMs, more threads per set is the only way to more
// memory operations in flight.
constexpr int kBackThreads = 1024;
constexpr int kBackWarps = kBackThreads / 32;

struct BackwardParams {
  const float* cost;       // [batch, n_max, p_max]: what the forward pass read
  const float* plan;       // [batch, n_max, p_max]
  const float* grad_plan;  // [batch, n_max, p_max]
  float* grad_cost;        // [batch, n_max, p_max]: dK during the recursion, dC at the end
  const float* tape;       // [batch, iters, p_max + n_max]
  const int32_t* n;        // [batch] or nullptr
  const int32_t* p;
  const float* a;  // [batch, n_max] or nullptr (uniform)
  const float* b;
  int n_max, p_max, iters;
  double scale;  // -1/eps, or +1/eps for similarities
};

__device__ __forceinline__ float logit_at(const BackwardParams& P, const float* C, int64_t e) {
  return elementwise::logit(P.scale, C[e]);
}

// Column sums of dK over rows, merged across the row slices: out_j (op)= sum. `part` holds kBackThreads floats.
template <bool kSubtract, typename Term>
__device__ void column_pass(int n, int p, const Mapping& mp, float* part, float* out, Term term) {
  const int t = threadIdx.x;
  if (mp.group < mp.groups) {
    for (int j = mp.col; j < p; j += mp.cw) {
      float acc = 0.f;
      for (int i = mp.group; i < n; i += mp.groups) acc += term(i, j);
      if (mp.groups == 1)
        out[j] = kSubtract ? out[j] - acc : acc;
      else
        part[t] = acc;
    }
  }
  if (mp.groups > 1) {  // block-uniform
    __syncthreads();
    if (t < p) {
      float acc = 0.f;
      for (int g = 0; g < mp.groups; ++g) acc += part[g * mp.cw + t];
      out[t] = kSubtract ? out[t] - acc : acc;
    }
  }
}

__global__ void __launch_bounds__(kBackThreads, 1) sinkhorn_backward_kernel(const BackwardParams P) {
  extern __shared__ float vectors[];  // dF, Fprev, la: n_max each; dG, G, lb: p_max each
  __shared__ float part[kBackThreads];
  const int bi = blockIdx.x, t = threadIdx.x;
  const int n_max = P.n_max, p_max = P.p_max, ld = p_max;
  const int n = P.n ? P.n[bi] : n_max;
  const int p = P.p ? P.p[bi] : p_max;
  const int64_t mat = static_cast<int64_t>(bi) * n_max * p_max;
  const float* C = P.cost + mat;
  const float* plan = P.plan + mat;
  const float* dplan = P.grad_plan + mat;
  float* dK = P.grad_cost + mat;
  if (n < 1 || n > n_max || p < 1 || p > p_max) {  // not validated on the device: no gradient, nothing read
    for (int64_t e = t; e < static_cast<int64_t>(n_max) * p_max; e += kBackThreads) dK[e] = 0.f;
    return;
  }
  float* dF = vectors;
  float* Fprev = dF + n_max;
  float* la = Fprev + n_max;
  float* dG = la + n_max;
  float* G = dG + p_max;
  float* lb = G + p_max;
  const float* a = P.a ? P.a + static_cast<int64_t>(bi) * n_max : nullptr;
  const float* b = P.b ? P.b + static_cast<int64_t>(bi) * p_max : nullptr;
  for (int i = t; i < n; i += kBackThreads) la[i] = log_weight(a, i, n);
  for (int j = t; j < p; j += kBackThreads) lb[j] = log_weight(b, j, p);
  const Mapping mp = mapping_for<kBackThreads>(p);
  const int warp = t >> 5;

  // W = dP * P (0 where P = 0: zero-mass points carry no gradient even where dL/dP is infinite); dF = W 1.
  for (int base = warp * mp.rows_per_warp; base < n; base += kBackWarps * mp.rows_per_warp) {
    const int i = base + mp.seg;
    float acc = 0.f;
    if (i < n)
      for (int j = mp.sub; j < p; j += mp.lanes) {
        const int64_t e = static_cast<int64_t>(i) * ld + j;
        const float w = plan[e] == 0.f ? 0.f : dplan[e] * plan[e];
        dK[e] = w;
        acc += w;
      }
    acc = segment_sum<float>(acc, mp.lanes);
    if (i < n && mp.sub == 0) dF[i] = acc;
  }
  __syncthreads();
  column_pass<false>(n, p, mp, part, dG, [&](int i, int j) { return dK[static_cast<int64_t>(i) * ld + j]; });
  __syncthreads();

  const int64_t stride = p_max + n_max;
  const float* tape = P.tape + static_cast<int64_t>(bi) * P.iters * stride;
  for (int it = P.iters; it >= 1; --it) {
    const float* cl = tape + (it - 1) * stride;
    const float* rl = cl + p_max;
    for (int j = t; j < p; j += kBackThreads) G[j] = lb[j] - cl[j];
    for (int i = t; i < n; i += kBackThreads) Fprev[i] = it > 1 ? la[i] - (tape + (it - 2) * stride + p_max)[i] : 0.f;
    __syncthreads();
    // Through F^t = la - rl^t: R pass over columns.
    column_pass<true>(n, p, mp, part, dG, [&](int i, int j) {
      const float df = dF[i];
      if (df == 0.f) return 0.f;
      const int64_t e = static_cast<int64_t>(i) * ld + j;
      const float d = df * expf(G[j] + logit_at(P, C, e) - rl[i]);
      dK[e] -= d;
      return d;
    });
    __syncthreads();
    // Through G^t = lb - cl^t: Q pass over rows.
    for (int base = warp * mp.rows_per_warp; base < n; base += kBackWarps * mp.rows_per_warp) {
      const int i = base + mp.seg;
      float acc = 0.f;
      if (i < n)
        for (int j = mp.sub; j < p; j += mp.lanes) {
          const int64_t e = static_cast<int64_t>(i) * ld + j;
          const float d = dG[j] * expf(Fprev[i] + logit_at(P, C, e) - cl[j]);
          dK[e] -= d;
          acc += d;
        }
      acc = segment_sum<float>(acc, mp.lanes);
      if (i < n && mp.sub == 0) dF[i] = -acc;
    }
    __syncthreads();
    for (int j = t; j < p; j += kBackThreads) dG[j] = 0.f;
    __syncthreads();
  }

  // dC = scale dK; clamped logits have derivative 0; padding (columns >= p, rows >= n) is 0.
  for (int64_t e = t; e < static_cast<int64_t>(n_max) * p_max; e += kBackThreads) {
    const int i = static_cast<int>(e / p_max), j = static_cast<int>(e % p_max);
    if (i >= n || j >= p) {
      dK[e] = 0.f;
    } else {
      dK[e] = elementwise::logit_clamped(P.scale, C[e]) ? 0.f : static_cast<float>(P.scale * dK[e]);
    }
  }
}

}  // namespace

void sinkhorn_log_backward_device(const SinkhornProblem<float>& pr, const SinkhornOptions& o, const float* tape,
                                  const float* plan, const float* grad_plan, float* grad_cost, cudaStream_t stream) {
  o.validate();
  INDUCTIVE_CHECK(pr.batch >= 1 && pr.n_max >= 1 && pr.p_max >= 1, ErrorCode::kInvalidArgument,
                  "sinkhorn backward (cuda): empty batch or point set: batch ", pr.batch, ", n ", pr.n_max, ", p ",
                  pr.p_max);
  INDUCTIVE_CHECK(o.tol == 0, ErrorCode::kInvalidArgument,
                  "sinkhorn backward (cuda): needs a fixed number of iterations (tol = 0), got tol = ", o.tol);
  INDUCTIVE_CHECK(pr.cost && tape && plan && grad_plan && grad_cost, ErrorCode::kInvalidArgument,
                  "sinkhorn backward (cuda): cost, tape, plan, grad_plan and grad_cost must all be given");
  const size_t shared = (3 * static_cast<size_t>(pr.n_max) + 3 * static_cast<size_t>(pr.p_max)) * sizeof(float);
  int device = 0, optin = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  cudaFuncAttributes attr{};
  check(cudaFuncGetAttributes(&attr, sinkhorn_backward_kernel), "cudaFuncGetAttributes");
  const size_t room = static_cast<size_t>(optin) > attr.sharedSizeBytes ? optin - attr.sharedSizeBytes : 0;
  INDUCTIVE_CHECK(shared <= room, ErrorCode::kBackend, "sinkhorn backward (cuda): sets of up to ", pr.n_max,
                  " elements need ", shared, " bytes of shared memory per block; this device allows ", room,
                  " (use the CPU backend for sets this long)");
  check(cudaFuncSetAttribute(sinkhorn_backward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(room)),
        "cudaFuncSetAttribute");
  BackwardParams P{};
  P.cost = pr.cost;
  P.plan = plan;
  P.grad_plan = grad_plan;
  P.grad_cost = grad_cost;
  P.tape = tape;
  P.n = pr.n;
  P.p = pr.p;
  P.a = pr.a;
  P.b = pr.b;
  P.n_max = pr.n_max;
  P.p_max = pr.p_max;
  P.iters = o.max_iter;
  P.scale = (o.similarity ? 1.0 : -1.0) / o.eps;
  sinkhorn_backward_kernel<<<pr.batch, kBackThreads, shared, stream>>>(P);
  check(cudaGetLastError(), "sinkhorn backward kernel launch");
}

}  // namespace inductive::cuda
