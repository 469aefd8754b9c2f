// inductive/screening/problem.h - the regularised ERM problem, its dual, and duality gaps (thesis ch. 4 eq. ERM).
//
//   P(x) = 1/n sum_i phi(t_i(x)) + lambda R(x)
//   t_i(x) = r_i^T x - o_i,  r_i = b_i [a_i; c], o_i = 0   (classification, b_i in {-1, +1})
//                            r_i =     [a_i; c], o_i = b_i (regression)
// where [a_i; c] appends the intercept column c = intercept_scaling when `intercept` is on (LIBLINEAR style: the
// intercept is one more, penalised, coordinate of x; an unpenalised intercept would cost the strong convexity the
// gap-safe regions rely on; a large intercept_scaling makes its penalty negligible).
//
// Dual (Fenchel; the thesis' eq. dual with its nu):
//   D(nu) = -1/n sum_i phi_i^*(nu_i) - (lambda R)^*(-A^T nu / n),   phi_i^*(y) = phi^*(y) + o_i y,
// with A^T nu = sum_i nu_i r_i. P(x) >= D(nu) for every x and nu, and at the optimum nu*_i = phi'(t_i(x*)), so
// a sample whose optimal margin lies inside the flat region has nu*_i = 0 and can be removed.
//
// Active sets: every function takes an optional list of sample indices (nullptr = all samples). The reduced
// problem keeps the factor 1/n of the full one, so when the removed samples are flat at the optimum it has the
// same minimiser and the same optimal value, and its duality gap certifies the full problem's minimiser.
#pragma once

#include <vector>

#include "inductive/screening/design_matrix.h"
#include "inductive/screening/loss.h"
#include "inductive/screening/penalty.h"

namespace inductive {

using ActiveSet = std::vector<int>;

// The lambda of a problem a user states without one (`inductive screen`, the browser's screen()): one value for
// every front end. The loss and penalty default to Loss{} and Penalty::from_name's (squared hinge, L2).
constexpr double kDefaultErmLambda = 0.1;

struct ErmProblem {
  const DesignMatrix* x = nullptr;  // n x p features (borrowed; must outlive the problem)
  std::vector<double> y;            // n labels: +-1 for classification losses, real targets for regression
  Loss loss;
  Penalty penalty;
  double lambda = 1.0;
  bool intercept = false;
  double intercept_scaling = 1.0;

  int n() const;
  int features() const;  // p
  int dim() const;       // p + (intercept ? 1 : 0): the length of x
  // Throws Error naming the first problem: shapes, labels (+-1 for classification), lambda > 0, loss/penalty.
  void validate() const;
};

struct DualityGap {
  double primal = 0, dual = 0, gap = 0;
  // gap clamped at 0 plus a rounding allowance, so regions built from it contain x* even when P - D rounds
  // below its true value (the reference code took sqrt of negative rounding gaps and got NaN).
  double certified() const;
};

// t_i(x) for the active samples, in the order of `active` (all samples when nullptr).
VecD margins(const ErmProblem& problem, const VecD& x, const ActiveSet* active = nullptr);
double primal_objective(const ErmProblem& problem, const VecD& x, const ActiveSet* active = nullptr);
// nu has n entries; entries outside `active` must be 0 (they are ignored).
double dual_objective(const ErmProblem& problem, const VecD& nu, const ActiveSet* active = nullptr);
// A feasible dual point from a primal point: nu_i = phi'(t_i(x)) on the active samples (0 elsewhere), scaled
// into the l_inf ball for L1 (the gap-safe rescaling of Fercoq, Gramfort & Salmon 2015).
VecD dual_point(const ErmProblem& problem, const VecD& x, const ActiveSet* active = nullptr);
// x(nu) = grad (lambda R)^*(-A^T nu / n), the primal point of a dual point (L2 and elastic net).
VecD primal_point(const ErmProblem& problem, const VecD& nu, const ActiveSet* active = nullptr);
// A subgradient of P (of the reduced problem when `active` is given) at x.
VecD subgradient(const ErmProblem& problem, const VecD& x, const ActiveSet* active = nullptr);
DualityGap duality_gap(const ErmProblem& problem, const VecD& x, const VecD& nu, const ActiveSet* active = nullptr);
DualityGap duality_gap(const ErmProblem& problem, const VecD& x, const ActiveSet* active = nullptr);
// Decision values a_i^T w + c * x_c for any features matrix with p columns (x from a problem of that shape).
VecD decision_function(const DesignMatrix& features, const VecD& x, bool intercept, double intercept_scaling);

}  // namespace inductive
