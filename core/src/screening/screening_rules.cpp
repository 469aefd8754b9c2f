// Closed-form screening tests over cut ellipsoids (see inductive/screening/screening_rules.h).
#include <algorithm>
#include <cmath>

#include "inductive/error.h"
#include "inductive/screening/screening_rules.h"
#include "rows.h"

namespace inductive {
namespace {

constexpr double kQuadSlack = 1e-10;
constexpr double kDotSlack = 1e-12;

// sqrt(q - [sign * rEg > 0] rEg^2 / gEg) with the rounding allowance, for the max of (sign * r)^T x.
double half_width(double q, double slack, double reg, double geg, double sign) {
  double v = q;
  if (geg > 0 && sign * reg > 0) v -= reg * reg / geg;
  return std::sqrt(std::max(v, 0.0) + slack);
}

}  // namespace

double max_linear_form(const Ellipsoid& region, const VecD* cut, const VecD& r) {
  INDUCTIVE_CHECK(r.size() == region.dim(), ErrorCode::kShapeMismatch, "max_linear_form: vector has ", r.size(),
                  " entries, expected ", region.dim());
  const double q = region.quadratic(r);
  double reg = 0, geg = 0;
  if (cut != nullptr) {
    const VecD eg = region.apply(*cut);
    reg = r.dot(eg);
    geg = cut->dot(eg);
  }
  return r.dot(region.centre()) + half_width(q, 0.0, reg, geg, 1.0);
}

MarginBounds margin_bounds(const ErmProblem& problem, const Ellipsoid& region, const VecD* cut,
                           const std::vector<int>& rows) {
  const detail::ProblemRows prow(problem);
  INDUCTIVE_CHECK(region.dim() == prow.dim(), ErrorCode::kShapeMismatch, "screening: region has dimension ",
                  region.dim(), ", expected ", prow.dim(), " (features", problem.intercept ? " + intercept)" : ")");
  const bool use_cut = cut != nullptr;
  VecD eg;
  double geg = 0;
  if (use_cut) {
    INDUCTIVE_CHECK(cut->size() == region.dim(), ErrorCode::kShapeMismatch, "screening: cut has ", cut->size(),
                    " entries, expected ", region.dim());
    eg = region.apply(*cut);
    geg = cut->dot(eg);
  }
  // V = [z, E g, L]: every quantity of the closed form is a column of R V.
  const int k = region.rank(), off = use_cut ? 2 : 1;
  MatDc v(region.dim(), off + k);
  v.col(0) = region.centre();
  if (use_cut) v.col(1) = eg;
  if (k > 0) v.rightCols(k) = region.directions();
  MatDc m;
  prow.rows_times(rows, v, m);

  const double s = region.scale(), znorm = region.centre().norm();
  const VecD& d = region.weights();
  MarginBounds b;
  b.lower.resize(static_cast<Eigen::Index>(rows.size()));
  b.upper.resize(b.lower.size());
  for (size_t idx = 0; idx < rows.size(); ++idx) {
    const auto r = static_cast<Eigen::Index>(idx);
    const int i = rows[idx];
    const double sqn = prow.sq_norm(i);
    double q = s * sqn, magnitude = std::abs(s) * sqn;
    for (int j = 0; j < k; ++j) {
      const double c = m(r, off + j) * m(r, off + j) * d[j];
      q -= c;
      magnitude += std::abs(c);
    }
    q = std::max(q, 0.0);
    const double slack = kQuadSlack * magnitude;
    const double reg = use_cut ? m(r, 1) : 0.0;
    const double rz = m(r, 0), dot_slack = kDotSlack * std::sqrt(sqn) * znorm, o = prow.offset(i);
    b.lower[r] = rz - half_width(q, slack, reg, geg, -1.0) - dot_slack - o;
    b.upper[r] = rz + half_width(q, slack, reg, geg, 1.0) + dot_slack - o;
  }
  return b;
}

void tighten(MarginBounds& bounds, const MarginBounds& other) {
  INDUCTIVE_CHECK(bounds.lower.size() == other.lower.size(), ErrorCode::kShapeMismatch, "screening: combining ",
                  bounds.lower.size(), " bounds with ", other.lower.size());
  bounds.lower = bounds.lower.cwiseMax(other.lower);
  bounds.upper = bounds.upper.cwiseMin(other.upper);
}

VecD screening_scores(const Loss& loss, const MarginBounds& bounds) {
  const Interval flat = loss.flat_region();
  VecD score(bounds.lower.size());
  for (Eigen::Index k = 0; k < score.size(); ++k) {
    if (flat.empty()) {
      score[k] = -std::numeric_limits<double>::infinity();
      continue;
    }
    const double lo = std::isinf(flat.lo) ? std::numeric_limits<double>::infinity() : bounds.lower[k] - flat.lo;
    const double hi = std::isinf(flat.hi) ? std::numeric_limits<double>::infinity() : flat.hi - bounds.upper[k];
    score[k] = std::min(lo, hi);
  }
  return score;
}

}  // namespace inductive
