// Penalties: the thesis' conventions (squared L2 norm without 1/2), conjugates, proximal operators, strong convexity.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/screening/penalty.h"
#include "../test_util.h"

namespace inductive {
namespace {

std::vector<Penalty> all_penalties() { return {Penalty::l2(), Penalty::l1(), Penalty::elastic_net(0.3)}; }

TEST(Penalty, ValuesFollowTheThesisConventions) {
  VecD x(3);
  x << 1.0, -2.0, 0.5;
  EXPECT_DOUBLE_EQ(Penalty::l2().value(x), 5.25);  // ||x||^2, no 1/2
  EXPECT_DOUBLE_EQ(Penalty::l1().value(x), 3.5);
  EXPECT_DOUBLE_EQ(Penalty::elastic_net(0.3).value(x), 0.3 * 3.5 + 0.7 * 5.25);
  EXPECT_DOUBLE_EQ(Penalty::l2().strong_convexity(0.5), 1.0);  // 2 lambda
  EXPECT_DOUBLE_EQ(Penalty::l1().strong_convexity(0.5), 0.0);
  EXPECT_DOUBLE_EQ(Penalty::elastic_net(0.3).strong_convexity(0.5), 0.7);
}

TEST(Penalty, ConjugateIsTheSupremumInOneDimension) {
  const double lambda = 0.7;
  for (const Penalty& pen : all_penalties())
    for (double u : {-1.5, -0.3, 0.0, 0.2, 0.69, 1.1}) {
      VecD uv(1);
      uv << u;
      double best = -1e300;
      VecD xv(1);
      for (double x = -20; x <= 20; x += 5e-4) {
        xv[0] = x;
        best = std::max(best, x * u - lambda * pen.value(xv));
      }
      const double c = pen.conjugate(uv, lambda);
      if (std::isinf(c))
        EXPECT_GT(best, 1.0) << pen.name() << " u=" << u;
      else
        EXPECT_NEAR(c, best, 1e-6) << pen.name() << " u=" << u;
    }
}

TEST(Penalty, ConjugateGradientIsThePrimalPointOfFenchelYoungEquality) {
  const double lambda = 0.4;
  for (const Penalty& pen : {Penalty::l2(), Penalty::elastic_net(0.6)}) {
    VecD u(4);
    u << 1.3, -0.1, 0.0, -2.2;
    const VecD x = pen.conjugate_gradient(u, lambda);
    EXPECT_NEAR(lambda * pen.value(x) + pen.conjugate(u, lambda), x.dot(u), 1e-12) << pen.name();
  }
  inductive::testing::expect_error([] { Penalty::l1().conjugate_gradient(VecD::Ones(2), 1.0); },
                                   ErrorCode::kInvalidArgument, "needs a strongly convex penalty");
}

TEST(Penalty, ProxMinimisesItsObjective) {
  const double lambda = 0.3, step = 0.8;
  for (const Penalty& pen : all_penalties()) {
    VecD v(3);
    v << 1.0, -0.1, 0.35;
    VecD x = v;
    pen.prox(x, step, lambda);
    auto obj = [&](const VecD& z) { return lambda * pen.value(z) + (z - v).squaredNorm() / (2 * step); };
    for (int k = 0; k < 3; ++k)
      for (double d : {-1e-3, 1e-3, -0.1, 0.1}) {
        VecD z = x;
        z[k] += d;
        EXPECT_LE(obj(x), obj(z) + 1e-14) << pen.name();
      }
  }
}

TEST(Penalty, ElasticNetRatioMustBeInsideTheOpenInterval) {
  inductive::testing::expect_error([] { Penalty::elastic_net(1.0).validate(); }, ErrorCode::kInvalidArgument,
                                   "l1_ratio must be in (0, 1): got 1");
  inductive::testing::expect_error([] { Penalty::from_name("l3"); }, ErrorCode::kInvalidArgument,
                                   "unknown penalty 'l3'");
}

}  // namespace
}  // namespace inductive
