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
#include <string>
#include <vector>

#include "inductive/enum_names.h"
#include "inductive/screening/problem.h"
#include "inductive/screening/solve_and_screen.h"
#include "inductive/screening/solver.h"

namespace inductive {

// The kernels of `inductive screen --kernel` and the browser's screen({kernel}), with scikit-learn's conventions:
//   linear      K(a, b) = a^T b
//   gaussian    K(a, b) = exp(-gamma ||a - b||^2)
//   polynomial  K(a, b) = (gamma a^T b + coef0)^degree
enum class KernelKind { kLinear, kGaussian, kPolynomial };
inline constexpr EnumName<KernelKind> kKernelKinds[] = {
    {KernelKind::kLinear, "linear"}, {KernelKind::kGaussian, "gaussian"}, {KernelKind::kPolynomial, "polynomial"}};
template <>
struct EnumTable<KernelKind> {
  static constexpr const auto& names = kKernelKinds;
};

struct KernelSpec {
  KernelKind kind = KernelKind::kGaussian;
  double gamma = 0;  // 0: 1 / p (scikit-learn's gamma="auto"); else finite and > 0
  int degree = 3;    // polynomial: 1..20
  double coef0 = 1;  // polynomial: finite
  // Throws Error{kInvalidArgument} naming the bad field.
  void validate() const;
  // gamma as used for data with p features (the default resolved).
  double gamma_for(int p) const;
  // "gaussian(gamma=0.5)", "polynomial(gamma=0.1, degree=3, coef0=1)", "linear".
  std::string describe(int p) const;
};

// K(a_i, b_j) for the rows of `test` (m) against those of `train` (n): m x n. One GEMM on densified rows.
MatD kernel_cross_gram(const KernelSpec& kernel, const DesignMatrix& test, const DesignMatrix& train);
MatD kernel_gram(const KernelSpec& kernel, const DesignMatrix& x);

// exp(-gamma ||a_i - a_j||^2) for all pairs of rows of `x` (n x n), and between the rows of `test` and `train`.
MatD gaussian_gram(const DesignMatrix& x, double gamma);
MatD gaussian_cross_gram(const DesignMatrix& test, const DesignMatrix& train, double gamma);

// The largest n kernel screening accepts in this build. The method holds the n x n Gram matrix, its
// eigendecomposition's working copy and eigenvectors, and the kernel map: about 4 n^2 doubles (2 GB at the native
// limit of 8000, 288 MB at the browser's 3000, whose wasm memory tops out at 4 GB) and O(n^3) time (about a minute
// at 8000 on one core). Larger data: screen a subsample, or use the linear problem on explicit features.
int max_kernel_samples();

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

// What `inductive screen --kernel` and the browser's screen({kernel}) run: the samples' Gram matrix, its kernel
// map, then solve_and_screen on the equivalent linear problem (screened flags, kept indices and scores are per
// sample, as in the linear case).
struct KernelScreenResult {
  std::unique_ptr<KernelProblem> kernel_problem;  // the linear problem on the kernel map (for verify_screening)
  SolveAndScreenResult result;
  VecD alpha;                 // n coefficients, h = sum_j alpha_j K(a_j, .) + b; 0 for every screened sample
  double intercept = 0;       // b
  VecD decision;              // h(a_i) + b for the training samples (n)
  double kernel_seconds = 0;  // Gram matrix and its eigendecomposition
};

// `samples` gives the rows, targets, loss, lambda and intercept; its penalty must be L2 (the RKHS norm: lambda
// ||h||_H^2). Checks n <= max_kernel_samples() before allocating. Throws Error{kInvalidArgument}.
KernelScreenResult kernel_solve_and_screen(const ErmProblem& samples, const KernelSpec& kernel,
                                           const SolverOptions& options, const ScreenOptions& screen = {});

}  // namespace inductive
