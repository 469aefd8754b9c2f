// Nystrom embedding: kernel approximation on the anchors' span, exact gradients (finite differences).
#include <cmath>

#include <Eigen/Eigenvalues>
#include <gtest/gtest.h>

#include "inductive/nystrom.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::random_mat;

TEST(Nystrom, ReproducesTheKernelBetweenAnchors) {
  // With as many anchors as points and tiny reg, <psi(w_i), psi(w_j)> = kappa(w_i, w_j).
  NystromOptions o;
  o.sigma = 0.8f;
  o.reg = 1e-6f;
  const Nystrom ny(random_mat(6, 10, 1), o);
  const MatF psi = ny.forward(ny.anchors());
  const MatF gram = psi * psi.transpose();
  MatF kww = ny.anchors() * ny.anchors().transpose();
  gaussian_on_sphere(kww, o.sigma);
  EXPECT_LT((gram - kww).cwiseAbs().maxCoeff(), 2e-3);
}

TEST(Nystrom, FactorIsTheRegularisedInverseSquareRoot) {
  NystromOptions o;
  const Nystrom ny(random_mat(5, 4, 2), o);
  MatF kww = ny.anchors() * ny.anchors().transpose();
  gaussian_on_sphere(kww, o.sigma);
  Eigen::SelfAdjointEigenSolver<MatD> eig(kww.cast<double>());
  const Eigen::VectorXd f =
      eig.eigenvalues().unaryExpr([&](double l) { return 1.0 / (std::sqrt(std::max(l, 0.0)) + o.reg); });
  const MatD expect = eig.eigenvectors() * f.asDiagonal() * eig.eigenvectors().transpose();
  EXPECT_LT((ny.factor().cast<double>() - expect).cwiseAbs().maxCoeff(), 1e-4);
}

TEST(Nystrom, InputsAreNormalisedUnlessNormIsKept) {
  NystromOptions o;
  const Nystrom ny(random_mat(4, 3, 3), o);
  const MatF x = random_mat(2, 3, 4);
  EXPECT_LT((ny.forward(x) - ny.forward(3.0f * x)).cwiseAbs().maxCoeff(), 1e-5);
  o.keep_norm = true;
  const Nystrom kept(random_mat(4, 3, 3), o);
  EXPECT_LT((kept.forward(3.0f * x) - 3.0f * kept.forward(x)).cwiseAbs().maxCoeff(), 1e-4);
}

TEST(Nystrom, RejectsBadAnchorsAndShapes) {
  testing::expect_error([] { Nystrom(MatF::Zero(2, 3), NystromOptions{}); }, ErrorCode::kInvalidArgument,
                        "anchor 0 is the zero vector");
  NystromOptions bad;
  bad.sigma = 0;
  testing::expect_error([&] { Nystrom(random_mat(2, 3, 5), bad); }, ErrorCode::kInvalidArgument, "sigma");
  const Nystrom ny(random_mat(2, 3, 5), NystromOptions{});
  testing::expect_error([&] { ny.forward(random_mat(2, 4, 6)); }, ErrorCode::kShapeMismatch,
                        "features have dimension 4, expected 3");
}

// L = <G, psi(x; W)> for a fixed random G, in double via float evaluation with a large-enough step.
class NystromGradient : public ::testing::TestWithParam<bool> {};

TEST_P(NystromGradient, MatchesFiniteDifferencesForInputsAndAnchors) {
  NystromOptions o;
  o.sigma = 0.7f;
  o.keep_norm = GetParam();
  const MatF w0 = random_mat(5, 6, 7);
  const MatF x = random_mat(4, 6, 8);
  const MatF g = random_mat(4, 5, 9);
  Nystrom ny(w0, o);
  auto loss = [&](const Nystrom& model, const MatF& in) {
    return static_cast<double>((model.forward(in).array() * g.array()).sum());
  };
  Nystrom::Cache cache;
  ny.forward(x, cache);
  MatF gx, gw = MatF::Zero(5, 6), gf = MatF::Zero(5, 5);
  ny.backward(cache, g, &gx, &gw, &gf);
  const MatF ga = ny.anchor_gradient(gw, gf);
  const float h = 2e-3f;
  for (int i = 0; i < x.rows(); ++i)
    for (int c = 0; c < x.cols(); ++c) {
      MatF xp = x, xm = x;
      xp(i, c) += h;
      xm(i, c) -= h;
      const double fd = (loss(ny, xp) - loss(ny, xm)) / (2 * h);
      EXPECT_NEAR(gx(i, c), fd, 2e-3 + 2e-3 * std::fabs(fd)) << "dx(" << i << ", " << c << ")";
    }
  // Anchors are normalised inside: finite differences on the raw (unit) anchors see the tangent gradient.
  const MatF wu = ny.anchors();
  for (int r = 0; r < wu.rows(); ++r)
    for (int c = 0; c < wu.cols(); ++c) {
      MatF wp = wu, wm = wu;
      wp(r, c) += h;
      wm(r, c) -= h;
      const double fd = (loss(Nystrom(wp, o), x) - loss(Nystrom(wm, o), x)) / (2 * h);
      EXPECT_NEAR(ga(r, c), fd, 3e-3 + 3e-3 * std::fabs(fd)) << "dW(" << r << ", " << c << ")";
    }
}

INSTANTIATE_TEST_SUITE_P(KeepNorm, NystromGradient, ::testing::Values(false, true));

}  // namespace
}  // namespace inductive
