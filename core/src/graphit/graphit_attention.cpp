// GraphiT attention kernels (see graphit_attention.h). Compiled with the build's default xsimd architecture and
// without Eigen, like simd/small_gemm.cpp.
#include "graphit/graphit_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "inductive/parallel.h"
#include "simd/lse_kernels_xsimd.h"  // kernel_exp (the library's SIMD exp)

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

// dst[c * np + j] = alpha src[j * ld + c] for c < d, j < n, and 0 for n <= j < np: the transposed operand whose
// rows the score rows are combinations of.
void transpose_padded(const float* src, int ld, int n, int d, int np, float alpha, float* dst) {
  for (int c = 0; c < d; ++c) {
    float* row = dst + static_cast<size_t>(c) * np;
    for (int j = 0; j < n; ++j) row[j] = alpha * src[static_cast<size_t>(j) * ld + c];
    std::fill(row + n, row + np, 0.0f);
  }
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
  const float* aj = a;  // pointers stepped once a term (in wasm, index multiplies stayed in the loop)
  const float* vrow = v;
  for (int j = 0; j < n; ++j, aj += acs, vrow += ld) {
    N vj[V];
    for (int u = 0; u < V; ++u) vj[u] = N::load_unaligned(vrow + u * NW);
    for (int r = 0; r < R; ++r) {
      const N arj(aj[static_cast<size_t>(r) * lda]);
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

// Rows of A per block of combine_rows: its R x DH / NW accumulators take at most half the vector registers (16 on
// x86 without AVX-512, and in wasm, whose engines map its vectors to them; 32 with AVX-512), at most 4. In wasm a
// 4 x 16 block (16 accumulators, 4 vectors of V, a broadcast) had spilled in every iteration.
#if defined(__AVX512F__)
constexpr int kVectorRegisters = 32;
#else
constexpr int kVectorRegisters = 16;
#endif
template <int DH>
constexpr int kCombineRows = std::clamp(kVectorRegisters / 2 / (DH / NW), 1, 4);

// out = A V (or out += A V when Acc) for n rows of A (n x n, element (i, j) at a[i * lda + j * acs]), in blocks of
// kCombineRows rows.
template <int DH, bool Acc = false>
void combine(const float* a, int lda, int acs, const float* v, int ld, int n, float* out, int ldo) {
  constexpr int R = kCombineRows<DH>;
  int i = 0;
  for (; i + R <= n; i += R)
    combine_rows<DH, R, Acc>(a + static_cast<size_t>(i) * lda, lda, acs, v, ld, n, out + static_cast<size_t>(i) * ldo,
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

// W rows i0.. of T^T x, T given as dh rows of np floats (a transposed, padded operand): sum_k t[k][i0 + lane] x[k].
// With the width compiled in (DH > 0) T's dh vectors are loaded once and stay in registers across the x's (the
// columns j of a head); otherwise they are read at each call.
template <int DH>
class Columns {
 public:
  Columns(const float* t, int np, int i0, int dh) : t_(t + i0), np_(np), dh_(dh) {
    if constexpr (DH > 0)
      for (int k = 0; k < DH; ++k) v_[k] = B::load_unaligned(t_ + static_cast<size_t>(k) * np_);
  }
  B times(const float* x) const {
    B acc(0.0f);
    if constexpr (DH > 0) {
      for (int k = 0; k < DH; ++k) acc = simd::madd(v_[k], B(x[k]), acc);
    } else {
      for (int k = 0; k < dh_; ++k)
        acc = simd::madd(B::load_unaligned(t_ + static_cast<size_t>(k) * np_), B(x[k]), acc);
    }
    return acc;
  }

 private:
  const float* t_;
  int np_, dh_;
  B v_[DH > 0 ? DH : 1];
};

// One head's forward pass, computed down the columns: a vector holds W rows i of a column j. S = Q Q^T / sqrt(dh)
// column by column (qt: scale Q^T of this head, dh rows padded to np; the rows' vectors of it stay in registers
// across the columns), each row's max as an element-wise max over the columns, then e = exp(s - max) (⊙ K^T's
// column, kt) and the row sums element-wise too, and A^T = e / sum: no horizontal reduction, one division per W rows,
// and no row's latency chain (scores, max, exps, sum, divide) to wait on. Row by row, those chains had made a head of
// ~23 nodes cost ~180 cycles a row. ts and at (n x np): S^T and A^T, a column j at t + j * np. A V then reads A^T's
// columns as A's rows. `probs` (A^T, for the backward pass and attention maps) is written when given; with dropout
// (A ⊙ M)^T is formed in ts and multiplied instead.
template <int DH>
void head_forward(const AttentionShape& s, int h, const float* q, const float* v, const float* qt, const float* kt,
                  int np, const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax, float* ts,
                  float* at) {
  const int n = s.n, dh = DH > 0 ? DH : s.dh;
  for (int i0 = 0; i0 < np; i0 += W) {
    const Columns<DH> qti(qt, np, i0, dh);
    B m(kNegInf);
    for (int j = 0; j < n; ++j) {
      const B sj = qti.times(q + static_cast<size_t>(j) * s.ld + h * dh);
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
  if (probs)  // A^T, unpadded: column j of A at probs + j * n
    for (int j = 0; j < n; ++j)
      std::copy(at + static_cast<size_t>(j) * np, at + static_cast<size_t>(j) * np + n,
                probs + static_cast<size_t>(h) * n * n + static_cast<size_t>(j) * n);
  const float* a = at;
  if (drop) {  // (A ⊙ M)^T over S^T's buffer, which is free now; the mask is drawn row-major (i, j)
    const float* mh = drop + static_cast<size_t>(h) * n * n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        ts[static_cast<size_t>(j) * np + i] = at[static_cast<size_t>(j) * np + i] * mh[static_cast<size_t>(i) * n + j];
    a = ts;
  }
  if constexpr (DH > 0)
    combine<DH>(a, 1, np, v + h * dh, s.ld, n, heads + h * dh, s.ld);
  else
    combine_any(a, 1, np, v + h * dh, s.ld, n, dh, heads + h * dh, s.ld);
}

// One head's backward pass, down the columns as the forward: dA = dO V^T (⊙ M), sigma_i = sum_j dA_ij A_ij and
// dS = scale (dA - sigma) ⊙ A (a floored row: scale dA ⊙ A, and -scale sigma at its max) are element-wise across
// the columns for W rows at a time; then dQ_h += (dS + dS^T) Q_h and dV_h = (A ⊙ M)^T dO_h, the forward's
// register-blocked A V. dot: dO^T of this head (dh rows, padded to np); ap: A^T padded to np (then (A ⊙ M)^T); dt:
// dA^T, then dS^T, then dS + dS^T; mt: M^T padded, with dropout (n x np each).
template <int DH>
void head_backward(const AttentionShape& s, int h, float scale, const float* q, const float* v, const float* dot,
                   int np, const float* probs, const float* drop, const uint8_t* floored, const int32_t* argmax,
                   const float* d_heads, float* dq, float* dv, float* ap, float* dt, float* mt) {
  const int n = s.n, dh = DH > 0 ? DH : s.dh, ld = s.ld;
  const float* AT = probs + static_cast<size_t>(h) * n * n;
  for (int j = 0; j < n; ++j) {
    float* row = ap + static_cast<size_t>(j) * np;
    std::copy(AT + static_cast<size_t>(j) * n, AT + static_cast<size_t>(j + 1) * n, row);
    std::fill(row + n, row + np, 0.0f);
  }
  if (drop) transpose_padded(drop + static_cast<size_t>(h) * n * n, n, n, n, np, 1.0f, mt);
  const B bscale(scale);
  for (int i0 = 0; i0 < np; i0 += W) {
    const Columns<DH> doti(dot, np, i0, dh);
    B sigma(0.0f);
    for (int j = 0; j < n; ++j) {
      const size_t o = static_cast<size_t>(j) * np + i0;
      B da = doti.times(v + static_cast<size_t>(j) * ld + h * dh);
      if (drop) da *= B::load_unaligned(mt + o);
      da.store_unaligned(dt + o);
      sigma = simd::madd(da, B::load_unaligned(ap + o), sigma);
    }
    alignas(64) float lane_floored[W];
    for (int t = 0; t < W; ++t) lane_floored[t] = i0 + t < n && floored[h * n + i0 + t] ? 1.0f : 0.0f;
    const auto is_floored = B::load_aligned(lane_floored) != B(0.0f);
    const B minus = xsimd::select(is_floored, B(0.0f), sigma);  // a floored row's sigma goes to its max alone
    for (int j = 0; j < n; ++j) {
      const size_t o = static_cast<size_t>(j) * np + i0;
      (bscale * ((B::load_unaligned(dt + o) - minus) * B::load_unaligned(ap + o))).store_unaligned(dt + o);
    }
    alignas(64) float lane_sigma[W];
    sigma.store_aligned(lane_sigma);
    for (int t = 0; t < W && i0 + t < n; ++t)
      if (lane_floored[t] != 0.0f) {
        const int i = i0 + t;
        dt[static_cast<size_t>(argmax[h * n + i]) * np + i] -= scale * lane_sigma[t];
      }
  }
  for (int i = 0; i < n; ++i) {  // dS + dS^T, in place (dt holds dS^T: dS_ij at dt[j * np + i])
    float* di = dt + static_cast<size_t>(i) * np;
    di[i] *= 2.0f;
    for (int j = i + 1; j < n; ++j) {
      float& other = dt[static_cast<size_t>(j) * np + i];
      di[j] += other;
      other = di[j];
    }
  }
  if (drop)
    for (int j = 0; j < n; ++j) {
      const size_t o = static_cast<size_t>(j) * np;
      for (int i = 0; i < n; ++i) ap[o + i] *= mt[o + i];
    }
  if constexpr (DH > 0) {
    combine<DH, true>(dt, np, 1, q + h * dh, ld, n, dq + h * dh, ld);
    combine<DH>(ap, np, 1, d_heads + h * dh, ld, n, dv + h * dh, ld);
  } else {
    combine_any(dt, np, 1, q + h * dh, ld, n, dh, dq + h * dh, ld, true);
    combine_any(ap, np, 1, d_heads + h * dh, ld, n, dh, dv + h * dh, ld);
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
  transpose_padded(q, s.ld, n, d, np, scale, qt);
  if (kernel) transpose_padded(kernel, n, n, n, np, 1.0f, kt);  // column j of K down the rows: K^T's row j
  for (int h = 0; h < s.heads; ++h)
    head_forward<DH>(s, h, q, v, qt + static_cast<size_t>(h) * s.dh * np, kernel ? kt : nullptr, np, drop, probs, heads,
                     floored, argmax, ts, at);
}

template <int DH>
void backward_heads(const AttentionShape& s, float scale, const float* q, const float* v, const float* probs,
                    const float* drop, const uint8_t* floored, const int32_t* argmax, const float* d_heads, float* dq,
                    float* dv, float* scratch) {
  const int n = s.n, d = s.heads * s.dh, np = padded(n);
  const size_t block = static_cast<size_t>(n) * np;
  float* dot = scratch;
  float* ap = dot + static_cast<size_t>(d) * np;
  float* dt = ap + block;
  float* mt = dt + block;
  transpose_padded(d_heads, s.ld, n, d, np, 1.0f, dot);
  for (int h = 0; h < s.heads; ++h)
    head_backward<DH>(s, h, scale, q, v, dot + static_cast<size_t>(h) * s.dh * np, np, probs, drop, floored, argmax,
                      d_heads, dq, dv, ap, dt, mt);
}

}  // namespace

size_t attention_scratch_floats(int max_n, int d) {
  const size_t np = static_cast<size_t>(padded(std::max(max_n, 1)));
  // forward: Q^T, then K^T, S^T and A^T (padded); backward: dO^T, then A^T, dS^T and M^T (padded).
  return static_cast<size_t>(d) * np + 3 * static_cast<size_t>(max_n) * np;
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
