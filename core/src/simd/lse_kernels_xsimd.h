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
    for (; j < len; ++j) m[j] = std::max(m[j], f + k[j]);
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
    for (; j < len; ++j)
      if (m[j] != kNegInf) acc[j] += std::exp(f + k[j] - m[j]);
  }

  static void row_softmax_bwd(const T* k, const T* g, T shift, T w, T* gg, T* gk, int len) {
    const B bs(shift), bw(w);
    int j = 0;
    for (; j + W <= len; j += W) {
      const B d = bw * xsimd::exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bs);
      (B::load_unaligned(gg + j) - d).store_unaligned(gg + j);
      (B::load_unaligned(gk + j) - d).store_unaligned(gk + j);
    }
    for (; j < len; ++j) {
      const T d = w * std::exp(g[j] + k[j] - shift);
      gg[j] -= d;
      gk[j] -= d;
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
    T s = xsimd::hadd(vs);
    for (; j < len; ++j) {
      const T d = gg[j] * std::exp(f + k[j] - shift[j]);
      gk[j] -= d;
      s += d;
    }
    return s;
  }

  static T row_max(const T* k, const T* g, int len) {
    B vm(kNegInf);
    int j = 0;
    for (; j + W <= len; j += W) vm = xsimd::max(vm, B::load_unaligned(g + j) + B::load_unaligned(k + j));
    T m = hmax(vm);
    for (; j < len; ++j) m = std::max(m, g[j] + k[j]);
    return m;
  }

  static T row_sumexp(const T* k, const T* g, T m, int len) {
    B vs(T(0));
    const B bm(m);
    int j = 0;
    for (; j + W <= len; j += W) vs += xsimd::exp(B::load_unaligned(g + j) + B::load_unaligned(k + j) - bm);
    T s = xsimd::hadd(vs);
    for (; j < len; ++j) s += std::exp(g[j] + k[j] - m);
    return s;
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
    for (; j < len; ++j) out[j] = scale * std::exp(g[j] + k[j] - m);
    return m + std::log(s);
  }

  static const LseKernels<T>& table(const char* name) {
    static const LseKernels<T> t{name, &row_lse, &col_max, &col_sumexp, &row_softmax_bwd, &col_softmax_bwd, &plan_row};
    return t;
  }
};

}  // namespace inductive::simd
