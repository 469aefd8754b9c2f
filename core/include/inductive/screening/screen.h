// inductive/screening/screen.h - static safe screening from an approximate solution x0 (thesis ch. 4,
// "Building the test region"), with certified initial regions only.
//
// Regions, each proven to contain x*:
//   gap ball   strongly convex problems (L2, elastic net; kappa = 2 lambda (1 - l1_ratio)):
//              kappa/2 ||x0 - x*||^2 <= P(x0) - P* <= P(x0) - D(nu)  =>  B(x0, sqrt(2 gap / kappa)).
//   l1 ball    penalties with an L1 part (weight a = lambda l1_ratio): a ||x*||_1 <= P* <= min(P(x0), P(0)) and
//              ||.||_2 <= ||.||_1  =>  B(0, min(P(x0), P(0)) / a).
//   ellipsoid  `ellipsoid_steps` steps of the ellipsoid method started from the smaller ball, with subgradients
//              of the problem reduced to the samples the balls kept (same minimiser, so the cuts stay valid); every
//              iterate holds x*, so each one's bounds are combined (more steps never screen fewer samples).
//   support    pure L1 (no strong convexity) with a smooth loss (phi' L-Lipschitz): the dual is 1/(n L)-strongly
//              concave, so ||nu* - nu0||^2 <= 2 n L gap (Gap Safe, Fercoq et al. 2015); KKT says x*_j != 0 only
//              where |(R^T nu*)_j| / n = a, so every feature with |(R^T nu0)_j| / n + ||R_j|| r / n < a is zero in
//              every minimiser (R: the rows r_i of the margins t_i = r_i^T x - o_i). The l1 ball and the ellipsoid
//              method then run in the subspace of the remaining features (the problem restricted to them has the
//              same minimisers), where the ellipsoid method converges in O(|S|^2) steps instead of O(p^2): this is
//              what screens samples for L1 at all.
// Each region is tested with the closed form of screening_rules.h, cut through its centre by the subgradient
// there when `cut` is on, and the bounds of all regions are combined. There is deliberately no option to
// supply a guessed radius: the reference's min(gap radius, p, P(w0)) missed the optimum 13 times.
// Thread safety: re-entrant.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "inductive/screening/ellipsoid.h"
#include "inductive/screening/problem.h"
#include "inductive/screening/screening_rules.h"

namespace inductive {

struct ScreenOptions {
  bool gap_ball = true;
  bool l1_ball = true;
  int ellipsoid_steps = 0;
  bool cut = true;
  bool l1_support = true;  // pure L1 + smooth loss: restrict the l1 ball and the ellipsoid to the certified support
  void validate() const;
};

struct ScreenResult {
  std::vector<uint8_t> screened;  // n flags: 1 = certified flat at the optimum, removable
  VecD score;                     // n screening scores (screening_rules.h): > 0 <=> screened
  MarginBounds bounds;            // n bounds on t_i(x*)
  int n_screened = 0;
  int n_by_balls = 0;                  // screened by the balls alone
  DualityGap gap;                      // at (x0, nu0)
  double gap_radius = -1;              // radius of the gap ball (-1: not used)
  double l1_radius = -1;               // radius of the l1 ball around 0 (-1: not used)
  int support_size = -1;               // features (+ intercept) left by the l1_support test (-1: not used)
  std::vector<int> support;            // those coordinates, increasing (the intercept is index p)
  double dual_radius = -1;             // its dual ball's radius
  std::optional<Ellipsoid> ellipsoid;  // final ellipsoid when steps were taken
  double seconds = 0;

  ActiveSet kept() const;  // the samples not screened
};

// x0: approximate solution (dim entries); nu0: optional dual point (n entries) for a tighter gap than the one
// derived from x0 (e.g. the dual coordinate ascent iterate).
ScreenResult screen_samples(const ErmProblem& problem, const VecD& x0, const ScreenOptions& options = {},
                            const VecD* nu0 = nullptr);

}  // namespace inductive
