// Log-domain Sinkhorn for narrow problems (see detail::solve_narrow): the same iterations as sinkhorn.cpp and
// sinkhorn_backward.cpp, run on Kt = K^T (p x n) so that every kernel call streams over n values.
//
// On Kt the roles of the two reductions swap: the column log-sum-exp of K (over i, giving G) is a contiguous row
// LSE of Kt, and the row log-sum-exp of K (over j, giving F) is a column reduction over the p rows of Kt with one
// running max and sum per i. The backward kernels swap the same way (row softmax <-> column softmax). The tape
// keeps the row-layout format (per iteration: p column LSEs, then n row LSEs), so either layout can read it.
#include <cmath>
#include <limits>
#include <vector>

#include "ot/sinkhorn_detail.h"
#include "simd/lse_kernels.h"
#include "simd/transpose.h"

namespace inductive::detail {

namespace {

template <typename T>
std::vector<T> transposed_logits(const ProblemSlice<T>& s, const SinkhornOptions& o) {
  std::vector<T> k(static_cast<size_t>(s.n) * s.ld), kt(static_cast<size_t>(s.n) * s.p);
  fill_logits(s, o, k.data());
  simd::transpose(k.data(), s.n, s.p, s.ld, T(1), kt.data(), s.n);
  return kt;
}

// rl_i = LSE_j(G_j + K_ij) for every i, by the two-pass column reduction over the rows of Kt.
template <typename T>
void row_lses(const simd::LseKernels<T>& kern, const T* kt, const T* G, int n, int p, T* m, T* acc, T* rl) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  std::fill(m, m + n, kNegInf);
  std::fill(acc, acc + n, T(0));
  for (int j = 0; j < p; ++j) kern.col_max(kt + static_cast<int64_t>(j) * n, G[j], m, n);
  for (int j = 0; j < p; ++j) kern.col_sumexp(kt + static_cast<int64_t>(j) * n, G[j], m, acc, n);
  kern.log_plus(acc, m, T(0), rl, n);
}

}  // namespace

template <typename T>
OneResult solve_columns(const ProblemSlice<T>& s, const SinkhornOptions& o, T* plan, T* f_out, T* g_out,
                        std::vector<T>* tape) {
  const auto& kern = simd::best_kernels<T>();
  const int n = s.n, p = s.p;
  const std::vector<T> kt = transposed_logits(s, o);
  std::vector<T> la, lb;
  log_marginal(s.a, n, la);
  log_marginal(s.b, p, lb);
  std::vector<T> F(n, T(0)), G(p, T(0)), m(n), acc(n), cl(p), rl(n);

  OneResult r;
  for (int t = 0; t < o.max_iter; ++t) {
    for (int j = 0; j < p; ++j) cl[j] = kern.row_lse(kt.data() + static_cast<int64_t>(j) * n, F.data(), n);
    if (o.tol > 0 && t > 0) {
      double err = 0;
      for (int j = 0; j < p; ++j)
        err += std::fabs(std::exp(static_cast<double>(G[j]) + cl[j]) - marginal_at(s.b, p, j));
      if (err <= o.tol) {
        r.met_tol = true;
        break;
      }
    }
    for (int j = 0; j < p; ++j) G[j] = lb[j] - cl[j];
    row_lses(kern, kt.data(), G.data(), n, p, m.data(), acc.data(), rl.data());
    for (int i = 0; i < n; ++i) F[i] = la[i] - rl[i];
    if (tape) {
      tape->insert(tape->end(), cl.begin(), cl.end());
      tape->insert(tape->end(), rl.begin(), rl.end());
    }
    r.n_iter = t + 1;
  }

  // P_ij = a_i exp(G_j + K_ij - rl_i): each row sums to a_i up to rounding, as in the row layout. rl is the row LSE
  // of the current G whether the loop ran out or stopped early (the stop comes before G changes; max_iter >= 1).
  std::vector<T> col(n);
  for (int j = 0; j < p; ++j) {
    std::fill(col.begin(), col.end(), T(0));
    kern.col_sumexp(kt.data() + static_cast<int64_t>(j) * n, G[j], rl.data(), col.data(), n);
    for (int i = 0; i < n; ++i) plan[static_cast<int64_t>(i) * s.ld + j] = marginal_at(s.a, n, i) * col[i];
  }
  for (int i = 0; i < n; ++i) F[i] = la[i] - rl[i];
  summarise_plan(s, o, plan, F.data(), G.data(), f_out, g_out, r);
  return r;
}

template <typename T>
void backward_columns(const ProblemSlice<T>& s, const SinkhornOptions& o, const T* lse, int n_iter, const T* plan,
                      const T* dplan, T* dcost) {
  const auto& kern = simd::best_kernels<T>();
  const int n = s.n, p = s.p, ld = s.ld;
  const std::vector<T> kt = transposed_logits(s, o);
  std::vector<T> la, lb;
  log_marginal(s.a, n, la);
  log_marginal(s.b, p, lb);

  // dKt accumulates transposed; see sinkhorn_backward.cpp for the recursion in the row layout.
  std::vector<T> dkt(static_cast<size_t>(n) * p), dF(n, T(0)), dG(p, T(0)), G(p), Fprev(n);
  seed_plan_gradient(s, plan, dplan, dcost, dF.data(), dG.data());
  simd::transpose(dcost, n, p, ld, T(1), dkt.data(), n);
  for (int t = n_iter; t >= 1; --t) {
    const T* cl = lse + static_cast<int64_t>(t - 1) * (n + p);
    const T* rl = cl + p;
    for (int j = 0; j < p; ++j) G[j] = lb[j] - cl[j];
    // Through F^t: R_ij = exp(G_j + K_ij - rl_i); dG_j -= sum_i dF_i R_ij, dK_ij -= dF_i R_ij.
    for (int j = 0; j < p; ++j)
      dG[j] -= kern.col_softmax_bwd(kt.data() + static_cast<int64_t>(j) * n, G[j], rl, dF.data(),
                                    dkt.data() + static_cast<int64_t>(j) * n, n);
    if (t > 1) {
      const T* rl_prev = lse + static_cast<int64_t>(t - 2) * (n + p) + p;
      for (int i = 0; i < n; ++i) Fprev[i] = la[i] - rl_prev[i];
    } else {
      std::fill(Fprev.begin(), Fprev.end(), T(0));
    }
    // Through G^t: Q_ij = exp(Fprev_i + K_ij - cl_j); dF_i = -sum_j dG_j Q_ij, dK_ij -= dG_j Q_ij.
    std::fill(dF.begin(), dF.end(), T(0));
    for (int j = 0; j < p; ++j)
      if (dG[j] != T(0))
        kern.row_softmax_bwd(kt.data() + static_cast<int64_t>(j) * n, Fprev.data(), cl[j], dG[j], dF.data(),
                             dkt.data() + static_cast<int64_t>(j) * n, n);
    std::fill(dG.begin(), dG.end(), T(0));
  }
  simd::transpose(dkt.data(), p, n, n, T(1), dcost, ld);
  logit_to_cost_gradient(s, o, dcost);
}

template OneResult solve_columns<float>(const ProblemSlice<float>&, const SinkhornOptions&, float*, float*, float*,
                                        std::vector<float>*);
template OneResult solve_columns<double>(const ProblemSlice<double>&, const SinkhornOptions&, double*, double*, double*,
                                         std::vector<double>*);
template void backward_columns<float>(const ProblemSlice<float>&, const SinkhornOptions&, const float*, int,
                                      const float*, const float*, float*);
template void backward_columns<double>(const ProblemSlice<double>&, const SinkhornOptions&, const double*, int,
                                       const double*, const double*, double*);

}  // namespace inductive::detail
