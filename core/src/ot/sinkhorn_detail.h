// Pieces shared by the Sinkhorn forward and backward passes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "inductive/sinkhorn.h"

namespace inductive::detail {

// |C/eps| is clamped here: beyond it float potentials would overflow (and the plan is already the
// unregularised one to working precision). The gradient of a clamped entry is 0.
constexpr double kMaxLogit = 1e30;

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

// K = -C/eps (or S/eps for similarities), clamped, computed in double; rows of stride ld.
template <typename T>
void fill_logits(const ProblemSlice<T>& s, const SinkhornOptions& o, T* k) {
  const double scale = (o.similarity ? 1.0 : -1.0) / o.eps;
  for (int i = 0; i < s.n; ++i)
    for (int j = 0; j < s.p; ++j) {
      const double v = scale * static_cast<double>(s.cost[static_cast<int64_t>(i) * s.ld + j]);
      k[static_cast<int64_t>(i) * s.ld + j] = static_cast<T>(std::clamp(v, -kMaxLogit, kMaxLogit));
    }
}

// log of a marginal (log 1/len when uniform); log 0 = -inf marks points that carry no mass.
template <typename T>
void log_marginal(const T* w, int len, std::vector<T>& out) {
  out.resize(len);
  for (int i = 0; i < len; ++i)
    out[i] = w ? (w[i] > 0 ? static_cast<T>(std::log(static_cast<double>(w[i])))
                           : -std::numeric_limits<T>::infinity())
               : static_cast<T>(-std::log(static_cast<double>(len)));
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

// Runs `body(bi)` for every problem, across OpenMP threads when available. `body` must not throw.
template <typename F>
void for_each_problem(int batch, F&& body) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
#endif
  for (int bi = 0; bi < batch; ++bi) body(bi);
}

}  // namespace inductive::detail
