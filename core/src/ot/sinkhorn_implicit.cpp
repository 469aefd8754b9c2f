// Log-domain Sinkhorn, backward pass by implicit differentiation at the fixed point (no tape).
//
// With logits K (K = -C/eps, or S/eps for similarities) and P_ij = exp(F_i + G_j + K_ij), the fixed point satisfies
//   sum_j P_ij = r_i,   sum_i P_ij = c_j.
// Differentiating both constraints, dP_ij = P_ij (dF_i + dG_j + dK_ij) and
//   H [dF; dG] = -[(P o dK) 1; (P o dK)^T 1],        H = [[diag(r), P], [P^T, diag(c)]].
// For a loss L(P) with W = dL/dP o P, u = [W 1; W^T 1]:  dL = <W, dK> + u^T [dF; dG], hence with H v = u
//   dL/dK_ij = W_ij - P_ij (v1_i + v2_j).
// H is singular along (1, -1) (shifting F up and G down leaves P unchanged), u is orthogonal to it, and that
// direction cancels in v1_i + v2_j, so any solution serves. Eliminating v1 = (u1 - P v2) / r leaves the p x p
// Schur complement
//   S v2 = u2 - P^T (u1 / r),       S = diag(c) - P^T diag(1/r) P,     S 1 = 0,
// solved in double after adding t 1 1^T (t = mean diagonal), which removes the null direction without changing
// v1_i + v2_j. r and c are the plan's own row and column sums, so S 1 = 0 holds exactly even when the forward pass
// stopped before convergence: the result is then the gradient of the converged map evaluated at the returned plan.
//
// Cost O(n p^2 + p^3) per problem, memory O(n p + p^2): nothing depends on the number of iterations.
#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "ot/sinkhorn_detail.h"

namespace inductive {

namespace {

// Returns false when the Schur complement could not be factorised (it runs inside a parallel loop: no throwing).
template <typename T>
bool implicit_one(const detail::ProblemSlice<T>& s, const SinkhornOptions& o, const T* plan, const T* dplan, T* dcost) {
  const int n = s.n, p = s.p, ld = s.ld;
  using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  MatD P(n, p);
  Eigen::VectorXd r = Eigen::VectorXd::Zero(n), c = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd u1 = Eigen::VectorXd::Zero(n), u2 = Eigen::VectorXd::Zero(p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) {
      const double pij = plan[static_cast<int64_t>(i) * ld + j];
      // P = 0 entries (zero-mass points, underflow) carry no gradient, even where dL/dP is infinite.
      const double w = pij == 0.0 ? 0.0 : static_cast<double>(dplan[static_cast<int64_t>(i) * ld + j]) * pij;
      P(i, j) = pij;
      r[i] += pij;
      c[j] += pij;
      u1[i] += w;
      u2[j] += w;
    }
  // Rows or columns without mass are outside the problem: their v is 0 and their rows of S are the identity.
  Eigen::VectorXd inv_r(n);
  for (int i = 0; i < n; ++i) inv_r[i] = r[i] > 0 ? 1.0 / r[i] : 0.0;
  MatD scaled = inv_r.asDiagonal() * P;  // diag(1/r) P
  Eigen::MatrixXd S = -(P.transpose() * scaled);
  Eigen::VectorXd rhs = u2 - scaled.transpose() * u1;
  double diag_mean = 0;
  int live = 0;
  for (int j = 0; j < p; ++j)
    if (c[j] > 0) S(j, j) += c[j], diag_mean += c[j], ++live;
  diag_mean = live ? diag_mean / live : 1.0;
  for (int j = 0; j < p; ++j)
    for (int l = 0; l < p; ++l)
      if (c[j] > 0 && c[l] > 0) S(j, l) += diag_mean;
  for (int j = 0; j < p; ++j)
    if (!(c[j] > 0)) S.row(j).setZero(), S.col(j).setZero(), S(j, j) = 1.0, rhs[j] = 0.0;
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(S);
  if (ldlt.info() != Eigen::Success) return false;
  const Eigen::VectorXd v2 = ldlt.solve(rhs);
  const Eigen::VectorXd v1 = inv_r.cwiseProduct(u1 - P * v2);

  // dL/dC = dL/dK * dK/dC with K = -C/eps (or S/eps); clamped logits have zero derivative.
  const double scale = (o.similarity ? 1.0 : -1.0) / o.eps;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) {
      const int64_t at = static_cast<int64_t>(i) * ld + j;
      const double pij = P(i, j);
      const double w = pij == 0.0 ? 0.0 : static_cast<double>(dplan[at]) * pij;
      const bool clamped = std::fabs(scale * s.cost[at]) >= detail::kMaxLogit;
      dcost[at] = clamped ? T(0) : static_cast<T>(scale * (w - pij * (v1[i] + v2[j])));
    }
  return v1.allFinite() && v2.allFinite();
}

}  // namespace

template <typename T>
void sinkhorn_implicit_backward(const SinkhornProblem<T>& pr, const SinkhornOptions& o, const T* plan,
                                const T* grad_plan, T* grad_cost) {
  o.validate();
  pr.validate("sinkhorn implicit backward");
  INDUCTIVE_CHECK(plan && grad_plan && grad_cost, ErrorCode::kInvalidArgument,
                  "sinkhorn implicit backward: plan, grad_plan and grad_cost must all be given");
  std::vector<uint8_t> ok(pr.batch, 1);
  detail::for_each_problem(pr.batch, [&](int bi) {
    const auto s = detail::slice(pr, bi);
    const int64_t off = static_cast<int64_t>(bi) * pr.n_max * pr.p_max;
    ok[bi] = implicit_one(s, o, plan + off, grad_plan + off, grad_cost + off);
    detail::zero_padding(grad_cost + off, pr.n_max, pr.p_max, s.n, s.p);
  });
  for (int bi = 0; bi < pr.batch; ++bi)
    INDUCTIVE_CHECK(ok[bi], ErrorCode::kInvalidArgument, "sinkhorn implicit backward: problem ", bi,
                    " has a degenerate plan (its Schur complement is singular or the gradient is not finite); "
                    "use the unrolled gradient");
}

template void sinkhorn_implicit_backward<float>(const SinkhornProblem<float>&, const SinkhornOptions&, const float*,
                                                const float*, float*);
template void sinkhorn_implicit_backward<double>(const SinkhornProblem<double>&, const SinkhornOptions&, const double*,
                                                 const double*, double*);

}  // namespace inductive
