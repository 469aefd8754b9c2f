// Register-blocked products (see small_gemm.h). Compiled with the build's default xsimd architecture, without Eigen
// (this TU must not mix Eigen's inline code with other -m flags).
#include "simd/small_gemm.h"

#include <xsimd/xsimd.hpp>

namespace inductive::simd {

namespace {

using B = xsimd::batch<float, xsimd::default_arch>;
constexpr int W = static_cast<int>(B::size);

// Dot products of rows a[0..R) with rows b[0..S) over k, R, S <= 4: R x S vector accumulators, reduced at the end.
template <int R, int S>
void dot_block(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int k) {
  B acc[R][S];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < S; ++j) acc[i][j] = B(0.0f);
  int t = 0;
  for (; t + W <= k; t += W) {
    B vb[S];
    for (int j = 0; j < S; ++j) vb[j] = B::load_unaligned(b + static_cast<long>(j) * ldb + t);
    for (int i = 0; i < R; ++i) {
      const B va = B::load_unaligned(a + static_cast<long>(i) * lda + t);
      for (int j = 0; j < S; ++j) acc[i][j] = xsimd::fma(va, vb[j], acc[i][j]);
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
  for (; j < n; ++j) dot_block<R, 1>(a, lda, b + static_cast<long>(j) * ldb, ldb, c + j, ldc, k);
}

// Rows [i, i + R) and V vectors of columns [col, col + V W) of C = alpha sum_t A(i, t) B(t, col..), where A(i, t) is
// a[t * a_t + i * a_i]: a[t, i] for A^T B (a_t = lda, a_i = 1), a[i, t] for A B (a_t = 1, a_i = lda).
template <int R, int V>
void outer_block(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int r, int col,
                 float alpha, bool accumulate) {
  B acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = B(0.0f);
  for (int t = 0; t < r; ++t) {
    const float* brow = b + static_cast<long>(t) * ldb + col;
    B vb[V];
    for (int v = 0; v < V; ++v) vb[v] = B::load_unaligned(brow + v * W);
    for (int i = 0; i < R; ++i) {
      const B s(a[t * a_t + i * a_i]);
      for (int v = 0; v < V; ++v) acc[i][v] = xsimd::fma(s, vb[v], acc[i][v]);
    }
  }
  const B va(alpha);
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) {
      float* out = c + static_cast<long>(i) * ldc + col + v * W;
      B value = va * acc[i][v];
      if (accumulate) value += B::load_unaligned(out);
      value.store_unaligned(out);
    }
}

template <int R>
void outer_rows(const float* a, long a_t, long a_i, const float* b, int ldb, float* c, int ldc, int n, int r,
                float alpha, bool accumulate) {
  int col = 0;
  for (; col + 2 * W <= n; col += 2 * W) outer_block<R, 2>(a, a_t, a_i, b, ldb, c, ldc, r, col, alpha, accumulate);
  for (; col + W <= n; col += W) outer_block<R, 1>(a, a_t, a_i, b, ldb, c, ldc, r, col, alpha, accumulate);
  for (; col < n; ++col)
    for (int i = 0; i < R; ++i) {
      float s = 0.0f;
      for (int t = 0; t < r; ++t) s += a[t * a_t + i * a_i] * b[static_cast<long>(t) * ldb + col];
      float& out = c[static_cast<long>(i) * ldc + col];
      out = accumulate ? out + alpha * s : alpha * s;
    }
}

}  // namespace

void gemm_abt(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k) {
  int i = 0;
  for (; i + 4 <= m; i += 4)
    dot_rows<4>(a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc, n, k);
  for (; i < m; ++i)
    dot_rows<1>(a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc, n, k);
}

void gemm_atb(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int r, float alpha,
              bool accumulate) {
  int j = 0;
  for (; j + 4 <= m; j += 4)
    outer_rows<4>(a + j, lda, 1, b, ldb, c + static_cast<long>(j) * ldc, ldc, n, r, alpha, accumulate);
  for (; j < m; ++j) outer_rows<1>(a + j, lda, 1, b, ldb, c + static_cast<long>(j) * ldc, ldc, n, r, alpha, accumulate);
}

void gemm_ab(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k,
             bool accumulate) {
  int i = 0;
  for (; i + 4 <= m; i += 4)
    outer_rows<4>(a + static_cast<long>(i) * lda, 1, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc, n, k, 1.0f,
                  accumulate);
  for (; i < m; ++i)
    outer_rows<1>(a + static_cast<long>(i) * lda, 1, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc, n, k, 1.0f,
                  accumulate);
}

}  // namespace inductive::simd
