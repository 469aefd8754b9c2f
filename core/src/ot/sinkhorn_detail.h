// Pieces shared by the Sinkhorn forward and backward passes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "inductive/elementwise.h"
#include "inductive/parallel.h"
#include "inductive/sinkhorn.h"
#include "simd/lse_kernels.h"

namespace inductive::detail {

// |C/eps| is clamped here: beyond it float potentials would overflow (and the plan is already the
// unregularised one to working precision). The gradient of a clamped entry is 0.
constexpr double kMaxLogit = elementwise::kMaxLogit;  // one definition for the CPU and the device

// One problem of a batch, with its true sizes and row stride (= p_max).
template <typename T>
struct ProblemSlice {
  const T* cost;
  int n, p, ld;
  const T* a;  // nullptr: uniform
  const T* b;
};

template <typename T>
ProblemSlice<T> slice(const SinkhornProblem<T>& pr, int bi) {
  const int64_t off = static_cast<int64_t>(bi) * pr.n_max * pr.p_max;
  return {pr.cost + off,
          pr.n ? pr.n[bi] : pr.n_max,
          pr.p ? pr.p[bi] : pr.p_max,
          pr.p_max,
          pr.a ? pr.a + static_cast<int64_t>(bi) * pr.n_max : nullptr,
          pr.b ? pr.b + static_cast<int64_t>(bi) * pr.p_max : nullptr};
}

// K = -C/eps (or S/eps for similarities), clamped to +-kMaxLogit, in rows of stride ld (k may be the cost itself),
// and K's range when asked (`lo`, `hi`: the scaling domain's check). Each entry is elementwise::logit's (the
// product in double, rounded once, clamped); clamping the rounded value to the rounded limit gives the same number,
// rounding being monotonic, so the clamp and the range run in T as one vector pass (clamp_range), after products in
// blocks the compiler vectorises. As one scalar loop with the clamp's branches, then a scalar range scan, they were
// 30 % of a 10-iteration batch.
template <typename T>
void fill_logits(const ProblemSlice<T>& s, const SinkhornOptions& o, T* k, T* lo = nullptr, T* hi = nullptr) {
  const double scale = (o.similarity ? 1.0 : -1.0) / o.eps;
  const auto& kern = simd::best_kernels<T>();
  T l = std::numeric_limits<T>::infinity(), h = -l;
  constexpr int kBlock = 16;
  // Contiguous rows (ld = p) as one row: p 10 would otherwise be all scalar tail.
  const bool one_row = s.ld == s.p;
  const int rows = one_row ? 1 : s.n;
  const int64_t cols = one_row ? static_cast<int64_t>(s.n) * s.p : s.p;
  for (int i = 0; i < rows; ++i) {
    const T* c = s.cost + static_cast<int64_t>(i) * s.ld;
    T* ki = k + static_cast<int64_t>(i) * s.ld;
    int64_t j = 0;
    for (; j + kBlock <= cols; j += kBlock) {
      T block[kBlock];  // through a copy, so that an in-place fill (ki == c) vectorises too
      for (int u = 0; u < kBlock; ++u) block[u] = static_cast<T>(scale * static_cast<double>(c[j + u]));
      std::copy(block, block + kBlock, ki + j);
    }
    for (; j < cols; ++j) ki[j] = static_cast<T>(scale * static_cast<double>(c[j]));
  }
  kern.clamp_range(k, s.n, s.p, s.ld, static_cast<T>(kMaxLogit), &l, &h);
  if (lo) *lo = l;
  if (hi) *hi = h;
}

// log of a marginal (log 1/len when uniform); log 0 = -inf marks points that carry no mass.
template <typename T>
void log_marginal(const T* w, int len, std::vector<T>& out) {
  out.resize(len);
  if (!w) {
    std::fill(out.begin(), out.end(), static_cast<T>(-std::log(static_cast<double>(len))));  // one log, not len
    return;
  }
  for (int i = 0; i < len; ++i)
    out[i] = w[i] > 0 ? static_cast<T>(std::log(static_cast<double>(w[i]))) : -std::numeric_limits<T>::infinity();
}

// The unrolled backward's start (row layout): dK = W = dP * P in dcost, dF = W 1, dG = W^T 1 (added to dF and dG).
// P = 0 entries (zero-mass points) carry no gradient, even where dL/dP is infinite.
template <typename T>
void seed_plan_gradient(const ProblemSlice<T>& s, const T* plan, const T* dplan, T* dcost, T* dF, T* dG) {
  for (int i = 0; i < s.n; ++i) {
    const int64_t r = static_cast<int64_t>(i) * s.ld;
    for (int j = 0; j < s.p; ++j) {
      const T w = plan[r + j] == T(0) ? T(0) : dplan[r + j] * plan[r + j];
      dcost[r + j] = w;
      dF[i] += w;
      dG[j] += w;
    }
  }
}

// Its end: dL/dC = dL/dK * dK/dC in place, with K = -C/eps (or S/eps); clamped logits have zero derivative.
// Returns whether every result is finite (the scaling domain falls back to the log domain otherwise). The zeroing
// is a mask on the bits and the finiteness an integer test of the exponent, so GCC vectorises the pass; a select of
// floats it would not (with trapping math it will not compute the kept value where it is not used). As a branch
// per entry, then a scalar scan with an early exit, the two had been 3 % of a k512 p64 training step.
template <typename T>
bool logit_to_cost_gradient(const ProblemSlice<T>& s, const SinkhornOptions& o, T* dcost) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits exponent = sizeof(T) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  const double scale = (o.similarity ? 1.0 : -1.0) / o.eps;
  const int n = s.n, p = s.p;
  Bits non_finite = 0;
  for (int i = 0; i < n; ++i) {
    const T* __restrict c = s.cost + static_cast<int64_t>(i) * s.ld;
    T* __restrict d = dcost + static_cast<int64_t>(i) * s.ld;
    for (int j = 0; j < p; ++j) {
      const T scaled = static_cast<T>(scale * static_cast<double>(d[j]));
      const Bits keep = std::fabs(scale * static_cast<double>(c[j])) >= kMaxLogit ? Bits(0) : ~Bits(0);
      Bits bits;
      std::memcpy(&bits, &scaled, sizeof(T));
      bits &= keep;
      T kept;
      std::memcpy(&kept, &bits, sizeof(T));
      d[j] = kept;
      non_finite |= (bits & exponent) == exponent;
    }
  }
  return non_finite == 0;
}

template <typename T>
T marginal_at(const T* w, int len, int i) {
  return w ? w[i] : static_cast<T>(1.0 / len);
}

// Writes 0 to the padding of a rows x cols block whose valid part is n x p.
template <typename T>
void zero_padding(T* x, int rows, int cols, int n, int p) {
  for (int i = 0; i < rows; ++i)
    for (int j = (i < n ? p : 0); j < cols; ++j) x[static_cast<int64_t>(i) * cols + j] = T(0);
}

// Narrow problems (few columns, p <= 32, and more rows than columns) run on K transposed, p x n, so that every
// update streams along n (full SIMD vectors) instead of calling a kernel per row on p values (at p = 10 with 16
// lanes a row is a single padded vector, and the per-row call, reductions and log dominate). Same iterates, same
// tape, same outputs, to float rounding.
// SinkhornOptions::layout forces one layout (tests check that both agree).
template <typename T>
bool solve_narrow(const ProblemSlice<T>& s, const SinkhornOptions& o) {
  if (o.layout != SinkhornOptions::Layout::kAuto) return o.layout == SinkhornOptions::Layout::kColumns;
  return s.p <= 32 && s.n > s.p;
}

struct OneResult {
  int n_iter = 0;
  double marginal_err = 0;
  double cost_value = 0;
  bool met_tol = false;  // the loop stopped because the column error fell below tol
};

// The scaling-domain forward pass; false (outputs unspecified, `plan` overwritten, `tape` partly written) when the
// problem is outside the range where it is exact-equivalent to the log domain, which must then solve it. `tape`
// (optional) receives the log domain's tape: per iteration the p column LSEs, then the n row LSEs.
template <typename T>
bool solve_scaling(const ProblemSlice<T>& s, const SinkhornOptions& o, T* plan, T* f_out, T* g_out, OneResult& r,
                   std::vector<T>* tape = nullptr);

// The unrolled backward (sinkhorn_log_backward's contract, one problem) in the scaling domain, from the log domain's
// tape; false (dcost unspecified) when the problem is outside the proven range or the result is not finite.
template <typename T>
bool backward_scaling(const ProblemSlice<T>& s, const SinkhornOptions& o, const T* lse, int n_iter, const T* plan,
                      const T* dplan, T* dcost);

// Forward and backward of the narrow layout (sinkhorn_columns.cpp); contracts as the row-layout versions.
template <typename T>
OneResult solve_columns(const ProblemSlice<T>& s, const SinkhornOptions& o, T* plan, T* f_out, T* g_out,
                        std::vector<T>* tape);
template <typename T>
void backward_columns(const ProblemSlice<T>& s, const SinkhornOptions& o, const T* lse, int n_iter, const T* plan,
                      const T* dplan, T* dcost);

// Marginal error and regularised cost of a finished plan (rows of stride ld), scaled potentials F = f/eps and
// G = g/eps; writes f and g in cost units when asked. The cost is eps (sum_i F_i r_i + sum_j G_j c_j - mass), equal
// to <P, C> - eps H(P) because log P_ij = F_i + G_j + K_ij (clamped entries excepted).
template <typename T>
void summarise_plan(const ProblemSlice<T>& s, const SinkhornOptions& o, const T* plan, const T* F, const T* G, T* f_out,
                    T* g_out, OneResult& r) {
  const int n = s.n, p = s.p;
  std::vector<double> colsum(p, 0.0);
  double err = 0, value = 0, mass = 0;
  for (int i = 0; i < n; ++i) {
    const T* row = plan + static_cast<int64_t>(i) * s.ld;
    // The row sum as 8 interleaved partial sums and the column sums: loops the compiler vectorises. One serial
    // chain of double adds per row made this summary 12 % of a 10-iteration batch.
    double part[8] = {};
    int j = 0;
    for (; j + 8 <= p; j += 8)
      for (int u = 0; u < 8; ++u) part[u] += static_cast<double>(row[j + u]);
    for (int u = 0; j < p; ++j, ++u) part[u] += static_cast<double>(row[j]);
    const double rs = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    for (j = 0; j < p; ++j) colsum[j] += static_cast<double>(row[j]);
    err += std::fabs(rs - marginal_at(s.a, n, i));
    if (rs > 0) value += static_cast<double>(F[i]) * rs;
    mass += rs;
  }
  for (int j = 0; j < p; ++j) {
    err += std::fabs(colsum[j] - marginal_at(s.b, p, j));
    if (colsum[j] > 0) value += static_cast<double>(G[j]) * colsum[j];
  }
  r.marginal_err = err;
  r.cost_value = o.eps * (value - mass);
  if (f_out)
    for (int i = 0; i < n; ++i) f_out[i] = static_cast<T>(o.eps * F[i]);
  if (g_out)
    for (int j = 0; j < p; ++j) g_out[j] = static_cast<T>(o.eps * G[j]);
}

// Runs `body(bi)` for every problem, one problem at a time per thread (parallel.h). `body` must not throw.
template <typename F>
void for_each_problem(int batch, F&& body) {
  parallel_for(batch, 1, 0, [&](int bi, int) { body(bi); });
}

}  // namespace inductive::detail
