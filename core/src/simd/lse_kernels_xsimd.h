// xsimd implementation of the LseKernels, templated on the architecture. Included only by the per-ISA
// translation units (lse_arch_*.cpp), which must not include Eigen (each TU is compiled with its own -m flags).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "simd/lse_kernels.h"
#include "simd/madd.h"

namespace inductive::simd {

// exp of a batch, as the kernels use it (exp(-inf) = 0 exactly: masked and padded terms rely on it).
//
// In WebAssembly, xsimd's SSE4.1 exp converts float to int with _mm_cvtps_epi32, which emscripten's SSE emulation
// implements lane by lane with lrint, a scalar libm call per lane; the kernels' exps then cost several times what
// wasm SIMD can do. For float there, 2^n comes instead from the float bits of x log2(e) + 1.5 * 2^23 (the add
// itself rounds to the nearest integer, left in the low mantissa bits), so no conversion instruction is needed;
// e^r on [-ln2/2, ln2/2] is the classic degree-6 minimax polynomial (about 1 ulp, as xsimd's). Elsewhere: xsimd.
template <typename T, class Arch>
xsimd::batch<T, Arch> kernel_exp(const xsimd::batch<T, Arch>& x) {
#if defined(__wasm_simd128__)
  if constexpr (std::is_same_v<T, float>) {
    using B = xsimd::batch<float, Arch>;
    using I = xsimd::batch<int32_t, Arch>;
    const B magic(12582912.0f);  // 1.5 * 2^23
    const B xc = xsimd::min(xsimd::max(x, B(-87.0f)), B(88.0f));
    const B t = xc * B(1.44269504088896341f) + magic;
    const B n = t - magic;
    const B r = (xc - n * B(0.693359375f)) - n * B(-2.12194440e-4f);
    B q(1.9875691500e-4f);
    q = q * r + B(1.3981999507e-3f);
    q = q * r + B(8.3334519073e-3f);
    q = q * r + B(4.1665795894e-2f);
    q = q * r + B(1.6666665459e-1f);
    q = q * r + B(5.0000001201e-1f);
    const B er = q * r * r + r + B(1.0f);
    const I ni = xsimd::bitwise_cast<I>(t) - xsimd::bitwise_cast<I>(magic);
    const B two_n = xsimd::bitwise_cast<B>((ni + I(127)) << 23);
    const B e = er * two_n;
    // Below -87 the result is under float's normal range: 0 (and exactly 0 for -inf); above 88, +inf. NaN stays NaN,
    // as in xsimd's exp (the clamp above, SSE's max, would have made it -87 and the result a silent ~0).
    return xsimd::select(
        x < B(-87.0f), B(0.0f),
        xsimd::select(x > B(88.0f), B(std::numeric_limits<float>::infinity()), xsimd::select(x != x, x, e)));
  }
#endif
  return xsimd::exp(x);
}

template <typename T, class Arch>
struct XsimdKernels {
  using B = xsimd::batch<T, Arch>;
  static constexpr int W = static_cast<int>(B::size);
  static constexpr T kNegInf = -std::numeric_limits<T>::infinity();

  // Tails: the last len % W values go through one more vector step on a padded copy rather than a scalar loop
  // (at p = 10 with 16 lanes the whole row is a tail, and scalar exp would dominate). Padding is chosen so that it
  // contributes nothing: logits -inf (exp gives 0, max ignores it), weights 0.
  static B load_tail(const T* x, int count, T fill) {
    alignas(64) T buf[W];
    std::fill(buf, buf + W, fill);
    std::copy(x, x + count, buf);
    return B::load_aligned(buf);
  }
  static void store_tail(const B& v, T* x, int count) {
    alignas(64) T buf[W];
    v.store_aligned(buf);
    std::copy(buf, buf + count, x);
  }

  static T hmax(const B& v) {
    alignas(64) T lanes[W];
    v.store_aligned(lanes);
    return *std::max_element(lanes, lanes + W);
  }

  static T row_lse(const T* k, const T* g, int len) {
    const T m = row_max(k, g, len);
    if (m == kNegInf) return m;
    return m + std::log(row_sumexp(k, g, m, len));
  }

  static void col_max(const T* k, T f, T* m, int len) {
    const B bf(f);
    int j = 0;
    for (; j + W <= len; j += W)
      xsimd::max(B::load_unaligned(m + j), bf + B::load_unaligned(k + j)).store_unaligned(m + j);
    if (const int r = len - j)
      store_tail(xsimd::max(load_tail(m + j, r, kNegInf), bf + load_tail(k + j, r, kNegInf)), m + j, r);
  }

  static void col_sumexp(const T* k, T f, const T* m, T* acc, int len) {
    const B bf(f);
    const B ninf(kNegInf);
    int j = 0;
    for (; j + W <= len; j += W) {
      const B vm = B::load_unaligned(m + j);
      // Columns whose max is -inf have only -inf terms: add 0 instead of exp(NaN).
      const B e = xsimd::select(vm == ninf, B(T(0)), kernel_exp(bf + B::load_unaligned(k + j) - vm));
      (B::load_unaligned(acc + j) + e).store_unaligned(acc + j);
    }
    if (const int r = len - j) {
      const B vm = load_tail(m + j, r, kNegInf);
      const B e = xsimd::select(vm == ninf, B(T(0)), kernel_exp(bf + load_tail(k + j, r, kNegInf) - vm));
      store_tail(load_tail(acc + j, r, T(0)) + e, acc + j, r);
    }
  }

  static void row_softmax_bwd(const T* k, const T* g, T shift, T w, T* gg, T* gk, int len) {
    const B bs(shift), bw(w);
    int j = 0;
    for (; j + W <= len; j += W) {
      const B d = bw * kernel_exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bs);
      (B::load_unaligned(gg + j) - d).store_unaligned(gg + j);
      (B::load_unaligned(gk + j) - d).store_unaligned(gk + j);
    }
    if (const int r = len - j) {
      const B d = bw * kernel_exp(load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf) - bs);
      store_tail(load_tail(gg + j, r, T(0)) - d, gg + j, r);
      store_tail(load_tail(gk + j, r, T(0)) - d, gk + j, r);
    }
  }

  static T col_softmax_bwd(const T* k, T f, const T* shift, const T* gg, T* gk, int len) {
    const B bf(f);
    B vs(T(0));
    int j = 0;
    for (; j + W <= len; j += W) {
      const B d = B::load_unaligned(gg + j) * kernel_exp(bf + B::load_unaligned(k + j) - B::load_unaligned(shift + j));
      (B::load_unaligned(gk + j) - d).store_unaligned(gk + j);
      vs += d;
    }
    if (const int r = len - j) {
      const B d =
          load_tail(gg + j, r, T(0)) * kernel_exp(bf + load_tail(k + j, r, kNegInf) - load_tail(shift + j, r, T(0)));
      store_tail(load_tail(gk + j, r, T(0)) - d, gk + j, r);
      vs += d;
    }
    return xsimd::hadd(vs);
  }

  static T row_max(const T* k, const T* g, int len) {
    B vm(kNegInf);
    int j = 0;
    for (; j + W <= len; j += W) vm = xsimd::max(vm, B::load_unaligned(g + j) + B::load_unaligned(k + j));
    if (const int r = len - j) vm = xsimd::max(vm, load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf));
    return hmax(vm);
  }

  static T row_sumexp(const T* k, const T* g, T m, int len) {
    B vs(T(0));
    const B bm(m);
    int j = 0;
    for (; j + W <= len; j += W) vs += kernel_exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bm);
    if (const int r = len - j) vs += kernel_exp(load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf) - bm);
    return xsimd::hadd(vs);
  }

  static T plan_row(const T* k, const T* g, T w, T* out, int len) {
    const T m = row_max(k, g, len);
    if (m == kNegInf) {
      std::fill(out, out + len, T(0));
      return m;
    }
    const T s = row_sumexp(k, g, m, len);
    const T scale = w / s;
    const B bm(m), bscale(scale);
    int j = 0;
    for (; j + W <= len; j += W)
      (bscale * kernel_exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bm)).store_unaligned(out + j);
    if (const int r = len - j)
      store_tail(bscale * kernel_exp(load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf) - bm), out + j, r);
    return m + std::log(s);
  }

  static void exp_shift(const T* k, T shift, T* out, int len) {
    const B bs(shift);
    int j = 0;
    for (; j + W <= len; j += W) kernel_exp(B::load_unaligned(k + j) - bs).store_unaligned(out + j);
    if (const int r = len - j) store_tail(kernel_exp(load_tail(k + j, r, kNegInf) - bs), out + j, r);
  }

  // Two accumulators: the FMA latency, not the loads, bounds one.
  static T dot(const T* e, const T* v, int len) {
    B s0(T(0)), s1(T(0));
    int j = 0;
    for (; j + 2 * W <= len; j += 2 * W) {
      s0 = madd(B::load_unaligned(e + j), B::load_unaligned(v + j), s0);
      s1 = madd(B::load_unaligned(e + j + W), B::load_unaligned(v + j + W), s1);
    }
    for (; j + W <= len; j += W) s0 = madd(B::load_unaligned(e + j), B::load_unaligned(v + j), s0);
    if (const int r = len - j) s1 = madd(load_tail(e + j, r, T(0)), load_tail(v + j, r, T(0)), s1);
    return xsimd::hadd(s0 + s1);
  }

  static void axpy(const T* e, T alpha, T* acc, int len) {
    const B ba(alpha);
    int j = 0;
    for (; j + W <= len; j += W)
      madd(ba, B::load_unaligned(e + j), B::load_unaligned(acc + j)).store_unaligned(acc + j);
    if (const int r = len - j) store_tail(madd(ba, load_tail(e + j, r, T(0)), load_tail(acc + j, r, T(0))), acc + j, r);
  }

  // dot's exact operations (two accumulators over 2W chunks, one more W chunk into the first, the tail into the
  // second) for R rows at once, sharing the loads of x.
  template <int R>
  static void dot_rows(const T* m, long ld, const T* x, int len, T* y) {
    B s0[R], s1[R];
    for (int r = 0; r < R; ++r) s0[r] = s1[r] = B(T(0));
    int j = 0;
    for (; j + 2 * W <= len; j += 2 * W) {
      const B x0 = B::load_unaligned(x + j), x1 = B::load_unaligned(x + j + W);
      for (int r = 0; r < R; ++r) {
        s0[r] = madd(B::load_unaligned(m + r * ld + j), x0, s0[r]);
        s1[r] = madd(B::load_unaligned(m + r * ld + j + W), x1, s1[r]);
      }
    }
    for (; j + W <= len; j += W) {
      const B x0 = B::load_unaligned(x + j);
      for (int r = 0; r < R; ++r) s0[r] = madd(B::load_unaligned(m + r * ld + j), x0, s0[r]);
    }
    if (const int rest = len - j) {
      const B x0 = load_tail(x + j, rest, T(0));
      for (int r = 0; r < R; ++r) s1[r] = madd(load_tail(m + r * ld + j, rest, T(0)), x0, s1[r]);
    }
    for (int r = 0; r < R; ++r) y[r] = xsimd::hadd(s0[r] + s1[r]);
  }

  static void gemv(const T* m, int rows, int cols, long ld, const T* x, T* y) {
    int r = 0;
    for (; r + 4 <= rows; r += 4) dot_rows<4>(m + r * ld, ld, x, cols, y + r);
    for (; r < rows; ++r) dot_rows<1>(m + r * ld, ld, x, cols, y + r);
  }

  // axpy's operation, acc = fma(w_r, m_r, acc), row after row on V vectors of z held in registers; with `tail`, one
  // vector of count < W columns, padded as axpy pads its tail.
  template <int V, bool tail>
  static void axpy_rows(const T* m, int rows, long ld, const T* w, T* z, int count) {
    B acc[V];
    for (int v = 0; v < V; ++v) acc[v] = B(T(0));
    for (int r = 0; r < rows; ++r) {
      if (w[r] == T(0)) continue;
      const B bw(w[r]);
      const T* row = m + r * ld;
      for (int v = 0; v < V; ++v)
        acc[v] = madd(bw, tail ? load_tail(row, count, T(0)) : B::load_unaligned(row + v * W), acc[v]);
    }
    for (int v = 0; v < V; ++v) {
      if constexpr (tail)
        store_tail(acc[v], z, count);
      else
        acc[v].store_unaligned(z + v * W);
    }
  }

  static void gemv_t(const T* m, int rows, int cols, long ld, const T* w, T* z) {
    int j = 0;
    for (; j + 4 * W <= cols; j += 4 * W) axpy_rows<4, false>(m + j, rows, ld, w, z + j, 4 * W);
    for (; j + W <= cols; j += W) axpy_rows<1, false>(m + j, rows, ld, w, z + j, W);
    if (j < cols) axpy_rows<1, true>(m + j, rows, ld, w, z + j, cols - j);
  }

  static void log_plus(const T* x, const T* add, T c, T* out, int len) {
    const B bc(c), zero(T(0)), ninf(kNegInf);
    auto one = [&](const B& vx, const B& va) { return xsimd::select(vx > zero, xsimd::log(vx) + va + bc, ninf); };
    int j = 0;
    for (; j + W <= len; j += W)
      one(B::load_unaligned(x + j), add ? B::load_unaligned(add + j) : zero).store_unaligned(out + j);
    if (const int r = len - j)
      store_tail(one(load_tail(x + j, r, T(1)), add ? load_tail(add + j, r, T(0)) : zero), out + j, r);
  }

  static void clamp_range(T* x, int rows, int cols, long ld, T limit, T* lo, T* hi) {
    if (ld == cols && static_cast<long>(rows) * cols <= std::numeric_limits<int>::max()) {
      cols *= rows;  // contiguous rows as one: p 10 would otherwise be all tail
      rows = 1;
    }
    const B up(limit), down(-limit);
    B l(*lo), h(*hi);
    for (int r = 0; r < rows; ++r) {
      T* row = x + r * ld;
      int j = 0;
      for (; j + W <= cols; j += W) {
        const B v = xsimd::min(xsimd::max(B::load_unaligned(row + j), down), up);
        v.store_unaligned(row + j);
        l = xsimd::min(l, v);
        h = xsimd::max(h, v);
      }
      if (const int rest = cols - j) {
        // The padding repeats a value of the tail, which leaves its min and max as they are (p = 10 is all tail).
        const B v = xsimd::min(xsimd::max(load_tail(row + j, rest, row[j]), down), up);
        store_tail(v, row + j, rest);
        l = xsimd::min(l, v);
        h = xsimd::max(h, v);
      }
    }
    *lo = -hmax(-l);
    *hi = hmax(h);
  }

  static const LseKernels<T>& table(const char* name) {
    static const LseKernels<T> t{
        name,       &row_lse, &col_max, &col_sumexp, &row_softmax_bwd, &col_softmax_bwd, &plan_row,
        &exp_shift, &dot,     &axpy,    &gemv,       &gemv_t,          &log_plus,        &clamp_range};
    return t;
  }
};

}  // namespace inductive::simd
