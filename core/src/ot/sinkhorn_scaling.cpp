// Sinkhorn in the scaling domain: the same iterates as the log-domain solver, computed as
//   E = exp(K - kmax)  (once: n p exps),  v = b / (E^T u),  u = a / (E v)   (two matrix-vector products per
// iteration), with u = exp(F) and v = exp(G + kmax). The log domain spends 2 n p exps per iteration; here the
// iterations cost multiply-adds only, so a 10-iteration OTKE pooling does a tenth of the exps.
//
// It is exact-equivalent only while nothing over- or underflows, so it is used only where that is proven: the
// logits span at most kMaxRange (E >= e^-kMaxRange, far from float's underflow) and the positive marginals are
// within kMinWeightRatio of each other, which bounds u and v away from float's range. OTKE's normalised features
// give |K| <= 1/eps. Anything non-finite at the end still falls back to the log domain, so the result is never
// NaN. Training records the log domain's tape from these iterates (the LSEs are logs of the two products), and its
// unrolled backward runs on E too (backward_scaling, below), narrow problems on E transposed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "ot/sinkhorn_detail.h"
#include "simd/lse_kernels.h"
#include "simd/small_gemm.h"
#include "simd/transpose.h"

namespace inductive::detail {

namespace {

template <typename T>
struct ScalingLimits;
template <>
struct ScalingLimits<float> {
  static constexpr double kMaxRange = 30;  // e^-30 ~ 1e-13: E and the scalings stay inside float's normal range
  static constexpr double kMinWeightRatio = 1e-12;
};
template <>
struct ScalingLimits<double> {
  static constexpr double kMaxRange = 200;
  static constexpr double kMinWeightRatio = 1e-60;
};

// Whether the problem's logits (their range lo..hi, from fill_logits) and marginals are inside the proven range;
// sets kmax.
template <typename T>
bool scaling_is_safe(const ProblemSlice<T>& s, T lo, T hi, T& kmax) {
  if (!(hi - lo <= static_cast<T>(ScalingLimits<T>::kMaxRange))) return false;
  for (const auto& [w, len] : {std::pair<const T*, int>{s.a, s.n}, std::pair<const T*, int>{s.b, s.p}}) {
    if (!w) continue;
    T wmin = std::numeric_limits<T>::infinity(), wmax = 0;
    for (int i = 0; i < len; ++i)
      if (w[i] > 0) {
        wmin = std::min(wmin, w[i]);
        wmax = std::max(wmax, w[i]);
      }
    if (wmax > 0 && wmin < static_cast<T>(ScalingLimits<T>::kMinWeightRatio) * wmax) return false;
  }
  kmax = hi;
  return true;
}

}  // namespace

template <typename T>
bool solve_scaling(const ProblemSlice<T>& s, const SinkhornOptions& o, T* plan, T* f_out, T* g_out, OneResult& r,
                   std::vector<T>* tape) {
  const auto& kern = simd::best_kernels<T>();
  const int n = s.n, p = s.p;
  const int64_t ld = s.ld;
  T lo, hi, kmax;
  fill_logits(s, o, plan, &lo, &hi);
  if (!scaling_is_safe(s, lo, hi, kmax)) return false;
  for (int i = 0; i < n; ++i) kern.exp_shift(plan + i * ld, kmax, plan + i * ld, p);  // E, in the plan buffer

  // Narrow problems (solve_narrow) stream along n instead: E^T [p, n] in a scratch copy.
  const bool narrow = solve_narrow(s, o);
  std::vector<T> et;
  if (narrow) {
    et.resize(static_cast<size_t>(n) * p);
    simd::transpose(plan, n, p, ld, T(1), et.data(), n);
  }
  auto row_sums = [&](const T* v, T* out) {  // out = E v
    if (narrow)
      kern.gemv_t(et.data(), p, n, n, v, out);
    else
      kern.gemv(plan, n, p, ld, v, out);
  };
  auto col_sums = [&](const T* u, T* out) {  // out = E^T u
    if (narrow)
      kern.gemv(et.data(), p, n, n, u, out);
    else
      kern.gemv_t(plan, n, p, ld, u, out);
  };

  std::vector<T> u(n, T(1)), v(p, T(0)), sc(p), sr(n);
  for (int t = 0; t < o.max_iter; ++t) {
    col_sums(u.data(), sc.data());
    if (o.tol > 0 && t > 0) {
      // Column sums of the current plan are v_j (E^T u)_j, as the log domain's exp(G_j + cl_j).
      double err = 0;
      for (int j = 0; j < p; ++j) err += std::fabs(static_cast<double>(v[j]) * sc[j] - marginal_at(s.b, p, j));
      if (err <= o.tol) {
        r.met_tol = true;
        break;
      }
    }
    for (int j = 0; j < p; ++j) {
      const T bj = marginal_at(s.b, p, j);
      v[j] = bj > 0 ? bj / sc[j] : T(0);
    }
    row_sums(v.data(), sr.data());
    for (int i = 0; i < n; ++i) {
      const T ai = marginal_at(s.a, n, i);
      u[i] = ai > 0 ? ai / sr[i] : T(0);
    }
    if (tape) {
      // The log domain's LSEs: cl_j = LSE_i(F_i + K_ij) = log (E^T u)_j + kmax, rl_i = LSE_j(G_j + K_ij) =
      // log (E v)_i (G = log v - kmax).
      const size_t at = tape->size();
      tape->resize(at + p + n);
      kern.log_plus(sc.data(), nullptr, kmax, tape->data() + at, p);
      kern.log_plus(sr.data(), nullptr, T(0), tape->data() + at + p, n);
    }
    r.n_iter = t + 1;
  }

  // The plan rows a_i E_ij v_j / (E v)_i (exact row sums, as the log domain's), and the potentials in its units:
  // F = log a - log(E v), G = log v - kmax.
  row_sums(v.data(), sr.data());
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  std::vector<T> F(n), G(p), la;
  for (int j = 0; j < p; ++j) G[j] = v[j] > 0 ? std::log(v[j]) - kmax : kNegInf;
  // F's n logs in the kernels' vector log (a scalar log each was 1.3 % of a k512 p64 inference).
  log_marginal(s.a, n, la);
  kern.log_plus(sr.data(), nullptr, T(0), F.data(), n);
  for (int i = 0; i < n; ++i) {
    T* row = plan + i * ld;
    const T ai = marginal_at(s.a, n, i);
    if (!(ai > 0)) {
      std::fill(row, row + p, T(0));
      F[i] = kNegInf;
      continue;
    }
    const T scale = ai / sr[i];
    if (narrow)
      for (int j = 0; j < p; ++j) row[j] = scale * et[static_cast<size_t>(j) * n + i] * v[j];
    else
      for (int j = 0; j < p; ++j) row[j] *= scale * v[j];
    F[i] = la[i] - F[i];
    if (!std::isfinite(F[i])) return false;
  }
  // Finite F and G mean finite, positive (E v)_i and v_j, so the plan, E in [e^-30, 1] times those, is finite too.
  for (int j = 0; j < p; ++j)
    if (marginal_at(s.b, p, j) > 0 && !std::isfinite(G[j])) return false;
  summarise_plan(s, o, plan, F.data(), G.data(), f_out, g_out, r);
  return true;
}

// The log domain's backward (sinkhorn_backward.cpp) recomputes each iteration's softmaxes from the tape, two exps per
// entry and iteration. With E = exp(K - kmax) computed once, they are products of scalings:
//   R^t_ij = exp(G^t_j + K_ij - rl^t_i) = E_ij exp(G^t_j + kmax) exp(-rl^t_i)
//   Q^t_ij = exp(F^{t-1}_i + K_ij - cl^t_j) = exp(F^{t-1}_i) E_ij exp(kmax - cl^t_j)
// so each iteration's two passes are multiply-adds, with n + p exps for the scalings. Every factor is a scaling of
// the forward's scaling-domain iterates (u = a / (E v), v = b / (E^T u), and their reciprocals), which the range
// check bounds as it does for the forward; a non-finite result still returns false.
template <typename T>
bool backward_scaling(const ProblemSlice<T>& s, const SinkhornOptions& o, const T* lse, int n_iter, const T* plan,
                      const T* dplan, T* dcost) {
  const auto& kern = simd::best_kernels<T>();
  const int n = s.n, p = s.p;
  const int64_t ld = s.ld;
  // E, and below the factors and their product, in storage left uninitialised (each entry is written before it is
  // read): zeroing them had been most of a k512 p64 training step's memset, 1-2 %.
  const std::unique_ptr<T[]> e(new T[static_cast<size_t>(n) * ld]);
  T lo, hi, kmax;
  fill_logits(s, o, e.get(), &lo, &hi);
  if (!scaling_is_safe(s, lo, hi, kmax)) return false;
  // Narrow problems (solve_narrow) keep E and dK transposed, p x n, as the forward's narrow iterations do, so that
  // every pass streams along n: p 10 rows are all vector tail.
  const bool narrow = solve_narrow(s, o);
  std::unique_ptr<T[]> et, dkt;
  if (narrow) {
    et.reset(new T[static_cast<size_t>(n) * p]);
    dkt.reset(new T[static_cast<size_t>(n) * p]);
    simd::transpose(e.get(), n, p, ld, T(1), et.get(), n);
    kern.exp_shift(et.get(), kmax, et.get(), n * p);
  } else {
    for (int i = 0; i < n; ++i) kern.exp_shift(e.get() + i * ld, kmax, e.get() + i * ld, p);
  }
  // E and dK in one layout: `rows` x `cols` with row stride ldk (n x p, or p x n when narrow).
  const T* ek = narrow ? et.get() : e.get();
  const int rows = narrow ? p : n, cols = narrow ? n : p;
  const int64_t ldk = narrow ? n : ld;
  const auto col_sums = [&](const T* u, T* out) {  // out = E^T u (p values)
    if (narrow)
      kern.gemv(ek, p, n, n, u, out);
    else
      kern.gemv_t(ek, n, p, ld, u, out);
  };
  const auto row_sums = [&](const T* v, T* out) {  // out = E v (n values)
    if (narrow)
      kern.gemv_t(ek, p, n, n, v, out);
    else
      kern.gemv(ek, n, p, ld, v, out);
  };
  std::vector<T> la, lb;
  log_marginal(s.a, n, la);
  log_marginal(s.b, p, lb);

  // dK accumulates from W = dP * P (as in the log domain): in the output buffer, or transposed when narrow.
  std::vector<T> dF(n, T(0)), dG(p, T(0)), vg(p), wc(p), er(n), uf(n), cn(n), col_dots(p), row_dots(n);
  seed_plan_gradient(s, plan, dplan, dcost, dF.data(), dG.data());
  if (narrow) simd::transpose(dcost, n, p, ld, T(1), dkt.get(), n);
  T* dk = narrow ? dkt.get() : dcost;
  // The scalings' exps, n + p per pass, in the kernels' vector exp: one std::exp each had cost 2-3 % of a k512 p64
  // training step.
  const auto exps = [&](std::vector<T>& out, int len, T shift, auto&& argument) {
    for (int i = 0; i < len; ++i) out[static_cast<size_t>(i)] = argument(i);
    kern.exp_shift(out.data(), shift, out.data(), len);
  };
  // Each iteration subtracts two rank-one terms from dK, c_i E_ij v_j and u_i E_ij w_j. Subtracted pass by pass, they
  // read and wrote all of dK twice per iteration (a third of a k512 p64 step's Sinkhorn time); instead their factors
  // are collected, kRank iterations at a time, as L = [c u ...] (rows x 2 kRank) and R = [v; w; ...] (2 kRank x
  // cols), and dK -= E o (L R) in one product (the n-long factors on the right when narrow). The iterations
  // themselves need only E^T c and E w (the kernels' gemv_t, gemv).
  constexpr int kRank = 16;
  const int lda = 2 * kRank;
  const std::unique_ptr<T[]> L(new T[static_cast<size_t>(rows) * lda]), R(new T[static_cast<size_t>(lda) * cols]),
      M(new T[static_cast<size_t>(rows) * cols]);
  int terms = 0;
  const auto subtract_terms = [&] {
    if (terms == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      simd::gemm_ab(L.get(), lda, R.get(), cols, M.get(), cols, rows, cols, terms);
    } else {
      std::fill(M.get(), M.get() + static_cast<size_t>(rows) * cols, T(0));
      for (int i = 0; i < rows; ++i)
        for (int r = 0; r < terms; ++r)
          for (int j = 0; j < cols; ++j) M[i * cols + j] += L[i * lda + r] * R[r * cols + j];
    }
    for (int i = 0; i < rows; ++i) {
      const T* __restrict ei = ek + i * ldk;
      const T* __restrict mi = M.get() + static_cast<size_t>(i) * cols;
      T* __restrict di = dk + i * ldk;
      for (int j = 0; j < cols; ++j) di[j] -= ei[j] * mi[j];
    }
    terms = 0;
  };
  const auto add_term = [&](const std::vector<T>& of_rows, const std::vector<T>& of_cols) {  // n and p values
    const std::vector<T>& left = narrow ? of_cols : of_rows;
    const std::vector<T>& right = narrow ? of_rows : of_cols;
    for (int i = 0; i < rows; ++i) L[i * lda + terms] = left[static_cast<size_t>(i)];
    std::copy(right.begin(), right.end(), R.get() + static_cast<int64_t>(terms) * cols);
    if (++terms == lda) subtract_terms();
  };
  for (int t = n_iter; t >= 1; --t) {
    const T* cl = lse + static_cast<int64_t>(t - 1) * (n + p);
    const T* rl = cl + p;
    // Through F^t = la - rl^t: R_ij = c_i E_ij v_j / dF_i with c_i = dF_i exp(-rl_i), v_j = exp(G^t_j + kmax);
    // dG_j -= sum_i dF_i R_ij = v_j (E^T c)_j, dK_ij -= dF_i R_ij.
    exps(vg, p, -kmax, [&](int j) { return lb[j] - cl[j]; });  // 0 where b_j = 0
    exps(er, n, T(0), [&](int i) { return -rl[i]; });
    for (int i = 0; i < n; ++i) cn[i] = dF[i] == T(0) ? T(0) : dF[i] * er[i];
    col_sums(cn.data(), col_dots.data());
    for (int j = 0; j < p; ++j) dG[j] -= vg[j] * col_dots[j];
    add_term(cn, vg);
    // Through G^t = lb - cl^t: Q_ij = u_i E_ij w_j / dG_j with u_i = exp(F^{t-1}_i), w_j = exp(kmax - cl^t_j) dG_j;
    // dF^{t-1}_i = -sum_j Q_ij dG_j = -u_i (E w)_i, dK_ij -= Q_ij dG_j.
    exps(wc, p, -kmax, [&](int j) { return -cl[j]; });
    for (int j = 0; j < p; ++j) wc[j] *= dG[j];
    const T* rl_prev = t > 1 ? lse + static_cast<int64_t>(t - 2) * (n + p) + p : nullptr;
    if (rl_prev)
      exps(uf, n, T(0), [&](int i) { return la[i] - rl_prev[i]; });  // 0 where a_i = 0
    else
      std::fill(uf.begin(), uf.end(), T(1));
    row_sums(wc.data(), row_dots.data());
    for (int i = 0; i < n; ++i) dF[i] = uf[i] == T(0) ? T(0) : -uf[i] * row_dots[i];
    add_term(uf, wc);
    std::fill(dG.begin(), dG.end(), T(0));
  }
  subtract_terms();
  if (narrow) simd::transpose(dkt.get(), p, n, n, T(1), dcost, ld);
  return logit_to_cost_gradient(s, o, dcost);
}

template bool solve_scaling<float>(const ProblemSlice<float>&, const SinkhornOptions&, float*, float*, float*,
                                   OneResult&, std::vector<float>*);
template bool solve_scaling<double>(const ProblemSlice<double>&, const SinkhornOptions&, double*, double*, double*,
                                    OneResult&, std::vector<double>*);
template bool backward_scaling<float>(const ProblemSlice<float>&, const SinkhornOptions&, const float*, int,
                                      const float*, const float*, float*);
template bool backward_scaling<double>(const ProblemSlice<double>&, const SinkhornOptions&, const double*, int,
                                       const double*, const double*, double*);

}  // namespace inductive::detail
