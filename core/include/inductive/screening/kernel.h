// inductive/screening/kernel.h - safe screening for kernel methods (thesis ch. 4, "Extension to kernel methods").
//
// Problem: min_h 1/n sum_i phi(t_i) + lambda ||h||_H^2 with t_i = b_i h(a_i) (classification) or h(a_i) - b_i,
// h = sum_j alpha_j K(a_j, .) by the representer theorem, so ||h||_H^2 = alpha^T K alpha (the thesis' RKHS-norm
// penalty).
//
// Implementation: the empirical kernel map. With K = U diag(ev) U^T (eigenvalues below rel_tol * max dropped, the
// negative rounding ones included), Phi = U diag(sqrt(ev)) satisfies K = Phi Phi^T, and h(a_i) = Phi_i^T x with
// ||h||_H^2 = ||x||^2 for x = Phi^T alpha. The kernel problem is therefore the linear L2 problem on the design
// Phi, and every solver, region and test of this library applies unchanged; the thesis' test over alpha is the
// same test expressed in other coordinates (there K may be singular, so alpha-space is not strongly convex, but
// the RKHS coordinates x are). Costs one O(n^3) eigendecomposition.
#pragma once

#include <memory>
#include <vector>

#include "inductive/screening/problem.h"
#include "inductive/screening/solver.h"

namespace inductive {

// exp(-gamma ||a_i - a_j||^2) for all pairs of rows of `x` (n x n), and between the rows of `test` and `train`.
MatD gaussian_gram(const DesignMatrix& x, double gamma);
MatD gaussian_cross_gram(const DesignMatrix& test, const DesignMatrix& train, double gamma);

class KernelProblem {
 public:
  // gram: n x n symmetric positive semi-definite (checked up to rounding); y: labels/targets as in problem.h.
  KernelProblem(const MatD& gram, std::vector<double> y, Loss loss, double lambda, bool intercept = false,
                double intercept_scaling = 1.0, double rel_tol = 1e-10);

  // The equivalent linear problem (L2 penalty, design = the empirical kernel map).
  const ErmProblem& problem() const { return problem_; }
  ErmProblem& problem() { return problem_; }
  int rank() const { return static_cast<int>(eigenvalues_.size()); }

  // alpha (n) with K alpha = Phi x_features, and the intercept b, of a solution x of problem().
  VecD alpha(const VecD& x) const;
  double intercept(const VecD& x) const;
  // h(a) + b for new points given their kernel values against the training points (m x n).
  VecD decision_function(const MatD& cross_gram, const VecD& x) const;

 private:
  std::unique_ptr<DenseDesignD> map_;
  MatDc basis_;       // U (n x r)
  VecD eigenvalues_;  // ev (r)
  ErmProblem problem_;
};

}  // namespace inductive
