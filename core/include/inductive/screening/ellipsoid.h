// inductive/screening/ellipsoid.h - ellipsoidal regions {x : (x - z)^T E^{-1} (x - z) <= 1} that contain the
// optimum x*, and the ellipsoid method that shrinks them (thesis ch. 4, Algorithm "Building ellipsoidal test
// regions"; Nemirovski & Yudin 1979, Bland, Goldfarb & Todd 1981).
//
// Storage: E = s I - L diag(d) L^T with L: p x k (k = rank). A ball of radius rho is s = rho^2, k = 0. One step
// of the method is a rank-one update, so it costs O(p k) instead of O(p^2):
//   g~ = g / sqrt(g^T E g),  u = E g~,  z <- z - u / (p + 1),  E <- p^2/(p^2 - 1) (E - 2/(p + 1) u u^T)
// i.e. s <- c s, d <- c d, and the column u joins L with weight c * 2/(p+1), c = p^2/(p^2 - 1). This is the exact
// recursion (the reference's closed form with powers of s drifted ~4% by 1000 steps at p = 64).
// Rounding: when the rank reaches 2p the form is refactored from an eigendecomposition of E (p x p), with
// negative rounding eigenvalues clamped to a small positive floor, and earlier when trace(E) falls below 1e-6 of
// the terms it is the difference of: that bounds both the storage and the cancellation in s I - L D L^T. Quadratic
// forms are clamped at 0, and the screening tests inflate them slightly (see screening_rules.h), so the region stays a
// superset of the exact one. Thread safety: const methods are re-entrant.
#pragma once

#include "inductive/screening/design_matrix.h"

namespace inductive {

class Ellipsoid {
 public:
  // The ball of centre `centre` and radius `radius` >= 0 (E = radius^2 I).
  static Ellipsoid ball(VecD centre, double radius);

  int dim() const { return static_cast<int>(z_.size()); }
  int rank() const { return static_cast<int>(l_.cols()); }
  const VecD& centre() const { return z_; }
  double scale() const { return s_; }             // s
  const MatDc& directions() const { return l_; }  // L (p x k)
  const VecD& weights() const { return d_; }      // d (k)
  int steps() const { return steps_; }            // ellipsoid-method steps taken

  VecD apply(const VecD& v) const;        // E v
  double quadratic(const VecD& v) const;  // v^T E v, clamped at 0
  MatDc dense() const;                    // E as a p x p matrix (tests and small problems)
  // True when x lies in the ellipsoid up to a relative `slack` (computes E^{-1} densely: tests only).
  bool contains(const VecD& x, double slack = 1e-9) const;

  // One step of the ellipsoid method with g a subgradient of the objective at the centre: afterwards the
  // ellipsoid is the smallest one containing {x in E : g^T (x - z) <= 0}, which still holds x* (convexity:
  // g^T (x* - z) <= P(x*) - P(z) <= 0). Returns false and changes nothing when g^T E g <= 0: g = 0 means the
  // centre is optimal, and a degenerate (flat) ellipsoid cannot be cut further; and when every semi-axis is below
  // 1e-9 (1 + ||z||), where subgradients computed in double no longer place cuts reliably.
  bool step(const VecD& g);

 private:
  void refactor();

  VecD z_;
  double s_ = 0;
  MatDc l_;
  VecD d_;
  int steps_ = 0;
};

}  // namespace inductive
