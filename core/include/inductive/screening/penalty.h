// inductive/screening/penalty.h - the penalties R(x) of the ERM problem  1/n sum_i phi(t_i) + lambda R(x).
//
// Conventions (thesis ch. 4: "R = L1 or squared L2"; its kernel section writes lambda alpha^T K alpha, i.e. the
// squared norm without 1/2, and the public reference's "lambda 1" on digits matches that):
//   kL2          R(x) = ||x||_2^2                                  lambda R is 2 lambda-strongly convex
//   kL1          R(x) = ||x||_1                                    not strongly convex
//   kElasticNet  R(x) = r ||x||_1 + (1 - r) ||x||_2^2, r = l1_ratio   2 lambda (1 - r)-strongly convex
// Mapping to scikit-learn (n samples): LinearSVC / LogisticRegression with an L2 penalty minimise
// 1/2 ||w||^2 + C sum_i loss_i, i.e. lambda = 1 / (2 C n); L1 (liblinear) minimises ||w||_1 + C sum_i loss_i,
// i.e. lambda = 1 / (C n). The penalty covers every coordinate of x, the LIBLINEAR-style intercept included.
#pragma once

#include <string>

#include "inductive/screening/design_matrix.h"

namespace inductive {

enum class PenaltyKind { kL2, kL1, kElasticNet };

constexpr double kDefaultL1Ratio = 0.5;  // the elastic net's r when a user names the penalty without one

struct Penalty {
  PenaltyKind kind = PenaltyKind::kL2;
  double l1_ratio = 0.0;  // r of the elastic net (0 < r < 1); 0 for L2, 1 for L1

  static Penalty l2() { return {PenaltyKind::kL2, 0.0}; }
  static Penalty l1() { return {PenaltyKind::kL1, 1.0}; }
  static Penalty elastic_net(double l1_ratio) { return {PenaltyKind::kElasticNet, l1_ratio}; }
  // "l2" | "l1" | "elastic_net" (the latter takes l1_ratio).
  static Penalty from_name(const std::string& name, double l1_ratio = kDefaultL1Ratio);
  const char* name() const;
  void validate() const;

  double value(const VecD& x) const;  // R(x)
  // Coefficients of lambda R = a ||x||_1 + b ||x||^2.
  double l1_weight(double lambda) const;
  double l2_weight(double lambda) const;
  // kappa with lambda R(y) >= lambda R(x) + <s, y - x> + kappa/2 ||y - x||^2 (0 for L1).
  double strong_convexity(double lambda) const { return 2.0 * l2_weight(lambda); }
  // (lambda R)^*(u); +inf when ||u||_inf exceeds lambda for L1 (a relative 1e-12 is tolerated for rounding).
  double conjugate(const VecD& u, double lambda) const;
  // grad (lambda R)^*(u): the primal point matching a dual point (strongly convex penalties only).
  VecD conjugate_gradient(const VecD& u, double lambda) const;
  // v <- argmin_x lambda R(x) + ||x - v||^2 / (2 step).
  void prox(VecD& v, double step, double lambda) const;
  // g += a subgradient of lambda R at x (sign(0) = 0 for the L1 part).
  void add_subgradient(const VecD& x, double lambda, VecD& g) const;
};

}  // namespace inductive
