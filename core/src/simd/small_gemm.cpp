// Register-blocked products (see small_gemm.h). Compiled with the build's default xsimd architecture, without Eigen
// (this TU must not mix Eigen's inline code with other -m flags).
#include "simd/small_gemm.h"

#include <algorithm>

#include <xsimd/xsimd.hpp>

#include "simd/madd.h"

namespace inductive::simd {

namespace {

using B = xsimd::batch<float, xsimd::default_arch>;
constexpr int W = static_cast<int>(B::size);

// `v`, loaded into a register of its own. GCC folds a vector load into every FMA that uses it (a memory operand),
// so a row of A used by S multiply-adds was read S times from L1: 20 loads for the 16 multiply-adds of a 4 x 4 dot
// block, which made the loads, not the FMAs, bound the narrow products (OTK's x z^T at p 10: 86 GFLOP/s, against
// 213 at p 64 in the outer form). An empty asm that takes the value in a vector register stops the folding.
inline B in_register(B v) {
#if defined(__x86_64__) || defined(__i386__)
  typename B::register_type r = v;
  asm("" : "+v"(r));
  return B(r);
#else
  return v;
#endif
}

// Which vector each lane of xsimd's haddp sums. haddp reduces W vectors into one, lane by lane, with shuffles shared
// between the vectors, where hadd takes about 8 operations for each one: a 4 x 4 dot block at AVX-512's W 16 spent
// about a tenth of its time in its 16 hadds. But xsimd 8.1's AVX-512 haddp returns the sums permuted ([0, 1, 4, 5, 2,
// 3, 6, 7, ...]), so the order is read off once here, and checked (every lane the whole of one distinct vector);
// where the check fails, the blocks keep hadd.
struct HaddpLanes {
  int of[W];  // lane k sums input vector of[k]
  bool usable = true;
  HaddpLanes() {
    B rows[W];
    alignas(64) float out[W];
    for (int r = 0; r < W; ++r) rows[r] = B(static_cast<float>(r));
    xsimd::haddp(rows).store_aligned(out);
    bool seen[W] = {};
    for (int k = 0; k < W && usable; ++k) {
      const int r = static_cast<int>(out[k]) / W;
      usable = out[k] == static_cast<float>(W * r) && r >= 0 && r < W && !seen[r];
      if (usable) seen[r] = true, of[k] = r;
    }
    for (int shift = 0; shift < W && usable; ++shift) {  // vector r's one nonzero lane at every position in turn
      for (int r = 0; r < W; ++r) {
        alignas(64) float v[W] = {};
        v[(r + shift) % W] = static_cast<float>(r + 1);
        rows[r] = B::load_aligned(v);
      }
      xsimd::haddp(rows).store_aligned(out);
      for (int k = 0; k < W; ++k) usable = usable && out[k] == static_cast<float>(of[k] + 1);
    }
  }
};

const HaddpLanes& haddp_lanes() {
  static const HaddpLanes lanes;
  return lanes;
}

// Dot products of rows a[0..R) with rows b[0..S) over k, R, S <= 4: R x S vector accumulators, reduced at the end.
template <int R, int S>
void dot_block(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int k) {
  B acc[R][S];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < S; ++j) acc[i][j] = B(0.0f);
  int t = 0;
  for (; t + W <= k; t += W) {
    B vb[S];
    for (int j = 0; j < S; ++j) vb[j] = in_register(B::load_unaligned(b + static_cast<long>(j) * ldb + t));
    for (int i = 0; i < R; ++i) {
      const B va = in_register(B::load_unaligned(a + static_cast<long>(i) * lda + t));
      for (int j = 0; j < S; ++j) acc[i][j] = madd(va, vb[j], acc[i][j]);
    }
  }
  if constexpr (R * S == W) {
    const HaddpLanes& lanes = haddp_lanes();
    if (lanes.usable && t == k) {  // lane i S + j: the sum of acc[i][j]
      B rows[W];
      for (int l = 0; l < W; ++l) rows[lanes.of[l]] = acc[l / S][l % S];
      alignas(64) float out[W];
      xsimd::haddp(rows).store_aligned(out);
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < S; ++j) c[static_cast<long>(i) * ldc + j] = out[i * S + j];
      return;
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < S; ++j) {
      float s = xsimd::hadd(acc[i][j]);
      for (int u = t; u < k; ++u) s += a[static_cast<long>(i) * lda + u] * b[static_cast<long>(j) * ldb + u];
      c[static_cast<long>(i) * ldc + j] = s;
    }
}

template <int R>
void dot_rows(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int n, int k) {
  int j = 0;
  for (; j + 4 <= n; j += 4) dot_block<R, 4>(a, lda, b + static_cast<long>(j) * ldb, ldb, c + j, ldc, k);
  // The last 1-3 rows of b in one block: each row of a is read once for them, not once per row of b.
  const float* bj = b + static_cast<long>(j) * ldb;
  if (n - j == 3) dot_block<R, 3>(a, lda, bj, ldb, c + j, ldc, k);
  if (n - j == 2) dot_block<R, 2>(a, lda, bj, ldb, c + j, ldc, k);
  if (n - j == 1) dot_block<R, 1>(a, lda, bj, ldb, c + j, ldc, k);
}

// How a block's accumulators start and end, so that a long sum can run in chunks of its terms with the partial sums
// parked in C between them: `load` starts from C (a later chunk; else from 0); at the end C = alpha acc (+ the old C
// when `add`). A chunked sum is the same FMA chain as an unchunked one, so the bits do not depend on the chunking.
struct Ends {
  bool load = false;
  float alpha = 1.0f;
  bool add = false;
  // Offset to the block's first row and column 0 (row_scale and residual) by the caller; nullptr: none.
  const RowEpilogue* epilogue = nullptr;
};

// The epilogue's steps on the vector v of row i, columns [col, col + W) (apply_epilogue, vectorised).
inline B finish(B v, const RowEpilogue& e, int i, int col) {
  if (e.bias) v += B::load_unaligned(e.bias + col);
  if (e.row_scale) v *= B(e.row_scale[i]);
  if (e.residual) v += B::load_unaligned(e.residual + static_cast<long>(i) * e.ld_residual + col);
  if (e.relu) v = xsimd::max(v, B(0.0f));
  return v;
}

// Rows [i, i + R) and V vectors of columns [col, col + V W) of C = alpha sum_{t in [t0, t1)} A(i, t) B(t, col..),
// where A(i, t) is a[t * a_t + i * a_i]: a[t, i] for A^T B (a_t = lda, a_i = 1), a[i, t] for A B (a_t = 1,
// a_i = lda); then the next V vectors, `strips` times (one call for a row block's strips: in wasm a call's set-up
// had cost about a sixth of a 64-term strip).
template <int R, int V>
void outer_block(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int t0, int t1,
                 int col, int strips, Ends ends) {
  for (int strip = 0; strip < strips; ++strip, col += V * W) {
    B acc[R][V];
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < V; ++v)
        acc[i][v] = ends.load ? B::load_unaligned(c + static_cast<long>(i) * ldc + col + v * W) : B(0.0f);
    // Pointers stepped once a term, not indices multiplied: clang kept the index multiplies inside the wasm loop,
    // and V8 compiled them as written (the relaxed wasm products ran at 35 GFLOP/s with them, 39-41 without).
    const float* at = a + t0 * a_t;
    const float* brow = b + static_cast<long>(t0) * ldb + col;
    for (int t = t0; t < t1; ++t, at += a_t, brow += ldb) {
      B vb[V];
      for (int v = 0; v < V; ++v) vb[v] = B::load_unaligned(brow + v * W);
      for (int i = 0; i < R; ++i) {
        const B s(at[i * a_i]);
        for (int v = 0; v < V; ++v) acc[i][v] = madd(s, vb[v], acc[i][v]);
      }
    }
    const B va(ends.alpha);
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < V; ++v) {
        float* out = c + static_cast<long>(i) * ldc + col + v * W;
        B value = ends.alpha == 1.0f ? acc[i][v] : va * acc[i][v];
        if (ends.add) value += B::load_unaligned(out);
        if (ends.epilogue) value = finish(value, *ends.epilogue, i, col + v * W);
        value.store_unaligned(out);
      }
  }
}

// Rows of C in blocks of kRows. Natively 6: 6 x 2 vectors of accumulators, the 2 vectors of B and a broadcast take
// 15 of AVX2's 16 registers; with 4 rows per block the broadcasts and loads of B bounded the kernel, and Eigen's
// packed GEMM was level with it; with 6 it runs up to 1.7x faster than Eigen's on these tall-skinny shapes (AVX2,
// `bin/otke_bench --products`), with no packing of A and no memset of C. In wasm 4: V8 keeps one of x64's 16 vector
// registers for itself, and with 6 rows the kernel spilled and ran 20-30 % slower than with 4 (Node 20, a
// micro-benchmark of the kernels compiled both ways).
#if defined(INDUCTIVE_RELAXED_SIMD)
constexpr int kRows = 2;  // x kStrip = 4 vectors (below)
#elif defined(__EMSCRIPTEN__)
constexpr int kRows = 4;
#else
constexpr int kRows = 6;
#endif

// Rows [0, rows) of C, rows <= kRows, for the columns [col, col + V W).
template <int V>
void row_block(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int rows, int t0, int t1,
               int col, int strips, Ends ends) {
  switch (rows) {
    case 6:
      return outer_block<6, V>(a, a_t, a_i, b, ldb, c, ldc, t0, t1, col, strips, ends);
    case 5:
      return outer_block<5, V>(a, a_t, a_i, b, ldb, c, ldc, t0, t1, col, strips, ends);
    case 4:
      return outer_block<4, V>(a, a_t, a_i, b, ldb, c, ldc, t0, t1, col, strips, ends);
    case 3:
      return outer_block<3, V>(a, a_t, a_i, b, ldb, c, ldc, t0, t1, col, strips, ends);
    case 2:
      return outer_block<2, V>(a, a_t, a_i, b, ldb, c, ldc, t0, t1, col, strips, ends);
    case 1:
      return outer_block<1, V>(a, a_t, a_i, b, ldb, c, ldc, t0, t1, col, strips, ends);
    default:
      return;
  }
}

// Vectors of C's columns per strip of a row block (kRows x kStrip accumulators). 2, except in the relaxed-SIMD
// wasm modules (simd/madd.h), whose fused multiply-adds ran faster on 2 rows x 4 vectors than on 4 x 2
// (bench/wasm_fma_probe.py): the same 8 accumulators, half the broadcasts per multiply-add.
#if defined(INDUCTIVE_RELAXED_SIMD)
constexpr int kStrip = 4;
#else
constexpr int kStrip = 2;
#endif

// Rows [0, rows) of C for the vector columns [col, col + vectors W): whole strips of kStrip vectors, then the rest.
void strip_block(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int rows, int t0,
                 int t1, int col, int vectors, Ends ends) {
  if (const int whole = vectors / kStrip; whole > 0) {
    row_block<kStrip>(a, a_t, a_i, b, ldb, c, ldc, rows, t0, t1, col, whole, ends);
    col += whole * kStrip * W;
    vectors -= whole * kStrip;
  }
  if (vectors >= 2) {
    row_block<2>(a, a_t, a_i, b, ldb, c, ldc, rows, t0, t1, col, 1, ends);
    col += 2 * W;
    vectors -= 2;
  }
  if (vectors == 1) row_block<1>(a, a_t, a_i, b, ldb, c, ldc, rows, t0, t1, col, 1, ends);
}

// The columns past the last whole vector, one dot product each.
void scalar_columns(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int m, int r,
                    int col0, int n, float alpha, bool accumulate, const RowEpilogue* epilogue) {
  for (int i = 0; i < m; ++i)
    for (int col = col0; col < n; ++col) {
      float s = 0.0f;
      for (int t = 0; t < r; ++t) s += a[t * a_t + i * a_i] * b[static_cast<long>(t) * ldb + col];
      float& out = c[static_cast<long>(i) * ldc + col];
      out = accumulate ? out + alpha * s : alpha * s;
      if (epilogue) out = apply_epilogue(out, *epilogue, i, col);
    }
}

// Terms of A^T B's sum per chunk: a chunk of B (kDepth rows, 2W columns: 8 KB on AVX2) stays in L1 while every row
// block of C reads it, and the chunk's rows of A (m <= 64 columns: 32 KB) in L2. Unchunked, each row block streamed
// all of B past L2 (P^T x in OTK pooling: x is n x k, 2 MB at k 512), and the kernel ran below Eigen's.
constexpr int kDepth = 128;

// C (m x n) = alpha sum_t A(:, t) B(t, :) (see outer_block for A's layout). `by_columns` (A^T B, where B is the long
// operand): the sum in chunks of kDepth terms, each chunk's column strips outside its row blocks. Otherwise (A B,
// where B is a small weight matrix and A the long operand): a row block of A stays in L1 while B streams past it.
void outer_product(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int m, int n, int r,
                   float alpha, bool accumulate, bool by_columns, const RowEpilogue* epilogue = nullptr) {
  const int vectors = n / W, single = vectors * W;
  if (by_columns && r > kDepth && (!accumulate || alpha == 1.0f) && !epilogue) {
    // Accumulating with alpha 1, the chain starts from C's old value; else the last chunk applies alpha.
    for (int t0 = 0; t0 < r; t0 += kDepth) {
      const int t1 = std::min(r, t0 + kDepth);
      const Ends ends{t0 > 0 || accumulate, t1 == r ? alpha : 1.0f, false};
      for (int v = 0; v < vectors; v += kStrip)
        for (int i = 0; i < m; i += kRows)
          strip_block(a + i * a_i, a_t, a_i, b, ldb, c + static_cast<long>(i) * ldc, ldc, std::min(kRows, m - i), t0,
                      t1, v * W, std::min(kStrip, vectors - v), ends);
    }
  } else {
    for (int i = 0; i < m; i += kRows) {
      RowEpilogue rows_epilogue;
      if (epilogue) {
        rows_epilogue = *epilogue;
        if (rows_epilogue.row_scale) rows_epilogue.row_scale += i;
        if (rows_epilogue.residual) rows_epilogue.residual += static_cast<long>(i) * rows_epilogue.ld_residual;
      }
      const Ends ends{false, alpha, accumulate, epilogue ? &rows_epilogue : nullptr};
      strip_block(a + i * a_i, a_t, a_i, b, ldb, c + static_cast<long>(i) * ldc, ldc, std::min(kRows, m - i), 0, r, 0,
                  vectors, ends);
    }
  }
  scalar_columns(a, a_t, a_i, b, ldb, c, ldc, m, r, single, n, alpha, accumulate, epilogue);
}

}  // namespace

int vector_floats() { return W; }

void gemm_abt(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k) {
  int i = 0;
  for (; i + 4 <= m; i += 4)
    dot_rows<4>(a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc, n, k);
  for (; i < m; ++i)
    dot_rows<1>(a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc, n, k);
}

void gemm_atb(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int r, float alpha,
              bool accumulate) {
  outer_product(a, lda, 1, b, ldb, c, ldc, m, n, r, alpha, accumulate, true);
}

void gemm_ab(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k, bool accumulate,
             const RowEpilogue* epilogue) {
  outer_product(a, 1, lda, b, ldb, c, ldc, m, n, k, 1.0f, accumulate, false, epilogue);
}

}  // namespace inductive::simd
