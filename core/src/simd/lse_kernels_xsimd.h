// xsimd implementation of the LseKernels, templated on the architecture. Included only by the per-ISA
// translation units (lse_arch_*.cpp), which must not include Eigen (each TU is compiled with its own -m flags).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "simd/lse_kernels.h"

namespace inductive::simd {

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
    for (; j + W <= len; j += W) xsimd::max(B::load_unaligned(m + j), bf + B::load_unaligned(k + j)).store_unaligned(m + j);
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
      const B e = xsimd::select(vm == ninf, B(T(0)), xsimd::exp(bf + B::load_unaligned(k + j) - vm));
      (B::load_unaligned(acc + j) + e).store_unaligned(acc + j);
    }
    if (const int r = len - j) {
      const B vm = load_tail(m + j, r, kNegInf);
      const B e = xsimd::select(vm == ninf, B(T(0)), xsimd::exp(bf + load_tail(k + j, r, kNegInf) - vm));
      store_tail(load_tail(acc + j, r, T(0)) + e, acc + j, r);
    }
  }

  static void row_softmax_bwd(const T* k, const T* g, T shift, T w, T* gg, T* gk, int len) {
    const B bs(shift), bw(w);
    int j = 0;
    for (; j + W <= len; j += W) {
      const B d = bw * xsimd::exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bs);
      (B::load_unaligned(gg + j) - d).store_unaligned(gg + j);
      (B::load_unaligned(gk + j) - d).store_unaligned(gk + j);
    }
    if (const int r = len - j) {
      const B d = bw * xsimd::exp(load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf) - bs);
      store_tail(load_tail(gg + j, r, T(0)) - d, gg + j, r);
      store_tail(load_tail(gk + j, r, T(0)) - d, gk + j, r);
    }
  }

  static T col_softmax_bwd(const T* k, T f, const T* shift, const T* gg, T* gk, int len) {
    const B bf(f);
    B vs(T(0));
    int j = 0;
    for (; j + W <= len; j += W) {
      const B d = B::load_unaligned(gg + j) * xsimd::exp(bf + B::load_unaligned(k + j) - B::load_unaligned(shift + j));
      (B::load_unaligned(gk + j) - d).store_unaligned(gk + j);
      vs += d;
    }
    if (const int r = len - j) {
      const B d = load_tail(gg + j, r, T(0)) *
                  xsimd::exp(bf + load_tail(k + j, r, kNegInf) - load_tail(shift + j, r, T(0)));
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
    for (; j + W <= len; j += W) vs += xsimd::exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bm);
    if (const int r = len - j) vs += xsimd::exp(load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf) - bm);
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
      (bscale * xsimd::exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bm)).store_unaligned(out + j);
    if (const int r = len - j)
      store_tail(bscale * xsimd::exp(load_tail(g + j, r, T(0)) + load_tail(k + j, r, kNegInf) - bm), out + j, r);
    return m + std::log(s);
  }

  static const LseKernels<T>& table(const char* name) {
    static const LseKernels<T> t{name, &row_lse, &col_max, &col_sumexp, &row_softmax_bwd, &col_softmax_bwd, &plan_row};
    return t;
  }
};

}  // namespace inductive::simd
