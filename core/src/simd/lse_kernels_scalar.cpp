// Scalar twin of the SIMD kernels: the reference the tests hold every ISA to.
#include <algorithm>
#include <cmath>
#include <limits>

#include "simd/lse_kernels.h"

namespace inductive::simd {
namespace {

template <typename T>
T row_lse_max(const T* k, const T* g, int len) {
  T m = -std::numeric_limits<T>::infinity();
  for (int j = 0; j < len; ++j) m = std::max(m, g[j] + k[j]);
  return m;
}

template <typename T>
T row_lse(const T* k, const T* g, int len) {
  const T m = row_lse_max(k, g, len);
  if (m == -std::numeric_limits<T>::infinity()) return m;
  T s = 0;
  for (int j = 0; j < len; ++j) s += std::exp(g[j] + k[j] - m);
  return m + std::log(s);
}

template <typename T>
void col_max(const T* k, T f, T* m, int len) {
  for (int j = 0; j < len; ++j) m[j] = std::max(m[j], f + k[j]);
}

template <typename T>
void col_sumexp(const T* k, T f, const T* m, T* acc, int len) {
  for (int j = 0; j < len; ++j) {
    // m[j] = -inf means every term of that column is -inf: the column sum is 0 (avoid -inf - -inf).
    if (m[j] != -std::numeric_limits<T>::infinity()) acc[j] += std::exp(f + k[j] - m[j]);
  }
}

template <typename T>
void row_softmax_bwd(const T* k, const T* g, T shift, T w, T* gg, T* gk, int len) {
  for (int j = 0; j < len; ++j) {
    const T d = w * std::exp(g[j] + k[j] - shift);
    gg[j] -= d;
    gk[j] -= d;
  }
}

template <typename T>
T col_softmax_bwd(const T* k, T f, const T* shift, const T* gg, T* gk, int len) {
  T s = 0;
  for (int j = 0; j < len; ++j) {
    const T d = gg[j] * std::exp(f + k[j] - shift[j]);
    gk[j] -= d;
    s += d;
  }
  return s;
}

template <typename T>
T plan_row(const T* k, const T* g, T w, T* out, int len) {
  const T m = row_lse_max(k, g, len);
  if (m == -std::numeric_limits<T>::infinity()) {
    std::fill(out, out + len, T(0));
    return m;
  }
  T s = 0;
  for (int j = 0; j < len; ++j) s += std::exp(g[j] + k[j] - m);
  const T scale = w / s;
  for (int j = 0; j < len; ++j) out[j] = scale * std::exp(g[j] + k[j] - m);
  return m + std::log(s);
}

template <typename T>
void exp_shift(const T* k, T shift, T* out, int len) {
  for (int j = 0; j < len; ++j) out[j] = std::exp(k[j] - shift);
}

template <typename T>
T dot(const T* e, const T* v, int len) {
  T s = 0;
  for (int j = 0; j < len; ++j) s += e[j] * v[j];
  return s;
}

template <typename T>
void axpy(const T* e, T alpha, T* acc, int len) {
  for (int j = 0; j < len; ++j) acc[j] += alpha * e[j];
}

template <typename T>
void gemv(const T* m, int rows, int cols, long ld, const T* x, T* y) {
  for (int r = 0; r < rows; ++r) y[r] = dot(m + r * ld, x, cols);
}

template <typename T>
void gemv_t(const T* m, int rows, int cols, long ld, const T* w, T* z) {
  std::fill(z, z + cols, T(0));
  for (int r = 0; r < rows; ++r)
    if (w[r] != T(0)) axpy(m + r * ld, w[r], z, cols);
}

template <typename T>
void log_plus(const T* x, const T* add, T c, T* out, int len) {
  for (int j = 0; j < len; ++j)
    out[j] = x[j] > 0 ? std::log(x[j]) + (add ? add[j] : T(0)) + c : -std::numeric_limits<T>::infinity();
}

template <typename T>
void clamp_range(T* x, int rows, int cols, long ld, T limit, T* lo, T* hi) {
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j) {
      T& v = x[r * ld + j];
      v = std::min(std::max(v, -limit), limit);
      *lo = std::min(*lo, v);
      *hi = std::max(*hi, v);
    }
}

}  // namespace

template <typename T>
const LseKernels<T>& scalar_kernels() {
  static const LseKernels<T> table{"scalar",
                                   &row_lse<T>,
                                   &col_max<T>,
                                   &col_sumexp<T>,
                                   &row_softmax_bwd<T>,
                                   &col_softmax_bwd<T>,
                                   &plan_row<T>,
                                   &exp_shift<T>,
                                   &dot<T>,
                                   &axpy<T>,
                                   &gemv<T>,
                                   &gemv_t<T>,
                                   &log_plus<T>,
                                   &clamp_range<T>};
  return table;
}

template const LseKernels<float>& scalar_kernels<float>();
template const LseKernels<double>& scalar_kernels<double>();

}  // namespace inductive::simd
