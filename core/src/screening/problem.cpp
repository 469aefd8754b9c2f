// ERM objectives, dual points and duality gaps (see inductive/screening/problem.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "inductive/error.h"
#include "inductive/screening/problem.h"
#include "rows.h"

namespace inductive {

using detail::ProblemRows;

int ErmProblem::n() const { return x != nullptr ? x->rows() : 0; }
int ErmProblem::features() const { return x != nullptr ? x->cols() : 0; }
int ErmProblem::dim() const { return features() + (intercept ? 1 : 0); }

void ErmProblem::validate() const {
  INDUCTIVE_CHECK(x != nullptr, ErrorCode::kInvalidArgument, "erm problem: no design matrix");
  INDUCTIVE_CHECK(x->rows() > 0 && x->cols() > 0, ErrorCode::kInvalidArgument,
                  "erm problem: the design matrix is empty: got ", x->rows(), " x ", x->cols());
  INDUCTIVE_CHECK(y.size() == static_cast<size_t>(x->rows()), ErrorCode::kShapeMismatch, "erm problem: ", y.size(),
                  " labels for ", x->rows(), " samples");
  loss.validate();
  penalty.validate();
  INDUCTIVE_CHECK(std::isfinite(lambda) && lambda > 0, ErrorCode::kInvalidArgument,
                  "erm problem: lambda must be finite and > 0: got ", lambda);
  INDUCTIVE_CHECK(!intercept || (std::isfinite(intercept_scaling) && intercept_scaling > 0),
                  ErrorCode::kInvalidArgument, "erm problem: intercept_scaling must be finite and > 0: got ",
                  intercept_scaling);
  for (size_t i = 0; i < y.size(); ++i) {
    INDUCTIVE_CHECK(std::isfinite(y[i]), ErrorCode::kInvalidArgument, "erm problem: label of sample ", i,
                    " is not finite: got ", y[i]);
    INDUCTIVE_CHECK(!loss.is_classification() || y[i] == 1.0 || y[i] == -1.0, ErrorCode::kInvalidArgument,
                    "erm problem: loss ", loss.name(), " needs labels -1/+1: sample ", i, " has label ", y[i],
                    " (use to_signed_labels / one_vs_rest)");
  }
}

double DualityGap::certified() const {
  // Sums of n terms carry a relative error of a few n eps; 1e-12 of the objectives' magnitude covers that for
  // any n up to ~1e3 / eps and is far below every gap a solver stops at.
  return std::max(gap, 0.0) + 1e-12 * (std::abs(primal) + std::abs(dual));
}

VecD margins(const ErmProblem& problem, const VecD& x, const ActiveSet* active) {
  const ProblemRows rows(problem);
  const auto idx = detail::active_rows(problem, active);
  VecD t(static_cast<Eigen::Index>(idx.size()));
  for (size_t k = 0; k < idx.size(); ++k) t[static_cast<Eigen::Index>(k)] = rows.margin(idx[k], x.data());
  return t;
}

double primal_objective(const ErmProblem& problem, const VecD& x, const ActiveSet* active) {
  const VecD t = margins(problem, x, active);
  double loss = 0;
  for (Eigen::Index k = 0; k < t.size(); ++k) loss += problem.loss.value(t[k]);
  return loss / problem.n() + problem.lambda * problem.penalty.value(x);
}

namespace {

// -A^T nu / n over the active samples.
VecD dual_direction(const ErmProblem& problem, const VecD& nu, const std::vector<int>& idx) {
  const ProblemRows rows(problem);
  VecD u = VecD::Zero(problem.dim());
  for (int i : idx)
    if (nu[i] != 0.0) rows.axpy(i, -nu[i] / problem.n(), u.data());
  return u;
}

}  // namespace

double dual_objective(const ErmProblem& problem, const VecD& nu, const ActiveSet* active) {
  INDUCTIVE_CHECK(nu.size() == problem.n(), ErrorCode::kShapeMismatch, "dual objective: nu has ", nu.size(),
                  " entries for ", problem.n(), " samples");
  const ProblemRows rows(problem);
  const auto idx = detail::active_rows(problem, active);
  double conj = 0;
  for (int i : idx) conj += problem.loss.conjugate(nu[i]) + rows.offset(i) * nu[i];
  const VecD u = dual_direction(problem, nu, idx);
  return -conj / problem.n() - problem.penalty.conjugate(u, problem.lambda);
}

VecD dual_point(const ErmProblem& problem, const VecD& x, const ActiveSet* active) {
  const ProblemRows rows(problem);
  const auto idx = detail::active_rows(problem, active);
  VecD nu = VecD::Zero(problem.n());
  for (int i : idx) nu[i] = problem.loss.derivative(rows.margin(i, x.data()));
  if (problem.penalty.l2_weight(problem.lambda) == 0) {
    // (lambda ||.||_1)^* is the indicator of ||u||_inf <= lambda: shrink nu towards 0 (which stays inside every
    // loss's conjugate domain, an interval holding 0) until -A^T nu / n fits.
    const double norm = dual_direction(problem, nu, idx).lpNorm<Eigen::Infinity>();
    const double a = problem.penalty.l1_weight(problem.lambda);
    if (norm > a) nu *= a / norm * (1.0 - 1e-15);
  }
  return nu;
}

VecD primal_point(const ErmProblem& problem, const VecD& nu, const ActiveSet* active) {
  const auto idx = detail::active_rows(problem, active);
  return problem.penalty.conjugate_gradient(dual_direction(problem, nu, idx), problem.lambda);
}

VecD subgradient(const ErmProblem& problem, const VecD& x, const ActiveSet* active) {
  const ProblemRows rows(problem);
  const auto idx = detail::active_rows(problem, active);
  VecD g = VecD::Zero(problem.dim());
  for (int i : idx) {
    const double d = problem.loss.derivative(rows.margin(i, x.data()));
    if (d != 0.0) rows.axpy(i, d / problem.n(), g.data());
  }
  problem.penalty.add_subgradient(x, problem.lambda, g);
  return g;
}

DualityGap duality_gap(const ErmProblem& problem, const VecD& x, const VecD& nu, const ActiveSet* active) {
  DualityGap g;
  g.primal = primal_objective(problem, x, active);
  g.dual = dual_objective(problem, nu, active);
  g.gap = g.primal - g.dual;
  return g;
}

DualityGap duality_gap(const ErmProblem& problem, const VecD& x, const ActiveSet* active) {
  return duality_gap(problem, x, dual_point(problem, x, active), active);
}

VecD decision_function(const DesignMatrix& features, const VecD& x, bool intercept, double intercept_scaling) {
  const int p = features.cols();
  INDUCTIVE_CHECK(x.size() == p + (intercept ? 1 : 0), ErrorCode::kShapeMismatch, "decision function: model has ",
                  x.size(), " coefficients, expected ", p + (intercept ? 1 : 0), " for ", p, " features",
                  intercept ? " and an intercept" : "");
  VecD s(features.rows());
  for (int i = 0; i < features.rows(); ++i)
    s[i] = features.row_dot(i, x.data()) + (intercept ? intercept_scaling * x[p] : 0.0);
  return s;
}

}  // namespace inductive
