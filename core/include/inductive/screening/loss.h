// inductive/screening/loss.h - the losses of safe sample screening (thesis ch. 4, "Constructing safe losses").
//
// A loss is a convex function phi(t) of the sample's "margin" t:
//   classification (labels b_i in {-1, +1}):  t_i = b_i a_i^T x
//   regression     (real targets b_i):        t_i = a_i^T x - b_i
// and the problem is  min_x 1/n sum_i phi(t_i) + lambda R(x)  (see problem.h).
//
// mu follows the thesis (paper convention). Classification losses are flat for t > 1 - mu; the public reference
// code instead calls the margin threshold itself "mu" (mu_code = 1 - mu_paper): use `margin_threshold()` /
// the `*_threshold` factories for that convention.
//
//   kind                 phi(t)                                         flat region (open)   conjugate phi*(y)
//   kSquaredHinge        [1 - mu - t]_+^2                               t > 1 - mu           (1-mu) y + y^2/4, y <= 0
//   kHinge               [1 - mu - t]_+                                 t > 1 - mu           (1-mu) y, y in [-1, 0]
//   kSafeLogistic        e^{t+mu-1} - (t+mu) if t + mu - 1 <= 0, else 0 t > 1 - mu           (1+y)log(1+y) - mu y, y in
//   [-1, 0] kLogistic            log(1 + e^{-t})                                none                 (-y)log(-y) +
//   (1+y)log(1+y), y in [-1, 0] kIntervalRegression  1/2 [|t| - mu]_+^2   (screening-friendly)      |t| < mu y^2/2 + mu
//   |y| kSquared             1/2 t^2                                        none                 y^2/2
//
// Notes on the thesis: it derives the hinge as 1/2 [1 - t - mu]_+ (a factor 1/2 from its construction); we use
// the standard hinge of LIBLINEAR / scikit-learn. Squared hinge has no 1/2, as in LinearSVC. Interval regression
// with mu = 0 is the squared loss. Everything here is double precision and throws Error{kInvalidArgument} for an
// invalid mu (NaN/Inf; mu < 0 for interval regression; mu != 0 for the losses without mu).
#pragma once

#include <limits>
#include <string>

namespace inductive {

enum class LossKind { kSquaredHinge, kHinge, kSafeLogistic, kLogistic, kIntervalRegression, kSquared };

// An open interval (lo, hi); infinite ends allowed. A sample whose margin stays strictly inside its loss's flat
// region over a region containing x* has a zero dual variable at the optimum and can be removed (SAFE rule).
struct Interval {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool empty() const { return !(lo < hi); }
  bool contains(double t) const { return lo < t && t < hi; }
};

struct Loss {
  LossKind kind = LossKind::kSquaredHinge;
  double mu = 0.0;  // the thesis' mu (see above)

  static Loss squared_hinge(double mu = 0.0) { return {LossKind::kSquaredHinge, mu}; }
  static Loss hinge(double mu = 0.0) { return {LossKind::kHinge, mu}; }
  static Loss safe_logistic(double mu = 0.0) { return {LossKind::kSafeLogistic, mu}; }
  static Loss logistic() { return {LossKind::kLogistic, 0.0}; }
  static Loss interval_regression(double mu) { return {LossKind::kIntervalRegression, mu}; }
  static Loss squared() { return {LossKind::kSquared, 0.0}; }
  // The reference code's convention: flat for t > threshold (mu_paper = 1 - threshold).
  static Loss squared_hinge_threshold(double threshold) { return squared_hinge(1.0 - threshold); }
  static Loss hinge_threshold(double threshold) { return hinge(1.0 - threshold); }
  static Loss safe_logistic_threshold(double threshold) { return safe_logistic(1.0 - threshold); }
  // "squared_hinge" | "hinge" | "safe_logistic" | "logistic" | "interval_regression" | "squared".
  static Loss from_name(const std::string& name, double mu = 0.0);
  const char* name() const;

  void validate() const;
  bool is_classification() const;
  bool is_smooth() const;           // phi' Lipschitz (all but the hinge)
  double smoothness() const;        // Lipschitz constant of phi' (inf for the hinge)
  double margin_threshold() const;  // classification: 1 - mu
  Interval flat_region() const;     // empty for logistic and squared

  double value(double t) const;
  // phi'(t); for the hinge, the subgradient -1 for t < threshold and 0 for t >= threshold.
  double derivative(double t) const;
  // phi*(y) = sup_t t y - phi(t); +inf outside its domain.
  double conjugate(double y) const;
  // The closure of dom phi* as an interval [lo, hi] (phi' takes its values there).
  Interval conjugate_domain() const;
  // prox_{q phi}(v) = argmin_u phi(u) + (u - v)^2 / (2 q), q > 0: the one-dimensional step of dual coordinate
  // ascent. Closed form except for the two logistic losses (safeguarded Newton to machine precision).
  double prox(double v, double q) const;
};

}  // namespace inductive
