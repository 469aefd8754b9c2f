// Log-domain Sinkhorn, backward pass: reverse mode through the unrolled iterations with recomputation.
//
// Forward, iteration t = 1..T (F^0 = 0):
//   G^t = lb - cl^t,  cl^t_j = LSE_i(F^{t-1}_i + K_ij)     Q^t_ij = exp(F^{t-1}_i + K_ij - cl^t_j)   (columns sum to 1)
//   F^t = la - rl^t,  rl^t_i = LSE_j(G^t_j + K_ij)         R^t_ij = exp(G^t_j + K_ij - rl^t_i)       (rows sum to 1)
//   P = exp(F^T + G^T + K)
// Reverse: W = dP * P gives dK = W, dF^T = W 1, dG^T = W^T 1; then for t = T..1
//   through F^t:  dG^t -= R^T dF^t,        dK -= dF^t (row-wise) * R
//   through G^t:  dF^{t-1} = -Q dG^t,      dK -= Q * dG^t (column-wise)
// The tape holds cl^t and rl^t only, so Q and R are recomputed in two streaming passes per iteration:
// memory O(n p + T (n + p)) instead of the O(T n p) of a stored unrolled graph.
#include <cmath>
#include <limits>
#include <vector>

#include "ot/sinkhorn_detail.h"
#include "simd/lse_kernels.h"

namespace inductive {

namespace {

template <typename T>
void check_tape(const SinkhornProblem<T>& pr, const SinkhornTape<T>& tape) {
  INDUCTIVE_CHECK(static_cast<int>(tape.offset.size()) == pr.batch && static_cast<int>(tape.n_iter.size()) == pr.batch,
                  ErrorCode::kShapeMismatch, "sinkhorn backward: tape is for a batch of ", tape.offset.size(),
                  " problems, expected ", pr.batch, " (run sinkhorn_log with a tape on the same problem)");
  for (int bi = 0; bi < pr.batch; ++bi) {
    const auto s = detail::slice(pr, bi);
    const int64_t need = tape.offset[bi] + static_cast<int64_t>(tape.n_iter[bi]) * (s.n + s.p);
    INDUCTIVE_CHECK(tape.offset[bi] >= 0 && need <= static_cast<int64_t>(tape.lse.size()), ErrorCode::kShapeMismatch,
                    "sinkhorn backward: tape does not match problem ", bi, " (n = ", s.n, ", p = ", s.p, ")");
  }
}

template <typename T>
void backward_one(const detail::ProblemSlice<T>& s, const SinkhornOptions& o, const T* lse, int n_iter, const T* plan,
                  const T* dplan, T* dcost) {
  const auto& kern = simd::best_kernels<T>();
  const int n = s.n, p = s.p, ld = s.ld;
  std::vector<T> K(static_cast<size_t>(n) * ld);
  detail::fill_logits(s, o, K.data());
  std::vector<T> la, lb;
  detail::log_marginal(s.a, n, la);
  detail::log_marginal(s.b, p, lb);

  // dK accumulates in the output buffer.
  std::vector<T> dF(n, T(0)), dG(p, T(0)), G(p), Fprev(n);
  detail::seed_plan_gradient(s, plan, dplan, dcost, dF.data(), dG.data());
  for (int t = n_iter; t >= 1; --t) {
    const T* cl = lse + static_cast<int64_t>(t - 1) * (n + p);
    const T* rl = cl + p;
    for (int j = 0; j < p; ++j) G[j] = lb[j] - cl[j];
    for (int i = 0; i < n; ++i)
      if (dF[i] != T(0))
        kern.row_softmax_bwd(K.data() + static_cast<int64_t>(i) * ld, G.data(), rl[i], dF[i], dG.data(),
                             dcost + static_cast<int64_t>(i) * ld, p);
    if (t > 1) {
      const T* rl_prev = lse + static_cast<int64_t>(t - 2) * (n + p) + p;
      for (int i = 0; i < n; ++i) Fprev[i] = la[i] - rl_prev[i];
    } else {
      std::fill(Fprev.begin(), Fprev.end(), T(0));
    }
    for (int i = 0; i < n; ++i)
      dF[i] = -kern.col_softmax_bwd(K.data() + static_cast<int64_t>(i) * ld, Fprev[i], cl, dG.data(),
                                    dcost + static_cast<int64_t>(i) * ld, p);
    std::fill(dG.begin(), dG.end(), T(0));
  }
  detail::logit_to_cost_gradient(s, o, dcost);
}

}  // namespace

template <typename T>
void sinkhorn_log_backward(const SinkhornProblem<T>& pr, const SinkhornOptions& o, const SinkhornTape<T>& tape,
                           const T* plan, const T* grad_plan, T* grad_cost) {
  o.validate();
  pr.validate("sinkhorn backward");
  check_tape(pr, tape);
  INDUCTIVE_CHECK(plan && grad_plan && grad_cost, ErrorCode::kInvalidArgument,
                  "sinkhorn backward: plan, grad_plan and grad_cost must all be given");
  detail::for_each_problem(pr.batch, [&](int bi) {
    const auto s = detail::slice(pr, bi);
    const int64_t off = static_cast<int64_t>(bi) * pr.n_max * pr.p_max;
    const T* lse = tape.lse.data() + tape.offset[bi];
    // Problems in the proven range go through the scaling domain (sinkhorn_scaling.cpp: multiply-adds instead of
    // two exps per entry and iteration), whichever domain the forward pass ran in: the tape is the same. Otherwise
    // the log domain, in the layout the forward would take.
    const bool scaled =
        o.domain == SinkhornOptions::Domain::kAuto &&
        detail::backward_scaling(s, o, lse, tape.n_iter[bi], plan + off, grad_plan + off, grad_cost + off);
    if (!scaled && detail::solve_narrow(s, o))
      detail::backward_columns(s, o, lse, tape.n_iter[bi], plan + off, grad_plan + off, grad_cost + off);
    else if (!scaled)
      backward_one(s, o, lse, tape.n_iter[bi], plan + off, grad_plan + off, grad_cost + off);
    detail::zero_padding(grad_cost + off, pr.n_max, pr.p_max, s.n, s.p);
  });
}

template <typename T>
void sinkhorn_cost_backward(const SinkhornProblem<T>& pr, const SinkhornOptions& o, const SinkhornTape<T>& tape,
                            const T* plan, const T* f, const T* g, T* grad_cost) {
  INDUCTIVE_CHECK(f && g, ErrorCode::kInvalidArgument, "sinkhorn cost backward: potentials f and g are required");
  // d(cost)/dP_ij = C_ij + eps log P_ij = f_i + g_j, plus the direct term dC: P (or -P for similarities).
  const int64_t total = static_cast<int64_t>(pr.batch) * pr.n_max * pr.p_max;
  std::vector<T> dplan(total, T(0));
  for (int bi = 0; bi < pr.batch; ++bi)
    for (int i = 0; i < pr.n_max; ++i)
      for (int j = 0; j < pr.p_max; ++j)
        dplan[(static_cast<int64_t>(bi) * pr.n_max + i) * pr.p_max + j] =
            f[static_cast<int64_t>(bi) * pr.n_max + i] + g[static_cast<int64_t>(bi) * pr.p_max + j];
  sinkhorn_log_backward(pr, o, tape, plan, dplan.data(), grad_cost);
  const T sign = o.similarity ? T(-1) : T(1);
  for (int64_t r = 0; r < total; ++r) grad_cost[r] += sign * plan[r];
}

template void sinkhorn_log_backward<float>(const SinkhornProblem<float>&, const SinkhornOptions&,
                                           const SinkhornTape<float>&, const float*, const float*, float*);
template void sinkhorn_log_backward<double>(const SinkhornProblem<double>&, const SinkhornOptions&,
                                            const SinkhornTape<double>&, const double*, const double*, double*);
template void sinkhorn_cost_backward<float>(const SinkhornProblem<float>&, const SinkhornOptions&,
                                            const SinkhornTape<float>&, const float*, const float*, const float*,
                                            float*);
template void sinkhorn_cost_backward<double>(const SinkhornProblem<double>&, const SinkhornOptions&,
                                             const SinkhornTape<double>&, const double*, const double*, const double*,
                                             double*);

}  // namespace inductive
