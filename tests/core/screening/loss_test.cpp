// Safe losses: values, derivatives (finite differences), conjugates (Fenchel-Young and brute-force suprema), proximal
// steps (optimality), flat regions, and the two mu conventions.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "inductive/screening/loss.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

std::vector<Loss> all_losses() {
  return {Loss::squared_hinge(),          Loss::squared_hinge(0.4), Loss::hinge(),    Loss::hinge(-0.5),
          Loss::safe_logistic(),          Loss::safe_logistic(0.3), Loss::logistic(), Loss::interval_regression(0.0),
          Loss::interval_regression(0.7), Loss::squared()};
}

std::vector<double> probe_points() {
  std::vector<double> t;
  for (double v = -4.0; v <= 4.0; v += 0.173) t.push_back(v);
  return t;
}

TEST(Loss, ValuesMatchTheThesisFormulas) {
  // squared hinge [1 - t - mu]_+^2, safe logistic e^{t+mu-1} - (t+mu) below 1 - mu, interval 1/2 [|t| - mu]_+^2.
  EXPECT_DOUBLE_EQ(Loss::squared_hinge(0.25).value(0.5), 0.25 * 0.25);
  EXPECT_DOUBLE_EQ(Loss::squared_hinge(0.25).value(0.8), 0.0);
  EXPECT_DOUBLE_EQ(Loss::hinge().value(-1.0), 2.0);
  EXPECT_NEAR(Loss::safe_logistic(0.2).value(-1.0), std::exp(-1.0 + 0.2 - 1.0) - (-1.0 + 0.2), 1e-15);
  EXPECT_DOUBLE_EQ(Loss::safe_logistic(0.2).value(0.9), 0.0);
  EXPECT_NEAR(Loss::logistic().value(0.3), std::log(1.0 + std::exp(-0.3)), 1e-15);
  EXPECT_DOUBLE_EQ(Loss::interval_regression(0.5).value(-2.0), 0.5 * 1.5 * 1.5);
  EXPECT_DOUBLE_EQ(Loss::interval_regression(0.5).value(0.4), 0.0);
  // Far from the flat region the safe logistic loss is asymptotically linear (robust), like the logistic loss.
  EXPECT_NEAR(Loss::safe_logistic(0.0).value(-40.0), 40.0, 1e-9);
}

TEST(Loss, PaperMuAndReferenceCodeThresholdDescribeTheSameLoss) {
  // The reference code's "mu" is the margin threshold 1 - mu_paper.
  const Loss paper = Loss::squared_hinge(0.3), code = Loss::squared_hinge_threshold(0.7);
  EXPECT_DOUBLE_EQ(paper.mu, code.mu);
  EXPECT_DOUBLE_EQ(paper.margin_threshold(), 0.7);
  EXPECT_DOUBLE_EQ(Loss::safe_logistic_threshold(0.5).mu, 0.5);
  EXPECT_DOUBLE_EQ(Loss::hinge_threshold(1.0).mu, 0.0);
}

TEST(Loss, DerivativeMatchesCentralDifferences) {
  for (const Loss& loss : all_losses())
    for (double t : probe_points()) {
      const double h = 1e-6;
      // Skip the kinks, where the one-sided slopes differ (hinge at 1 - mu).
      if (loss.kind == LossKind::kHinge && std::abs(t - loss.margin_threshold()) < 2 * h) continue;
      const double fd = (loss.value(t + h) - loss.value(t - h)) / (2 * h);
      EXPECT_NEAR(loss.derivative(t), fd, 1e-6 * (1 + std::abs(fd))) << loss.name() << " mu=" << loss.mu << " t=" << t;
    }
}

TEST(Loss, DerivativeIsZeroExactlyOnTheFlatRegion) {
  for (const Loss& loss : all_losses()) {
    const Interval flat = loss.flat_region();
    for (double t : probe_points()) {
      if (flat.contains(t)) {
        EXPECT_EQ(loss.value(t), 0.0) << loss.name() << " t=" << t;
        EXPECT_EQ(loss.derivative(t), 0.0) << loss.name() << " t=" << t;
      }
    }
  }
  EXPECT_TRUE(Loss::logistic().flat_region().empty());
  EXPECT_TRUE(Loss::squared().flat_region().empty());
  EXPECT_TRUE(Loss::interval_regression(0.0).flat_region().empty());  // mu = 0: the squared loss
  EXPECT_DOUBLE_EQ(Loss::interval_regression(0.7).flat_region().hi, 0.7);
}

TEST(Loss, FenchelYoungHoldsWithEqualityAtTheDerivative) {
  // phi(t) + phi*(y) >= t y, with equality iff y = phi'(t) (the dual-sparsity lemma's key step).
  for (const Loss& loss : all_losses())
    for (double t : probe_points()) {
      const double y = loss.derivative(t);
      EXPECT_NEAR(loss.value(t) + loss.conjugate(y), t * y, 1e-12 * (1 + std::abs(t * y)))
          << loss.name() << " mu=" << loss.mu << " t=" << t;
      for (double y2 : {y - 0.3, y + 0.2, -0.5, -0.05})
        if (std::isfinite(loss.conjugate(y2))) {
          EXPECT_GE(loss.value(t) + loss.conjugate(y2), t * y2 - 1e-12) << loss.name() << " t=" << t << " y=" << y2;
        }
    }
}

TEST(Loss, ConjugateIsTheSupremumOverAFineGrid) {
  for (const Loss& loss : all_losses())
    for (double y : {-0.95, -0.6, -0.2, -0.01, 0.0, 0.3}) {
      const double c = loss.conjugate(y);
      double best = -std::numeric_limits<double>::infinity();
      for (double t = -60.0; t <= 60.0; t += 0.002) best = std::max(best, t * y - loss.value(t));
      if (std::isinf(c)) {
        EXPECT_GT(best, 5.0) << loss.name() << " y=" << y << ": outside the domain the supremum grows";
      } else {
        EXPECT_NEAR(c, best, 1e-5) << loss.name() << " mu=" << loss.mu << " y=" << y;
      }
    }
}

TEST(Loss, ProxSatisfiesItsOptimalityCondition) {
  // u = prox_{q phi}(v) minimises phi(u) + (u - v)^2 / (2 q): no grid point does better.
  for (const Loss& loss : all_losses())
    for (double v : {-3.0, -0.7, 0.0, 0.45, 0.99, 1.3, 3.5})
      for (double q : {1e-3, 0.2, 1.0, 25.0}) {
        const double u = loss.prox(v, q);
        const double at_u = loss.value(u) + (u - v) * (u - v) / (2 * q);
        for (double d = -1.0; d <= 1.0; d += 0.01) {
          const double w = u + d * d * d;  // dense near u
          EXPECT_LE(at_u, loss.value(w) + (w - v) * (w - v) / (2 * q) + 1e-12)
              << loss.name() << " mu=" << loss.mu << " v=" << v << " q=" << q;
        }
        // The dual step (v - u)/q is a derivative value, so it stays in the conjugate's domain.
        const Interval dom = loss.conjugate_domain();
        EXPECT_GE((v - u) / q, dom.lo - 1e-12);
        EXPECT_LE((v - u) / q, dom.hi + 1e-12);
      }
}

TEST(Loss, NamesRoundTripAndBadMuIsRefused) {
  for (const Loss& loss : all_losses()) {
    const Loss back = Loss::from_name(loss.name(), loss.mu);
    EXPECT_EQ(back.kind, loss.kind);
  }
  expect_error([] { Loss::from_name("huber"); }, ErrorCode::kInvalidArgument, "unknown loss 'huber'");
  expect_error([] { Loss::interval_regression(-1.0).validate(); }, ErrorCode::kInvalidArgument, "must be >= 0: got -1");
  expect_error([] { Loss::from_name("logistic", 0.5); }, ErrorCode::kInvalidArgument, "has no mu parameter");
  expect_error([] { Loss::squared_hinge(std::nan("")).validate(); }, ErrorCode::kInvalidArgument, "mu must be finite");
}

}  // namespace
}  // namespace inductive
