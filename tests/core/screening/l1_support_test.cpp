// Screening samples under a pure L1 penalty (no strong convexity): the dual ball of a smooth loss certifies a
// support that holds every non-zero of the optimum, and the l1 ball and the ellipsoid method restricted to it
// screen samples -- only samples flat at the optimum, and the refit on the kept ones gives the full optimum.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

// y = A w + noise with `k` non-zero true coefficients (regression), or its sign (classification): a sparse optimum.
testing::RandomProblem sparse_truth(uint32_t seed, int n, int p, int k, Loss loss, double lambda) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  MatF x(n, p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) x(i, j) = static_cast<float>(normal(rng));
  VecD w = VecD::Zero(p);
  for (int j = 0; j < k; ++j) w[j * (p / k)] = normal(rng);
  testing::RandomProblem r;
  r.x = std::make_shared<DenseDesign>(x);
  r.problem.x = r.x.get();
  for (int i = 0; i < n; ++i) {
    const double s = x.row(i).cast<double>().dot(w);
    r.problem.y.push_back(loss.is_classification() ? (s + 0.1 * normal(rng) > 0 ? 1.0 : -1.0) : s + 0.01 * normal(rng));
  }
  r.problem.loss = loss;
  r.problem.penalty = Penalty::l1();
  r.problem.lambda = lambda;
  return r;
}

TEST(L1Support, HoldsEveryNonZeroOfTheOptimumFromRoughSolutions) {
  int checked = 0;
  for (Loss loss : {Loss::interval_regression(0.05), Loss::safe_logistic(0.2), Loss::squared_hinge()}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      auto rp = sparse_truth(seed, 200, 30, 3, loss, loss.is_classification() ? 0.02 : 0.01);
      const SolveResult opt = solve_erm(rp.problem, tight_solver_options());
      for (int epochs : {3, 20, 200}) {
        SolverOptions rough;
        rough.max_epochs = epochs;
        const SolveResult approx = solve_erm(rp.problem, rough);
        const ScreenResult s = screen_samples(rp.problem, approx.x);
        ASSERT_GE(s.support_size, 0) << testing::describe(rp.problem);
        EXPECT_GT(s.dual_radius, 0.0);
        std::vector<uint8_t> in(30, 0);
        for (int j : s.support) in[j] = 1;
        for (int j = 0; j < 30; ++j) {
          if (std::fabs(opt.x[j]) > 1e-9) {
            EXPECT_TRUE(in[j]) << "feature " << j << " of the optimum is outside the certified support, "
                               << testing::describe(rp.problem) << ", " << epochs << " epochs";
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(L1Support, EllipsoidInTheSupportScreensOnlyFlatSamplesAndTheRefitIsTheOptimum) {
  int screened = 0, total = 0;
  for (Loss loss : {Loss::interval_regression(0.05), Loss::safe_logistic(0.2)}) {
    for (uint32_t seed : {4u, 5u}) {
      auto rp = sparse_truth(seed, 300, 40, 4, loss, loss.is_classification() ? 0.02 : 0.005);
      const ErmProblem& prob = rp.problem;
      const SolveResult opt = solve_erm(prob, tight_solver_options());
      const VecD t = margins(prob, opt.x);
      const Interval flat = prob.loss.flat_region();
      for (double tol : {1e-4, 1e-8}) {
        SolverOptions o;
        o.tol = tol;
        o.max_epochs = 100000;
        const SolveResult approx = solve_erm(prob, o);
        ScreenOptions so;
        so.ellipsoid_steps = 4000;
        const ScreenResult s = screen_samples(prob, approx.x, so);
        for (int i = 0; i < prob.n(); ++i) {
          if (!s.screened[i]) continue;
          EXPECT_TRUE(flat.contains(t[i])) << "sample " << i << " margin " << t[i] << " " << testing::describe(prob);
        }
        const VerifyReport v = verify_screening(prob, s.screened);
        EXPECT_TRUE(v.safe) << testing::describe(prob);
        screened += s.n_screened;
        total += prob.n();
        // Without the support, the same ellipsoid steps in all 40 dimensions screen nothing.
        if (tol == 1e-8 && seed == 4u) {
          ScreenOptions full = so;
          full.l1_support = false;
          full.ellipsoid_steps = 300;
          EXPECT_EQ(screen_samples(prob, approx.x, full).n_screened, 0) << testing::describe(prob);
        }
      }
    }
  }
  // It must screen a real share, or it proves nothing.
  EXPECT_GT(screened, total / 4) << screened << " of " << total;
}

TEST(L1Support, StaysOutOfTheWayWhereItDoesNotApply) {
  // Strongly convex (elastic net): the gap ball is the region; the hinge is not smooth: no dual ball.
  auto en = sparse_truth(6, 100, 10, 2, Loss::squared_hinge(), 0.05);
  en.problem.penalty = Penalty::elastic_net(0.5);
  EXPECT_EQ(screen_samples(en.problem, solve_erm(en.problem, {}).x).support_size, -1);
  auto hinge = sparse_truth(7, 100, 10, 2, Loss::hinge(), 0.05);  // (no solver takes hinge + L1: screen from 0)
  EXPECT_EQ(screen_samples(hinge.problem, VecD::Zero(10)).support_size, -1);
}

}  // namespace
}  // namespace inductive
