// Safety, the one property screening must never lose: over random problems (losses with flat regions x L2 / L1 /
// elastic net x dense / sparse x with / without intercept), every sample removed by static screening (gap ball,
// l1 ball, ellipsoid, cuts) or by dynamic screening inside the solver is in the flat region at the optimum, and
// refitting on the kept samples gives the full optimum.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

struct Reference {
  VecD x;
  double radius;  // certified ||x - x*|| bound (inf without strong convexity)
  double primal;
};

Reference reference_optimum(const ErmProblem& problem) {
  const SolveResult r = solve_erm(problem, tight_solver_options());
  EXPECT_TRUE(r.converged) << testing::describe(problem);
  const double kappa = problem.penalty.strong_convexity(problem.lambda);
  return {r.x, kappa > 0 ? std::sqrt(2 * r.gap.certified() / kappa) : 0.0, r.gap.primal};
}

// Every removed sample's optimal margin is inside the open flat region (up to the reference's own uncertainty).
void expect_flat_at_optimum(const ErmProblem& problem, const Reference& ref, const std::vector<uint8_t>& removed,
                            const std::string& how) {
  const Interval flat = problem.loss.flat_region();
  const VecD t = margins(problem, ref.x);
  for (int i = 0; i < problem.n(); ++i) {
    if (!removed[i]) continue;
    const double slack = ref.radius * std::sqrt(problem.x->row_sq_norm(i) + (problem.intercept ? 1.0 : 0.0)) + 1e-7;
    EXPECT_GT(t[i], flat.lo - slack) << how << ": sample " << i << " " << testing::describe(problem);
    EXPECT_LT(t[i], flat.hi + slack) << how << ": sample " << i << " " << testing::describe(problem);
  }
}

TEST(ScreeningSafety, StaticAndDynamicScreeningOnlyRemoveSamplesFlatAtTheOptimum) {
  int total_static = 0, total_dynamic = 0, total_samples = 0;
  for (const auto& combo : testing::safe_combos())
    for (bool sparse : {false, true})
      for (bool intercept : {false, true})
        for (uint32_t seed : {1u, 2u}) {
          auto rp = testing::random_problem(seed * 100 + static_cast<uint32_t>(combo.loss.kind), 80, 5, combo.loss,
                                            combo.penalty, combo.lambda, sparse, intercept);
          const ErmProblem& prob = rp.problem;
          const Reference ref = reference_optimum(prob);

          // Static: from a rough approximation (a few epochs), with cuts and ellipsoid steps.
          SolverOptions rough;
          rough.max_epochs = 5;
          const SolveResult approx = solve_erm(prob, rough);
          ScreenOptions so;
          so.ellipsoid_steps = 15;
          const bool dual_solver = SolverOptions::resolve(SolverKind::kAuto, prob) == SolverKind::kDualCoordinateAscent;
          const ScreenResult s = screen_samples(prob, approx.x, so, dual_solver ? &approx.nu : nullptr);
          expect_flat_at_optimum(prob, ref, s.screened, "static");
          total_static += s.n_screened;
          total_samples += prob.n();

          // The same from the optimum itself: the regions shrink to (almost) a point.
          const ScreenResult at_opt = screen_samples(prob, ref.x, so);
          expect_flat_at_optimum(prob, ref, at_opt.screened, "static at the optimum");

          // Dynamic screening inside the solver.
          SolverOptions dyn;
          dyn.tol = 1e-10;
          dyn.max_epochs = 100000;
          dyn.dynamic_screening = true;
          const SolveResult d = solve_erm(prob, dyn);
          std::vector<uint8_t> removed(prob.n(), 0);
          for (int i = 0; i < prob.n(); ++i) removed[i] = d.removed_at[i] >= 0;
          expect_flat_at_optimum(prob, ref, removed, "dynamic");
          EXPECT_NEAR(primal_objective(prob, d.x), ref.primal, 1e-8 * (1 + ref.primal)) << testing::describe(prob);
          total_dynamic += d.n_removed();

          // Refitting on what static screening kept gives the full optimum.
          const VerifyReport v = verify_screening(prob, s.screened);
          EXPECT_TRUE(v.safe) << testing::describe(prob) << " distance " << v.distance << " bound " << v.distance_bound
                              << " violations " << v.violations.size();
          EXPECT_NEAR(v.primal_kept, v.primal_full, 1e-8 * (1 + v.primal_full)) << testing::describe(prob);
        }
  // Not vacuous: a good share of the samples is screened over the sweep.
  EXPECT_GT(total_static, total_samples / 10);
  EXPECT_GT(total_dynamic, total_samples / 5);
}

TEST(ScreeningSafety, VerificationCatchesAnUnsafeScreening) {
  // Mark the hardest samples (largest loss at the optimum) as screened: the refit must differ.
  auto rp = testing::random_problem(3, 60, 4, Loss::squared_hinge(), Penalty::l2(), 0.05);
  const SolveResult full = solve_erm(rp.problem, tight_solver_options());
  const VecD t = margins(rp.problem, full.x);
  std::vector<uint8_t> wrong(60, 0);
  for (int i = 0; i < 60; ++i) wrong[i] = t[i] < 0.5;
  const VerifyReport v = verify_screening(rp.problem, wrong);
  EXPECT_FALSE(v.safe);
  EXPECT_FALSE(v.violations.empty());
  EXPECT_LT(v.worst_inside, 0);
}

TEST(ScreeningSafety, GapBallIsNeverGuessedOnlyCertified) {
  // L1 problems have no gap ball; the only region is the certified l1 ball around 0 (radius min(P(x0), P(0)) / a).
  auto rp = testing::random_problem(4, 50, 3, Loss::interval_regression(1.0), Penalty::l1(), 0.2);
  const ScreenResult s = screen_samples(rp.problem, VecD::Zero(3));
  EXPECT_LT(s.gap_radius, 0);
  EXPECT_NEAR(s.l1_radius, primal_objective(rp.problem, VecD::Zero(3)) / 0.2, 1e-9);
  const Reference ref = reference_optimum(rp.problem);
  EXPECT_LE(ref.x.lpNorm<1>(), s.l1_radius);
}

// Every ellipsoid iterate holds x*, so the bounds of all of them combine: more steps never screen fewer samples,
// and what they screen is flat at the optimum.
TEST(ScreeningSafety, MoreEllipsoidStepsNeverScreenFewerSamples) {
  int gained = 0;
  for (const auto& combo : testing::safe_combos())
    for (uint32_t seed : {3u, 4u}) {
      auto rp = testing::random_problem(seed * 100 + static_cast<uint32_t>(combo.loss.kind), 120, 6, combo.loss,
                                        combo.penalty, combo.lambda, false, false);
      const ErmProblem& prob = rp.problem;
      const Reference ref = reference_optimum(prob);
      SolverOptions rough;
      rough.max_epochs = 4;
      const SolveResult approx = solve_erm(prob, rough);
      int previous = -1, balls = 0;
      for (int steps : {0, 1, 2, 5, 10, 30}) {
        ScreenOptions so;
        so.ellipsoid_steps = steps;
        const ScreenResult r = screen_samples(prob, approx.x, so);
        expect_flat_at_optimum(prob, ref, r.screened, "ellipsoid " + std::to_string(steps));
        EXPECT_GE(r.n_screened, previous) << steps << " steps";
        previous = r.n_screened;
        if (steps == 0) balls = r.n_screened;
      }
      gained += previous - balls;
    }
  EXPECT_GT(gained, 0);  // the steps do screen more somewhere, or this proves nothing
}

TEST(ScreeningSafety, IntervalRegressionToyIsScreenedFromACertifiedBallByTheEllipsoidMethod) {
  // The thesis' interval-regression toy (n = 20, p = 2, signal in one feature, L1): the reference screened
  // nothing without an oracle radius. Started from the certified l1 ball, the ellipsoid method reaches the ideal.
  std::mt19937 rng(0);
  std::uniform_real_distribution<double> unif(-1, 1);
  std::normal_distribution<double> noise(0, 0.01);
  MatF a(20, 2);
  std::vector<double> b(20);
  for (int i = 0; i < 20; ++i) {
    a(i, 0) = static_cast<float>(unif(rng));
    a(i, 1) = static_cast<float>(unif(rng));
    b[i] = 2.0 * a(i, 0) + noise(rng);
  }
  DenseDesign x(a);
  ErmProblem prob{&x, b, Loss::interval_regression(0.3), Penalty::l1(), 0.05};
  const Reference ref = reference_optimum(prob);
  const VecD t = margins(prob, ref.x);
  int ideal = 0;
  for (int i = 0; i < 20; ++i) ideal += std::abs(t[i]) < 0.3;
  for (int steps : {0, 200, 1000}) {  // 1000 steps refactor the ellipsoid every 4 steps (rank 2p)
    ScreenOptions so;
    so.ellipsoid_steps = steps;
    const ScreenResult s = screen_samples(prob, VecD::Zero(2), so);
    expect_flat_at_optimum(prob, ref, s.screened, "ellipsoid " + std::to_string(steps));
    if (steps == 0)
      EXPECT_EQ(s.n_screened, 0);  // the l1 ball alone is too large
    else
      EXPECT_EQ(s.n_screened, ideal) << steps << " steps";
    ASSERT_EQ(s.ellipsoid.has_value(), steps > 0);
    EXPECT_TRUE(verify_screening(prob, s.screened).safe);
  }
  EXPECT_EQ(ideal, 12);
}

}  // namespace
}  // namespace inductive
