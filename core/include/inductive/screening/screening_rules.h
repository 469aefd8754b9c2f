// inductive/screening/screening_rules.h - the closed-form SAFE tests: bounds on every sample's margin over a
// region that holds x*, computed for all samples at once (one A V product, O(n p k)).
//
// SAFE rule (thesis Lemma "SAFE rule"): if over a region X containing x* the margin t_i(x) stays strictly inside
// the loss's flat region, then nu*_i = 0 and sample i can be removed without changing the optimum.
//
// Closed-form test (thesis Lemma "closed-form screening test"): for the ellipsoid E(z, E) cut by the half-space
// g^T (x - z) <= 0 (g a subgradient of P at z),
//   max r^T x = r^T z + sqrt(r^T E r)                                if g^T E r <= 0  (the cut is inactive)
//             = r^T z + sqrt(r^T E r - (g^T E r)^2 / (g^T E g))      otherwise,
// and min r^T x = -max (-r)^T x. The thesis prints the second case as r^T (z + E (r - nu g) / (2 gamma)) with
// gamma = sqrt((r - nu g)^T E (r - nu g) / 2); with (r - nu g)^T E (r - nu g) = r^T E r - nu g^T E r that is
// r^T z + sqrt((r^T E r - (g^T E r)^2 / g^T E g) / 2): a factor 1/sqrt(2) too small, hence UNSAFE. Its own proof
// gives 2 gamma = sqrt(...), which is the formula above (checked against brute force in the tests).
//
// Rounding: quadratic forms are inflated by a relative 1e-10 of the terms that cancel and the dot products by
// 1e-12 |r| |z|, so finite precision can only make a test more conservative.
#pragma once

#include <vector>

#include "inductive/screening/ellipsoid.h"
#include "inductive/screening/problem.h"

namespace inductive {

// Bounds lower_k <= t_{rows[k]}(x) <= upper_k for every x in the region.
struct MarginBounds {
  VecD lower, upper;
};

// max r^T x over the ellipsoid, cut by {g^T (x - z) <= 0} when `cut` is given (a single vector; see above).
double max_linear_form(const Ellipsoid& region, const VecD* cut, const VecD& r);

// Margin bounds of the samples `rows` over the ellipsoid (a ball is an ellipsoid of rank 0), cut when `cut` is
// given. `cut` must be a subgradient of P (or of a reduced problem with the same minimiser) at the centre.
MarginBounds margin_bounds(const ErmProblem& problem, const Ellipsoid& region, const VecD* cut,
                           const std::vector<int>& rows);
// Both regions hold x*, so their bounds combine: the larger lower bound and the smaller upper bound.
void tighten(MarginBounds& bounds, const MarginBounds& other);

// Screening score of each sample: how far its margin bounds sit inside the flat region,
//   score = min(lower - flat.lo, flat.hi - upper);
// score > 0 <=> the sample is certified flat at the optimum (screened). Larger = easier sample.
VecD screening_scores(const Loss& loss, const MarginBounds& bounds);

}  // namespace inductive
