// Batched, masked log-domain Sinkhorn: one thread block per problem (contract in sinkhorn_kernels.h).
//
// Why one block per problem: for the shapes we serve (batch 64, n ~ 1000, p 64..512) each block owns 64k-512k
// logits that stay in L2 across iterations, and keeping the whole loop inside one kernel costs no launch and no
// host round trip per iteration. The tolerance test is a block reduction, so each problem stops on its own, at
// the same iteration as the CPU, with no host synchronisation at all. The price: SMs idle when batch is small.
//
// Scaled potentials F = f/eps, G = g/eps; logits K = clamp(-C/eps) live in the plan buffer (as on the CPU). Per
// iteration, in POT's order:
//   columns  cl_j = LSE_i (F_i + K_ij)         threads over columns, so a warp reads consecutive floats of a row;
//                                              narrow problems split the rows into `groups` slices per column,
//                                              merged through shared memory
//   rows     F_i = log a_i - LSE_j (G_j + K_ij) `lanes` threads of one warp per row, merged by shuffles
// Every LSE is single-pass (running max; the sum is rescaled when the max grows) and skips -inf terms, so
// zero-weight points give -inf potentials and 0 plan entries, never NaN. The operands are added in the CPU's
// order (F + K, G + K, (G + K) - max) so both sides exponentiate the same floats.
#include "sinkhorn_kernels.h"

#include <cmath>
#include <cstdint>

#include "cuda_util.h"
#include "device_common.cuh"
#include "inductive/error.h"

namespace inductive::cuda {
namespace {

struct Params {
  const float* cost;  // [batch, n_max, p_max]; may alias `logits`
  float* logits;      // [batch, n_max, p_max]: K during the iterations, the plan at the end
  const int32_t* n;   // [batch] or nullptr
  const int32_t* p;
  const float* a;  // [batch, n_max] or nullptr (uniform)
  const float* b;
  float* f;  // outputs, each optional
  float* g;
  int32_t* n_iter;
  float* marginal_err;
  uint8_t* converged;
  float* cost_value;
  float* workspace;  // [batch, 2 n_max + 3 p_max] when the vectors are not in shared memory
  float* tape;       // [batch, max_iter, p_max + n_max] column then row LSEs per iteration, or nullptr
  int n_max, p_max, max_iter;
  double eps, scale, tol;  // scale = -1/eps (or +1/eps for similarities), computed like the CPU
  bool shared_vectors;
};

// ---- running log-sum-exp ----------------------------------------------------------------------------------------

// Adds x to the running pair (m, s) = (max, sum of exp(v - max)). One exp per value: exp(-|x - m|) rescales
// whichever side is smaller. -inf adds nothing and must be skipped, since -inf - (-inf) is NaN.
__device__ __forceinline__ void lse_add(float& m, float& s, float x) {
  if (x == kNegInf) return;
  const float d = x - m;  // +inf while m is still -inf: e = 0, so s becomes 1
  const float e = expf(-fabsf(d));
  if (d > 0.f) {
    s = fmaf(s, e, 1.f);
    m = x;
  } else {
    s += e;
  }
}

// Merges (m2, s2) into (m, s). Symmetric to the last bit (both orders compute fma(s_small, e, s_big)), so the
// lanes of a butterfly all end with the same value.
__device__ __forceinline__ void lse_merge(float& m, float& s, float m2, float s2) {
  if (m2 == kNegInf) return;
  if (m == kNegInf) {
    m = m2;
    s = s2;
    return;
  }
  const float d = m2 - m;
  const float e = expf(-fabsf(d));
  if (d > 0.f) {
    s = fmaf(s, e, s2);
    m = m2;
  } else {
    s = fmaf(s2, e, s);
  }
}

// s is >= 1 once any finite value was added, 0 when none was: the LSE of nothing (or of only -inf) is -inf.
__device__ __forceinline__ float lse_value(float m, float s) { return s > 0.f ? m + logf(s) : kNegInf; }

// Butterfly over aligned segments of `width` lanes (a power of two <= 32). Every lane of the warp must call it.
__device__ __forceinline__ void segment_merge(float& m, float& s, int width) {
  for (int off = width >> 1; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(kFullMask, m, off);
    const float s2 = __shfl_xor_sync(kFullMask, s, off);
    lse_merge(m, s, m2, s2);
  }
}

// The per-problem vectors, in shared memory or in this block's slice of the workspace.
struct Vectors {
  float* F;   // [n_max] scaled potentials
  float* G;   // [p_max]
  float* la;  // [n_max] log a
  float* lb;  // [p_max] log b
  float* cl;  // [p_max] column LSEs of the current iteration
};

__device__ Vectors vectors_for(const Params& P, float* shared) {
  const int64_t per_problem = 2 * static_cast<int64_t>(P.n_max) + 3 * static_cast<int64_t>(P.p_max);
  float* base = P.shared_vectors ? shared : P.workspace + static_cast<int64_t>(blockIdx.x) * per_problem;
  Vectors v;
  v.F = base;
  v.G = v.F + P.n_max;
  v.la = v.G + P.p_max;
  v.lb = v.la + P.n_max;
  v.cl = v.lb + P.p_max;
  return v;
}

// ---- passes -----------------------------------------------------------------------------------------------------

// cl_j = LSE_i (F_i + K_ij) for j < p. Thread (group, col) scans rows group, group + groups, ... of columns col,
// col + cw, ...; with several groups the slices meet in shared memory and thread j merges column j.
__device__ void column_lse(const float* K, int ld, int n, int p, const float* F, float* cl, const Mapping& mp,
                           float* part_m, float* part_s) {
  const int t = threadIdx.x;
  if (mp.group < mp.groups) {
    const int64_t step = static_cast<int64_t>(mp.groups) * ld;
    for (int j = mp.col; j < p; j += mp.cw) {
      // Two independent chains: each lse_add waits on the previous exp, so one chain alone is latency-bound.
      float m0 = kNegInf, s0 = 0.f, m1 = kNegInf, s1 = 0.f;
      const float* k = K + static_cast<int64_t>(mp.group) * ld + j;
      int i = mp.group;
      for (; i + mp.groups < n; i += 2 * mp.groups, k += 2 * step) {
        lse_add(m0, s0, F[i] + k[0]);
        lse_add(m1, s1, F[i + mp.groups] + k[step]);
      }
      if (i < n) lse_add(m0, s0, F[i] + k[0]);
      lse_merge(m0, s0, m1, s1);
      if (mp.groups == 1) {
        cl[j] = lse_value(m0, s0);
      } else {
        part_m[t] = m0;  // t == group * cw + col: slice `group` of column `col`
        part_s[t] = s0;
      }
    }
  }
  if (mp.groups > 1) {  // block-uniform
    __syncthreads();
    if (t < p) {
      float m = kNegInf, s = 0.f;
      for (int g = 0; g < mp.groups; ++g) lse_merge(m, s, part_m[g * mp.cw + t], part_s[g * mp.cw + t]);
      cl[t] = lse_value(m, s);
    }
  }
}

// F_i = log a_i - LSE_j (G_j + K_ij) for i < n.
// `rl` (optional) receives the row LSEs, for the backward pass.
__device__ void row_update(const float* K, int ld, int n, int p, const float* G, const float* la, float* F,
                           const Mapping& mp, float* rl) {
  const int warp = threadIdx.x >> 5;
  // The trip count depends only on the warp, so all 32 lanes reach every shuffle.
  for (int base = warp * mp.rows_per_warp; base < n; base += kWarps * mp.rows_per_warp) {
    const int i = base + mp.seg;
    float m = kNegInf, s = 0.f;
    if (i < n) {
      const float* k = K + static_cast<int64_t>(i) * ld;
      for (int j = mp.sub; j < p; j += mp.lanes) lse_add(m, s, G[j] + k[j]);
    }
    segment_merge(m, s, mp.lanes);
    if (i < n && mp.sub == 0) {
      const float l = lse_value(m, s);
      F[i] = la[i] - l;
      if (rl) rl[i] = l;
    }
  }
}

// Writes the plan rows over K as P_i = a_i softmax_j (G_j + K_ij), like the CPU's plan_row: equal to
// exp(F_i + G_j + K_ij), but a row still sums to a_i when |K| ~ 1e12 (tiny eps), where F + G + K formed in float
// loses the log-sum entirely. F_i is recomputed from the same LSE (= the last update's value up to rounding). Adds
// this thread's share of the row terms of the marginal error, of sum_i F_i r_i and of the plan mass.
__device__ void plan_rows(float* K, int ld, int n, int p, float* F, const float* G, const float* la, const float* a,
                          const Mapping& mp, double& err, double& value, double& mass) {
  const int warp = threadIdx.x >> 5;
  for (int base = warp * mp.rows_per_warp; base < n; base += kWarps * mp.rows_per_warp) {
    const int i = base + mp.seg;
    const bool row = i < n;
    const float w = row ? weight(a, i, n) : 0.f;
    float* k = K + static_cast<int64_t>(row ? i : 0) * ld;
    float m = kNegInf, s = 0.f;
    if (w > 0.f)
      for (int j = mp.sub; j < p; j += mp.lanes) lse_add(m, s, G[j] + k[j]);
    segment_merge(m, s, mp.lanes);  // every lane of the segment now holds the row's (max, sum)
    double rs = 0;                  // double, like the CPU's row sum
    if (row) {
      if (w > 0.f && m != kNegInf) {
        const float scale = w / s;
        for (int j = mp.sub; j < p; j += mp.lanes) {
          const float v = scale * expf((G[j] + k[j]) - m);
          k[j] = v;
          rs += v;
        }
      } else {
        for (int j = mp.sub; j < p; j += mp.lanes) k[j] = 0.f;  // a_i = 0: no mass leaves this point
      }
    }
    rs = segment_sum<double>(rs, mp.lanes);
    if (row && mp.sub == 0) {
      if (w > 0.f) F[i] = la[i] - lse_value(m, s);
      err += fabs(rs - static_cast<double>(w));
      if (rs > 0) value += static_cast<double>(F[i]) * rs;
      mass += rs;
    }
  }
}

__device__ __forceinline__ void add_column(double colsum, int j, int p, const float* G, const float* b, double& err,
                                           double& value) {
  err += fabs(colsum - static_cast<double>(weight(b, j, p)));
  if (colsum > 0) value += static_cast<double>(G[j]) * colsum;
}

// Column terms of the marginal error and of the cost, from the plan (summed in double like the CPU).
__device__ void plan_columns(const float* P, int ld, int n, int p, const float* G, const float* b, const Mapping& mp,
                             double* part, double& err, double& value) {
  const int t = threadIdx.x;
  if (mp.group < mp.groups) {
    const int64_t step = static_cast<int64_t>(mp.groups) * ld;
    for (int j = mp.col; j < p; j += mp.cw) {
      double s = 0;
      const float* q = P + static_cast<int64_t>(mp.group) * ld + j;
      for (int i = mp.group; i < n; i += mp.groups, q += step) s += *q;
      if (mp.groups == 1)
        add_column(s, j, p, G, b, err, value);
      else
        part[t] = s;
    }
  }
  if (mp.groups > 1) {  // block-uniform
    __syncthreads();
    if (t < p) {
      double s = 0;
      for (int g = 0; g < mp.groups; ++g) s += part[g * mp.cw + t];
      add_column(s, t, p, G, b, err, value);
    }
  }
}

// A length outside its range (device callers are not validated): touch nothing outside the problem's own
// padded block, report it through n_iter = -1 and marginal_err = +inf.
__device__ void reject_problem(const Params& P, float* K, float* f, float* g) {
  const int t = threadIdx.x;
  for (int64_t e = t; e < static_cast<int64_t>(P.n_max) * P.p_max; e += kThreads) K[e] = 0.f;
  if (f)
    for (int i = t; i < P.n_max; i += kThreads) f[i] = 0.f;
  if (g)
    for (int j = t; j < P.p_max; j += kThreads) g[j] = 0.f;
  if (t == 0) {
    const int bi = blockIdx.x;
    if (P.n_iter) P.n_iter[bi] = -1;
    if (P.marginal_err) P.marginal_err[bi] = INFINITY;
    if (P.converged) P.converged[bi] = 0;
    if (P.cost_value) P.cost_value[bi] = 0.f;
  }
}

// ---- the kernel -------------------------------------------------------------------------------------------------

// "At least 1 block per SM" lets ptxas use up to 128 registers (it uses ~110): left to itself it aims for 2 blocks
// of 512 threads, caps registers at 64 and spills. While batch <= number of SMs, each SM holds one problem anyway.
__global__ void __launch_bounds__(kThreads, 1) sinkhorn_kernel(const Params P) {
  extern __shared__ float shared_vectors[];  // 2 n_max + 3 p_max floats when P.shared_vectors
  __shared__ float part_m[kThreads];
  __shared__ float part_s[kThreads];
  __shared__ double part_d[kThreads];
  __shared__ double red[kWarps];

  const int bi = blockIdx.x;
  const int t = threadIdx.x;
  const int warp = t >> 5, lane = t & 31;
  const int n_max = P.n_max, p_max = P.p_max, ld = p_max;
  const int64_t mat = static_cast<int64_t>(bi) * n_max * p_max;
  float* K = P.logits + mat;
  float* f_out = P.f ? P.f + static_cast<int64_t>(bi) * n_max : nullptr;
  float* g_out = P.g ? P.g + static_cast<int64_t>(bi) * p_max : nullptr;
  const float* a = P.a ? P.a + static_cast<int64_t>(bi) * n_max : nullptr;
  const float* b = P.b ? P.b + static_cast<int64_t>(bi) * p_max : nullptr;
  const int n = P.n ? P.n[bi] : n_max;  // the same for every thread: branches on n, p are block-uniform
  const int p = P.p ? P.p[bi] : p_max;
  if (n < 1 || n > n_max || p < 1 || p > p_max) {
    reject_problem(P, K, f_out, g_out);
    return;
  }

  // Logits in double, clamped, then rounded: bit-identical to detail::fill_logits. Reading C and writing K through
  // the same thread and index keeps the in-place case (cost == plan) correct.
  const float* C = P.cost + mat;
  for (int i = warp; i < n; i += kWarps) {
    const float* c = C + static_cast<int64_t>(i) * ld;
    float* k = K + static_cast<int64_t>(i) * ld;
    for (int j = lane; j < p; j += 32) {
      const double x = P.scale * static_cast<double>(c[j]);
      k[j] = static_cast<float>(fmin(fmax(x, -kMaxLogit), kMaxLogit));
    }
  }
  const Vectors v = vectors_for(P, shared_vectors);
  for (int i = t; i < n; i += kThreads) {
    v.la[i] = log_weight(a, i, n);
    v.F[i] = 0.f;
  }
  for (int j = t; j < p; j += kThreads) {
    v.lb[j] = log_weight(b, j, p);
    v.G[j] = 0.f;
  }
  double a_mass = 1.0;  // for the default convergence threshold 1e-4 x mass
  if (a) {
    double s = 0;
    for (int i = t; i < n; i += kThreads) s += a[i];
    a_mass = block_sum(s, red);
  }
  __syncthreads();  // K and the vectors are read across threads from here on

  const Mapping mp = mapping_for(p);
  int done = 0;
  bool met_tol = false;
  for (int it = 0; it < P.max_iter; ++it) {
    column_lse(K, ld, n, p, v.F, v.cl, mp, part_m, part_s);
    __syncthreads();
    if (P.tol > 0 && it > 0) {
      // The current plan's column sums are exp(G_j + cl_j): the CPU's stopping test, in double.
      double e = 0;
      for (int j = t; j < p; j += kThreads)
        e += fabs(exp(static_cast<double>(v.G[j]) + static_cast<double>(v.cl[j])) -
                  static_cast<double>(weight(b, j, p)));
      if (block_sum(e, red) <= P.tol) {  // block-uniform: every thread holds the same sum
        met_tol = true;
        break;
      }
    }
    // The tape (like the CPU's SinkhornTape): this iteration's column LSEs, then its row LSEs.
    float* tape = P.tape ? P.tape + (static_cast<int64_t>(bi) * P.max_iter + it) * (p_max + n_max) : nullptr;
    for (int j = t; j < p; j += kThreads) {
      v.G[j] = v.lb[j] - v.cl[j];
      if (tape) tape[j] = v.cl[j];
    }
    __syncthreads();
    row_update(K, ld, n, p, v.G, v.la, v.F, mp, tape ? tape + p_max : nullptr);
    __syncthreads();
    done = it + 1;
  }

  double err = 0, value = 0, mass = 0;
  plan_rows(K, ld, n, p, v.F, v.G, v.la, a, mp, err, value, mass);
  __syncthreads();  // column sums read plan entries, f_out reads F, both written by other threads
  plan_columns(K, ld, n, p, v.G, b, mp, part_d, err, value);
  err = block_sum(err, red);
  value = block_sum(value, red);
  mass = block_sum(mass, red);

  // Padding: columns p.. of the first n rows, then every row from n on (contiguous).
  if (p < p_max)
    for (int i = warp; i < n; i += kWarps)
      for (int j = p + lane; j < p_max; j += 32) K[static_cast<int64_t>(i) * ld + j] = 0.f;
  for (int64_t e = static_cast<int64_t>(n) * ld + t; e < static_cast<int64_t>(n_max) * ld; e += kThreads) K[e] = 0.f;
  if (f_out)
    for (int i = t; i < n_max; i += kThreads) f_out[i] = i < n ? static_cast<float>(P.eps * v.F[i]) : 0.f;
  if (g_out)
    for (int j = t; j < p_max; j += kThreads) g_out[j] = j < p ? static_cast<float>(P.eps * v.G[j]) : 0.f;
  if (t == 0) {
    if (P.n_iter) P.n_iter[bi] = done;
    if (P.marginal_err) P.marginal_err[bi] = static_cast<float>(err);
    // With a tolerance, meeting the (log-domain) stopping test counts even if the float plan's error is a hair above.
    if (P.converged) P.converged[bi] = met_tol || err <= (P.tol > 0 ? P.tol : 1e-4 * a_mass) ? 1 : 0;
    if (P.cost_value) P.cost_value[bi] = static_cast<float>(P.eps * (value - mass));
  }
}

// ---- host side --------------------------------------------------------------------------------------------------

struct LaunchShape {
  bool shared_vectors;
  size_t shared_bytes;     // dynamic shared memory of the launch
  size_t workspace_bytes;  // needed when the vectors live in global memory
  int max_dynamic_shared;  // what the kernel may be allowed on this device
};

// Shapes the CPU's SinkhornProblem::validate would reject, with its messages (values cannot be read here).
void check_shape(const SinkhornProblem<float>& pr) {
  INDUCTIVE_CHECK(pr.batch >= 1, ErrorCode::kInvalidArgument, "sinkhorn: batch size must be >= 1: got ", pr.batch);
  INDUCTIVE_CHECK(pr.n_max >= 1 && pr.p_max >= 1, ErrorCode::kInvalidArgument,
                  "sinkhorn: empty point set: got n = ", pr.n_max, ", p = ", pr.p_max, ", expected n >= 1 and p >= 1");
  INDUCTIVE_CHECK(
      static_cast<int64_t>(pr.batch) * pr.n_max * pr.p_max < (int64_t{1} << 40), ErrorCode::kInvalidArgument,
      "sinkhorn: problem too large: batch x n x p = ", static_cast<int64_t>(pr.batch) * pr.n_max * pr.p_max);
}

LaunchShape launch_shape(int batch, int n_max, int p_max, const SinkhornLaunch& launch) {
  const size_t bytes = (2 * static_cast<size_t>(n_max) + 3 * static_cast<size_t>(p_max)) * sizeof(float);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int optin = 0;
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  cudaFuncAttributes attr{};
  check(cudaFuncGetAttributes(&attr, sinkhorn_kernel), "cudaFuncGetAttributes");
  const size_t room = static_cast<size_t>(optin) > attr.sharedSizeBytes ? optin - attr.sharedSizeBytes : 0;
  if (launch.allow_shared_vectors && bytes <= room) return {true, bytes, 0, static_cast<int>(room)};
  return {false, 0, bytes * static_cast<size_t>(batch), static_cast<int>(room)};
}

}  // namespace

size_t sinkhorn_workspace_bytes(int batch, int n_max, int p_max, const SinkhornLaunch& launch) {
  SinkhornProblem<float> shape;
  shape.batch = batch;
  shape.n_max = n_max;
  shape.p_max = p_max;
  check_shape(shape);
  return launch_shape(batch, n_max, p_max, launch).workspace_bytes;
}

void sinkhorn_log_device(const SinkhornProblem<float>& pr, const SinkhornOptions& o, const SinkhornOutput<float>& out,
                         void* workspace, size_t workspace_bytes, const SinkhornLaunch& launch) {
  o.validate();
  check_shape(pr);
  INDUCTIVE_CHECK(pr.cost != nullptr, ErrorCode::kInvalidArgument, "sinkhorn: no cost matrix given");
  INDUCTIVE_CHECK(out.plan != nullptr, ErrorCode::kInvalidArgument, "sinkhorn: no plan buffer given");
  const LaunchShape shape = launch_shape(pr.batch, pr.n_max, pr.p_max, launch);
  INDUCTIVE_CHECK(workspace_bytes >= shape.workspace_bytes && (shape.workspace_bytes == 0 || workspace != nullptr),
                  ErrorCode::kInvalidArgument, "sinkhorn (cuda): workspace too small: got ", workspace_bytes,
                  " bytes, expected ", shape.workspace_bytes, " (see sinkhorn_workspace_bytes)");
  if (shape.shared_vectors) {
    // Always the device maximum (not this launch's size): concurrent callers then never shrink each other's limit.
    check(cudaFuncSetAttribute(sinkhorn_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shape.max_dynamic_shared),
          "cudaFuncSetAttribute");
  }
  Params P{};
  P.cost = pr.cost;
  P.logits = out.plan;
  P.n = pr.n;
  P.p = pr.p;
  P.a = pr.a;
  P.b = pr.b;
  P.f = out.f;
  P.g = out.g;
  P.n_iter = out.n_iter;
  P.marginal_err = out.marginal_err;
  P.converged = out.converged;
  P.cost_value = out.cost_value;
  P.workspace = shape.shared_vectors ? nullptr : static_cast<float*>(workspace);
  P.n_max = pr.n_max;
  P.p_max = pr.p_max;
  P.max_iter = o.max_iter;
  P.eps = o.eps;
  P.scale = (o.similarity ? 1.0 : -1.0) / o.eps;
  P.tol = o.tol;
  P.shared_vectors = shape.shared_vectors;
  P.tape = launch.tape;
  sinkhorn_kernel<<<pr.batch, kThreads, shape.shared_bytes, launch.stream>>>(P);
  check(cudaGetLastError(), "sinkhorn kernel launch");
}

}  // namespace inductive::cuda
