// Kernel screening through the empirical kernel map: a linear kernel reproduces the linear problem, and screening
// with a Gaussian kernel is safe.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

TEST(Kernel, LinearKernelGivesTheLinearModelsPredictions) {
  auto rp = testing::random_problem(31, 40, 3, Loss::squared_hinge(), Penalty::l2(), 0.05);
  const MatF& x = static_cast<const DenseDesign&>(*rp.x).values();
  const MatD gram = x.cast<double>() * x.cast<double>().transpose();  // rank 3
  KernelProblem kp(gram, rp.problem.y, rp.problem.loss, rp.problem.lambda);
  EXPECT_EQ(kp.rank(), 3);
  const SolveResult lin = solve_erm(rp.problem, tight_solver_options());
  const SolveResult ker = solve_erm(kp.problem(), tight_solver_options());
  EXPECT_NEAR(ker.gap.primal, lin.gap.primal, 1e-9);  // alpha^T K alpha = ||w||^2
  const VecD f_lin = decision_function(*rp.x, lin.x, false, 1.0);
  const VecD f_ker = kp.decision_function(gram, ker.x);
  EXPECT_LT((f_lin - f_ker).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(Kernel, GaussianKernelScreeningIsSafe) {
  for (bool intercept : {false, true}) {
    auto rp = testing::random_problem(32, 70, 2, Loss::squared_hinge(), Penalty::l2(), 0.001);
    const MatD gram = gaussian_gram(*rp.x, 0.5);
    KernelProblem kp(gram, rp.problem.y, Loss::squared_hinge(), 0.001, intercept);
    SolverOptions rough;
    rough.max_epochs = 200;
    const SolveResult approx = solve_erm(kp.problem(), rough);
    const ScreenResult s = screen_samples(kp.problem(), approx.x, {}, &approx.nu);
    const VerifyReport v = verify_screening(kp.problem(), s.screened);
    EXPECT_TRUE(v.safe);
    EXPECT_GT(s.n_screened, 0);
    // The model in alpha form: h(a_i) = (K alpha)_i + b gives the same margins as the map.
    const VecD t_map = margins(kp.problem(), v.full.x);
    const VecD f = kp.decision_function(gram, v.full.x);
    for (int i = 0; i < 70; ++i) EXPECT_NEAR(t_map[i], rp.problem.y[i] * f[i], 1e-6);
  }
}

TEST(Kernel, RefusesMatricesThatAreNotKernels) {
  MatD k = MatD::Identity(3, 3);
  k(0, 1) = 0.5;
  testing::expect_error(
      [&] {
        KernelProblem(k, {1, -1, 1}, Loss::hinge(), 1.0);
      },
      ErrorCode::kInvalidArgument, "gram is not symmetric");
  MatD neg = -MatD::Identity(2, 2);
  neg(0, 0) = 1.0;
  testing::expect_error(
      [&] {
        KernelProblem(neg, {1, -1}, Loss::hinge(), 1.0);
      },
      ErrorCode::kInvalidArgument, "not positive semi-definite");
}

TEST(Kernel, GramEntriesAreTheClosedForms) {
  auto rp = testing::random_problem(33, 5, 3, Loss::squared_hinge(), Penalty::l2(), 0.1, /*sparse=*/true);
  const MatF x = static_cast<const CsrDesign&>(*rp.x).to_dense();
  const MatD lin = kernel_gram({KernelKind::kLinear}, *rp.x);
  const MatD gau = kernel_gram({KernelKind::kGaussian, 0.7}, *rp.x);
  const MatD poly = kernel_gram({KernelKind::kPolynomial, 0.0, 2, 0.5}, *rp.x);  // gamma 0: 1 / 3 features
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      const double dot = x.row(i).cast<double>().dot(x.row(j).cast<double>());
      const double sq = (x.row(i).cast<double>() - x.row(j).cast<double>()).squaredNorm();
      EXPECT_NEAR(lin(i, j), dot, 1e-12);
      EXPECT_NEAR(gau(i, j), std::exp(-0.7 * sq), 1e-12);
      EXPECT_NEAR(poly(i, j), std::pow(dot / 3 + 0.5, 2), 1e-12);
    }
  }
  EXPECT_EQ((KernelSpec{KernelKind::kPolynomial, 0.0, 2, 0.5}.describe(3)),
            "polynomial(gamma=0.333333, degree=2, coef0=0.5)");
}

TEST(Kernel, SolveAndScreenGivesAlphaAndDecisionValuesOfTheKernelModel) {
  auto rp = testing::random_problem(34, 60, 2, Loss::squared_hinge(), Penalty::l2(), 0.002, false, true);
  const KernelSpec spec{KernelKind::kGaussian, 0.5};
  const KernelScreenResult r = kernel_solve_and_screen(rp.problem, spec, tight_solver_options());
  const MatD gram = kernel_gram(spec, *rp.x);
  const VecD f = gram * r.alpha;
  for (int i = 0; i < 60; ++i) {
    EXPECT_NEAR(r.decision[i], f[i] + r.intercept, 1e-6);  // alpha from the dual point, decision from the primal
    if (r.result.screened[i] != 0) {
      EXPECT_EQ(r.alpha[i], 0.0);
    }
  }
  EXPECT_TRUE(verify_screening(r.kernel_problem->problem(), r.result.screened).safe);
  EXPECT_GT(r.result.n_screened, 0);
}

TEST(Kernel, SolveAndScreenRefusesWhatItCannotDo) {
  auto l1 = testing::random_problem(35, 20, 2, Loss::squared_hinge(), Penalty::l1(), 0.1);
  testing::expect_error([&] { kernel_solve_and_screen(l1.problem, {}, {}); }, ErrorCode::kInvalidArgument,
                        "the penalty must be l2");
  auto ok = testing::random_problem(36, 20, 2, Loss::squared_hinge(), Penalty::l2(), 0.1);
  testing::expect_error(
      [&] {
        kernel_solve_and_screen(ok.problem, {KernelKind::kGaussian, -1.0}, {});
      },
      ErrorCode::kInvalidArgument, "gamma must be finite");
  testing::expect_error(
      [&] {
        kernel_solve_and_screen(ok.problem, {KernelKind::kPolynomial, 1.0, 0}, {});
      },
      ErrorCode::kInvalidArgument, "degree must be an integer in 1..20");
}

}  // namespace
}  // namespace inductive
