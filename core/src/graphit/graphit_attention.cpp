// GraphiT attention kernels (see graphit_attention.h). Compiled with the build's default xsimd architecture and
// without Eigen, like simd/small_gemm.cpp.
#include "graphit/graphit_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "inductive/parallel.h"
#include "simd/lse_kernels_xsimd.h"  // kernel_exp (the library's SIMD exp) and hmax

namespace inductive::graphit_detail {

namespace {

using Arch = xsimd::default_arch;
using B = xsimd::batch<float, Arch>;
constexpr int W = static_cast<int>(B::size);
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The dh-wide rows (A V, the gradients' outer products) use 8-float vectors where the CPU has them (AVX2, AVX-512),
// the default 4-float ones otherwise (SSE, wasm SIMD128).
using B8 = xsimd::make_sized_batch_t<float, 8>;
using N = std::conditional_t<std::is_void_v<B8>, xsimd::batch<float, xsimd::default_arch>, B8>;
constexpr int NW = static_cast<int>(N::size);

int padded(int n) { return (n + W - 1) / W * W; }

// Lanes j + lane >= n of a vector starting at column j.
xsimd::batch_bool<float, Arch> past_end(int j, int n) {
  alignas(64) float lane[W];
  for (int t = 0; t < W; ++t) lane[t] = static_cast<float>(j + t);
  return B::load_aligned(lane) >= B(static_cast<float>(n));
}

// dst[c * np + j] = alpha src[j * ld + c] for c < d, j < n, and 0 for n <= j < np: the transposed operand whose
// rows the score rows are combinations of.
void transpose_padded(const float* src, int ld, int n, int d, int np, float alpha, float* dst) {
  for (int c = 0; c < d; ++c) {
    float* row = dst + static_cast<size_t>(c) * np;
    for (int j = 0; j < n; ++j) row[j] = alpha * src[static_cast<size_t>(j) * ld + c];
    std::fill(row + n, row + np, 0.0f);
  }
}

// row[j] = sum_k a[k] t[k * np + j] for j < np (np a multiple of W): one score row, W columns per vector, two
// column blocks at a time so that two FMA chains overlap. Columns n..np are set to -inf (exp gives 0, the max
// ignores them) in registers: a scalar fill after the vector stores would stall the next pass's vector loads
// (a failed store-to-load forward). Returns the row's max.
template <int DH>
float score_row(const float* a, const float* t, int n, int np, int dh_runtime, float* row) {
  const int dh = DH > 0 ? DH : dh_runtime;
  B m(kNegInf);
  int j = 0;
  for (; j + 2 * W <= np; j += 2 * W) {
    B s0(0.0f), s1(0.0f);
    for (int k = 0; k < dh; ++k) {
      const B ak(a[k]);
      const float* tk = t + static_cast<size_t>(k) * np + j;
      s0 = simd::madd(ak, B::load_unaligned(tk), s0);
      s1 = simd::madd(ak, B::load_unaligned(tk + W), s1);
    }
    if (j + 2 * W > n) {
      s0 = xsimd::select(past_end(j, n), B(kNegInf), s0);
      s1 = xsimd::select(past_end(j + W, n), B(kNegInf), s1);
    }
    m = xsimd::max(m, xsimd::max(s0, s1));
    s0.store_unaligned(row + j);
    s1.store_unaligned(row + j + W);
  }
  if (j < np) {
    B s0(0.0f);
    for (int k = 0; k < dh; ++k) s0 = simd::madd(B(a[k]), B::load_unaligned(t + static_cast<size_t>(k) * np + j), s0);
    s0 = xsimd::select(past_end(j, n), B(kNegInf), s0);
    m = xsimd::max(m, s0);
    s0.store_unaligned(row + j);
  }
  return simd::XsimdKernels<float, Arch>::hmax(m);
}

// out_r[0..DH) = sum_j a_r[j] v[j * ld + 0..DH) for R rows at once (independent accumulators: the sum over j is a
// dependency chain, R of them overlap). a_r[j] = a[r * lda + j * acs]: a row-major matrix (acs 1), or the rows of
// its transpose (lda 1, acs its row stride: the forward's A^T). out_r = out + r * ldo. DH a multiple of NW.
template <int DH, int R, bool Acc>
void combine_rows(const float* a, int lda, int acs, const float* v, int ld, int n, float* out, int ldo) {
  constexpr int V = DH / NW;
  N acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < V; ++u) acc[r][u] = N(0.0f);
  for (int j = 0; j < n; ++j) {
    N vj[V];
    for (int u = 0; u < V; ++u) vj[u] = N::load_unaligned(v + static_cast<size_t>(j) * ld + u * NW);
    for (int r = 0; r < R; ++r) {
      const N arj(a[static_cast<size_t>(r) * lda + static_cast<size_t>(j) * acs]);
      for (int u = 0; u < V; ++u) acc[r][u] = simd::madd(arj, vj[u], acc[r][u]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < V; ++u) {
      float* o = out + static_cast<size_t>(r) * ldo + u * NW;
      if constexpr (Acc) acc[r][u] += N::load_unaligned(o);
      acc[r][u].store_unaligned(o);
    }
}

// out = A V (or out += A V when Acc) for n rows of A (n x n, element (i, j) at a[i * lda + j * acs]), in blocks of
// 4 rows.
template <int DH, bool Acc = false>
void combine(const float* a, int lda, int acs, const float* v, int ld, int n, float* out, int ldo) {
  int i = 0;
  for (; i + 4 <= n; i += 4)
    combine_rows<DH, 4, Acc>(a + static_cast<size_t>(i) * lda, lda, acs, v, ld, n, out + static_cast<size_t>(i) * ldo,
                             ldo);
  for (; i < n; ++i)
    combine_rows<DH, 1, Acc>(a + static_cast<size_t>(i) * lda, lda, acs, v, ld, n, out + static_cast<size_t>(i) * ldo,
                             ldo);
}

// Any dh: the same sums, accumulated in `out` itself (zeroed first unless `acc`).
void combine_any(const float* a, int lda, int acs, const float* v, int ld, int n, int dh, float* out, int ldo,
                 bool acc = false) {
  for (int i = 0; i < n; ++i) {
    float* o = out + static_cast<size_t>(i) * ldo;
    if (!acc) std::fill(o, o + dh, 0.0f);
    for (int j = 0; j < n; ++j) {
      const float aij = a[static_cast<size_t>(i) * lda + static_cast<size_t>(j) * acs];
      const float* vj = v + static_cast<size_t>(j) * ld;
      for (int k = 0; k < dh; ++k) o[k] += aij * vj[k];
    }
  }
}

// One head's forward pass, computed down the columns: a vector holds W rows i of a column j. S = Q Q^T / sqrt(dh)
// column by column (qt: scale Q^T of this head, dh rows padded to np; the rows' vectors of it stay in registers
// across the columns), each row's max as an element-wise max over the columns, then e = exp(s - max) (⊙ K^T's
// column, kt) and the row sums element-wise too, and A^T = e / sum: no horizontal reduction, one division per W rows,
// and no row's latency chain (scores, max, exps, sum, divide) to wait on. Row by row, those chains had made a head of
// ~23 nodes cost ~180 cycles a row. ts and at (n x np): S^T and A^T, a column j at t + j * np. A V then reads A^T's
// columns as A's rows. `probs` (row-major A, for the backward pass and attention maps) is written when given; with
// dropout A ⊙ M is formed from it (ad: n x n) and multiplied instead.
template <int DH>
void head_forward(const AttentionShape& s, int h, const float* q, const float* v, const float* qt, const float* kt,
                  int np, const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax, float* ts,
                  float* at, float* ad) {
  const int n = s.n, dh = DH > 0 ? DH : s.dh;
  constexpr int KR = DH > 0 ? DH : 1;  // Q^T's vectors held in registers (the compiled widths)
  for (int i0 = 0; i0 < np; i0 += W) {
    B qk[KR];
    if constexpr (DH > 0)
      for (int k = 0; k < DH; ++k) qk[k] = B::load_unaligned(qt + static_cast<size_t>(k) * np + i0);
    B m(kNegInf);
    for (int j = 0; j < n; ++j) {
      const float* qj = q + static_cast<size_t>(j) * s.ld + h * dh;
      B sj(0.0f);
      if constexpr (DH > 0) {
        for (int k = 0; k < DH; ++k) sj = simd::madd(qk[k], B(qj[k]), sj);
      } else {
        for (int k = 0; k < dh; ++k)
          sj = simd::madd(B::load_unaligned(qt + static_cast<size_t>(k) * np + i0), B(qj[k]), sj);
      }
      m = xsimd::max(m, sj);
      sj.store_unaligned(ts + static_cast<size_t>(j) * np + i0);
    }
    B sum(0.0f);
    for (int j = 0; j < n; ++j) {
      const size_t o = static_cast<size_t>(j) * np + i0;
      B e = simd::kernel_exp<float, Arch>(B::load_unaligned(ts + o) - m);
      if (kt) e *= B::load_unaligned(kt + o);
      e.store_unaligned(at + o);
      sum += e;
    }
    // The reference's clamp(min=1e-6) of the row sums; a floored row's gradient goes to its max (backward).
    const auto is_floored = !(sum > B(kRowSumFloor));
    const B inv = B(1.0f) / xsimd::select(is_floored, B(kRowSumFloor), sum);
    for (int j = 0; j < n; ++j) {
      float* aj = at + static_cast<size_t>(j) * np + i0;
      (B::load_unaligned(aj) * inv).store_unaligned(aj);
    }
    alignas(64) float lane_sum[W];
    sum.store_aligned(lane_sum);
    alignas(64) float lane_max[W];
    m.store_aligned(lane_max);
    for (int t = 0; t < W && i0 + t < n; ++t) {
      const int i = i0 + t;
      const bool f = !(lane_sum[t] > kRowSumFloor);
      floored[h * n + i] = f;
      if (!f) continue;
      // The row max of S (first of equals). A row of NaN (a diverged model) has none; it takes column 0, so that the
      // backward's write stays inside the row.
      int32_t arg = 0;
      for (int j = 0; j < n; ++j)
        if (ts[static_cast<size_t>(j) * np + i] == lane_max[t]) {
          arg = j;
          break;
        }
      argmax[h * n + i] = arg;
    }
  }
  float* A = probs ? probs + static_cast<size_t>(h) * n * n : nullptr;
  if (A)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A[static_cast<size_t>(i) * n + j] = at[static_cast<size_t>(j) * np + i];
  const float* vh = v + h * dh;
  float* out = heads + h * dh;
  const float* a = at;
  int lda = 1, acs = np;
  if (drop) {
    const float* mh = drop + static_cast<size_t>(h) * n * n;
    for (size_t t = 0; t < static_cast<size_t>(n) * n; ++t) ad[t] = A[t] * mh[t];
    a = ad, lda = n, acs = 1;
  }
  if constexpr (DH > 0)
    combine<DH>(a, lda, acs, vh, s.ld, n, out, s.ld);
  else
    combine_any(a, lda, acs, vh, s.ld, n, dh, out, s.ld);
}

// One head's backward pass. vt: V^T of this head (dh rows, padded to np); row: np floats; ds, at: n x n each.
// dS (scaled by `scale`, the logits' factor) is formed row by row, then dQ_h += (dS + dS^T) Q_h and
// dV_h = (A ⊙ M)^T dO_h run as the forward's register-blocked A V on the symmetrised / transposed matrices.
template <int DH>
void head_backward(const AttentionShape& s, int h, float scale, const float* q, const float* vt, int np,
                   const float* probs, const float* drop, const uint8_t* floored, const int32_t* argmax,
                   const float* d_heads, float* dq, float* dv, float* row, float* ds, float* at) {
  const int n = s.n, dh = s.dh, ld = s.ld;
  const float* A = probs + static_cast<size_t>(h) * n * n;
  const float* M = drop ? drop + static_cast<size_t>(h) * n * n : nullptr;
  for (int i = 0; i < n; ++i) {
    const float* Ai = A + static_cast<size_t>(i) * n;
    const float* Mi = M ? M + static_cast<size_t>(i) * n : nullptr;
    // (A ⊙ M)^T, for dV.
    for (int j = 0; j < n; ++j) at[static_cast<size_t>(j) * n + i] = Mi ? Ai[j] * Mi[j] : Ai[j];
    // dA_i = dO_i V^T (⊙ M_i); sigma_i = dA_i . A_i; dS_i.
    score_row<DH>(d_heads + static_cast<size_t>(i) * ld + h * dh, vt, n, np, dh, row);
    if (Mi)
      for (int j = 0; j < n; ++j) row[j] *= Mi[j];
    float sigma = 0.0f;
    for (int j = 0; j < n; ++j) sigma += row[j] * Ai[j];
    float* dsi = ds + static_cast<size_t>(i) * n;
    if (!floored[h * n + i]) {
      for (int j = 0; j < n; ++j) dsi[j] = scale * ((row[j] - sigma) * Ai[j]);
    } else {
      for (int j = 0; j < n; ++j) dsi[j] = scale * (row[j] * Ai[j]);
      dsi[argmax[h * n + i]] -= scale * sigma;
    }
  }
  for (int i = 0; i < n; ++i) {  // dS + dS^T, in place
    float* dsi = ds + static_cast<size_t>(i) * n;
    dsi[i] *= 2.0f;
    for (int j = i + 1; j < n; ++j) {
      float& lower = ds[static_cast<size_t>(j) * n + i];
      dsi[j] += lower;
      lower = dsi[j];
    }
  }
  if constexpr (DH > 0) {
    combine<DH, true>(ds, n, 1, q + h * dh, ld, n, dq + h * dh, ld);
    combine<DH>(at, n, 1, d_heads + h * dh, ld, n, dv + h * dh, ld);
  } else {
    combine_any(ds, n, 1, q + h * dh, ld, n, dh, dq + h * dh, ld, true);
    combine_any(at, n, 1, d_heads + h * dh, ld, n, dh, dv + h * dh, ld);
  }
}

template <int DH>
void forward_heads(const AttentionShape& s, float scale, const float* q, const float* v, const float* kernel,
                   const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax, float* scratch) {
  const int n = s.n, d = s.heads * s.dh, np = padded(n);
  const size_t block = static_cast<size_t>(n) * np;
  float* qt = scratch;
  float* kt = qt + static_cast<size_t>(d) * np;
  float* ts = kt + block;
  float* at = ts + block;
  float* ad = at + block;
  transpose_padded(q, s.ld, n, d, np, scale, qt);
  if (kernel) transpose_padded(kernel, n, n, n, np, 1.0f, kt);  // column j of K down the rows: K^T's row j
  for (int h = 0; h < s.heads; ++h)
    head_forward<DH>(s, h, q, v, qt + static_cast<size_t>(h) * s.dh * np, kernel ? kt : nullptr, np, drop, probs, heads,
                     floored, argmax, ts, at, ad);
}

template <int DH>
void backward_heads(const AttentionShape& s, float scale, const float* q, const float* v, const float* probs,
                    const float* drop, const uint8_t* floored, const int32_t* argmax, const float* d_heads, float* dq,
                    float* dv, float* scratch) {
  const int n = s.n, d = s.heads * s.dh, np = padded(n);
  float* vt = scratch;
  float* row = vt + static_cast<size_t>(d) * np;
  float* ds = row + np;
  float* at = ds + static_cast<size_t>(n) * n;
  transpose_padded(v, s.ld, n, d, np, 1.0f, vt);
  for (int h = 0; h < s.heads; ++h)
    head_backward<DH>(s, h, scale, q, vt + static_cast<size_t>(h) * s.dh * np, np, probs, drop, floored, argmax,
                      d_heads, dq, dv, row, ds, at);
}

}  // namespace

size_t attention_scratch_floats(int max_n, int d) {
  const size_t np = static_cast<size_t>(padded(std::max(max_n, 1)));
  // forward: Q^T, K^T, S^T and A^T (padded), the dropped-out A; backward: V^T, a row, dS and A^T.
  const size_t nn = static_cast<size_t>(max_n) * max_n;
  return static_cast<size_t>(d) * np + std::max(3 * static_cast<size_t>(max_n) * np + nn, np + 2 * nn);
}

void reserve_attention_scratch(std::vector<std::vector<float>>& scratch, int max_n, int d) {
  const size_t floats = attention_scratch_floats(max_n, d);
  scratch.resize(static_cast<size_t>(parallel_threads()));
  for (std::vector<float>& s : scratch)
    if (s.size() < floats) s.resize(floats);
}

void attention_forward(const AttentionShape& s, float scale, const float* q, const float* v, const float* kernel,
                       const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax,
                       float* scratch) {
  switch (s.dh) {  // the templated widths are multiples of NW (4 or 8)
    case 8:
      return forward_heads<8>(s, scale, q, v, kernel, drop, probs, heads, floored, argmax, scratch);
    case 16:
      return forward_heads<16>(s, scale, q, v, kernel, drop, probs, heads, floored, argmax, scratch);
    case 32:
      return forward_heads<32>(s, scale, q, v, kernel, drop, probs, heads, floored, argmax, scratch);
    default:
      return forward_heads<0>(s, scale, q, v, kernel, drop, probs, heads, floored, argmax, scratch);
  }
}

void attention_backward(const AttentionShape& s, float scale, const float* q, const float* v, const float* probs,
                        const float* drop, const uint8_t* floored, const int32_t* argmax, const float* d_heads,
                        float* dq, float* dv, float* scratch) {
  switch (s.dh) {
    case 8:
      return backward_heads<8>(s, scale, q, v, probs, drop, floored, argmax, d_heads, dq, dv, scratch);
    case 16:
      return backward_heads<16>(s, scale, q, v, probs, drop, floored, argmax, d_heads, dq, dv, scratch);
    case 32:
      return backward_heads<32>(s, scale, q, v, probs, drop, floored, argmax, d_heads, dq, dv, scratch);
    default:
      return backward_heads<0>(s, scale, q, v, probs, drop, floored, argmax, d_heads, dq, dv, scratch);
  }
}

}  // namespace inductive::graphit_detail
