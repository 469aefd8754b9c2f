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
// dependency chain, R of them overlap). a_r = a + r * lda, out_r = out + r * ldo. DH a multiple of NW.
template <int DH, int R, bool Acc>
void combine_rows(const float* a, int lda, const float* v, int ld, int n, float* out, int ldo) {
  constexpr int V = DH / NW;
  N acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < V; ++u) acc[r][u] = N(0.0f);
  for (int j = 0; j < n; ++j) {
    N vj[V];
    for (int u = 0; u < V; ++u) vj[u] = N::load_unaligned(v + static_cast<size_t>(j) * ld + u * NW);
    for (int r = 0; r < R; ++r) {
      const N arj(a[static_cast<size_t>(r) * lda + j]);
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

// out = A V (or out += A V when Acc) for n rows of A (n x n, row stride lda), in blocks of 4 rows.
template <int DH, bool Acc = false>
void combine(const float* a, int lda, const float* v, int ld, int n, float* out, int ldo) {
  int i = 0;
  for (; i + 4 <= n; i += 4)
    combine_rows<DH, 4, Acc>(a + static_cast<size_t>(i) * lda, lda, v, ld, n, out + static_cast<size_t>(i) * ldo, ldo);
  for (; i < n; ++i)
    combine_rows<DH, 1, Acc>(a + static_cast<size_t>(i) * lda, lda, v, ld, n, out + static_cast<size_t>(i) * ldo, ldo);
}

// Any dh: the same sums, accumulated in `out` itself (zeroed first unless `acc`).
void combine_any(const float* a, int lda, const float* v, int ld, int n, int dh, float* out, int ldo,
                 bool acc = false) {
  for (int i = 0; i < n; ++i) {
    float* o = out + static_cast<size_t>(i) * ldo;
    if (!acc) std::fill(o, o + dh, 0.0f);
    for (int j = 0; j < n; ++j) {
      const float aij = a[static_cast<size_t>(i) * lda + j];
      const float* vj = v + static_cast<size_t>(j) * ld;
      for (int k = 0; k < dh; ++k) o[k] += aij * vj[k];
    }
  }
}

// One head's forward pass. qt: scale Q^T of this head (dh rows, padded to np); kp: the kernel padded to np columns
// (or null); row, e: np floats; ad: n x n when dropout is on.
template <int DH>
void head_forward(const AttentionShape& s, int h, const float* q, const float* v, const float* qt, const float* kp,
                  int np, const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax, float* row,
                  float* e, float* ad) {
  const int n = s.n, dh = s.dh;
  float* A = probs + static_cast<size_t>(h) * n * n;
  for (int i = 0; i < n; ++i) {
    const float m = score_row<DH>(q + static_cast<size_t>(i) * s.ld + h * dh, qt, n, np, dh, row);
    // e = exp(s - max s) (⊙ K), r = its sum; the kernel's padding is 0.
    B sum(0.0f);
    const B bm(m);
    const float* ki = kp ? kp + static_cast<size_t>(i) * np : nullptr;
    for (int j = 0; j < np; j += W) {
      B ej = simd::kernel_exp<float, Arch>(B::load_unaligned(row + j) - bm);
      if (ki) ej *= B::load_unaligned(ki + j);
      ej.store_unaligned(e + j);
      sum += ej;
    }
    const float r = xsimd::hadd(sum);
    const bool is_floored = !(r > kRowSumFloor);
    floored[h * n + i] = is_floored;
    // The row max of S (first of equals): where the max's gradient goes. A row of NaN (a diverged model) has none;
    // it takes column 0, so that the backward's write stays inside the row.
    if (is_floored) argmax[h * n + i] = static_cast<int32_t>((std::find(row, row + n, m) - row) % n);
    const float inv = 1.0f / (is_floored ? kRowSumFloor : r);
    float* Ai = A + static_cast<size_t>(i) * n;
    for (int j = 0; j < n; ++j) Ai[j] = e[j] * inv;
  }
  const float* vh = v + h * dh;
  float* out = heads + h * dh;
  const float* a = A;
  if (drop) {
    const float* mh = drop + static_cast<size_t>(h) * n * n;
    for (size_t t = 0; t < static_cast<size_t>(n) * n; ++t) ad[t] = A[t] * mh[t];
    a = ad;
  }
  if constexpr (DH > 0)
    combine<DH>(a, n, vh, s.ld, n, out, s.ld);
  else
    combine_any(a, n, vh, s.ld, n, dh, out, s.ld);
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
    combine<DH, true>(ds, n, q + h * dh, ld, n, dq + h * dh, ld);
    combine<DH>(at, n, d_heads + h * dh, ld, n, dv + h * dh, ld);
  } else {
    combine_any(ds, n, q + h * dh, ld, n, dh, dq + h * dh, ld, true);
    combine_any(at, n, d_heads + h * dh, ld, n, dh, dv + h * dh, ld);
  }
}

template <int DH>
void forward_heads(const AttentionShape& s, float scale, const float* q, const float* v, const float* kernel,
                   const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax, float* scratch) {
  const int n = s.n, d = s.heads * s.dh, np = padded(n);
  float* qt = scratch;
  float* kp = qt + static_cast<size_t>(d) * np;
  float* row = kp + static_cast<size_t>(n) * np;
  float* e = row + np;
  float* ad = e + np;
  transpose_padded(q, s.ld, n, d, np, scale, qt);
  if (kernel)
    for (int i = 0; i < n; ++i) {
      std::copy(kernel + static_cast<size_t>(i) * n, kernel + static_cast<size_t>(i + 1) * n,
                kp + static_cast<size_t>(i) * np);
      std::fill(kp + static_cast<size_t>(i) * np + n, kp + static_cast<size_t>(i + 1) * np, 0.0f);
    }
  for (int h = 0; h < s.heads; ++h)
    head_forward<DH>(s, h, q, v, qt + static_cast<size_t>(h) * s.dh * np, kernel ? kp : nullptr, np, drop, probs, heads,
                     floored, argmax, row, e, ad);
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
  // forward: Q^T, the padded kernel, two rows, the dropped-out A; backward: V^T, a row, dS and A^T.
  const size_t nn = static_cast<size_t>(max_n) * max_n;
  return static_cast<size_t>(d) * np + std::max(static_cast<size_t>(max_n) * np + 2 * np + nn, np + 2 * nn);
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
