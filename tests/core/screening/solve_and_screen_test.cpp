// solve_and_screen: what the CLI's `screen` and the browser's screenDataset() report. A sample is screened when
// dynamic or static screening removed it, the kept list is the rest, and screened samples are safe to delete.
#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

TEST(SolveAndScreen, ScreenedIsDynamicUnionStaticAndSafe) {
  for (const auto& combo : testing::safe_combos()) {
    for (bool dynamic : {true, false}) {
      auto rp = testing::random_problem(7, 120, 6, combo.loss, combo.penalty, combo.lambda);
      SolverOptions options;
      options.tol = 1e-9;
      options.max_epochs = 100000;
      options.dynamic_screening = dynamic;
      const SolveAndScreenResult r = solve_and_screen(rp.problem, options);
      const std::string what = testing::describe(rp.problem) + (dynamic ? " dynamic" : " static only");
      ASSERT_EQ(r.screened.size(), 120u) << what;
      int n_dynamic = 0, n_screened = 0;
      size_t next_kept = 0;
      for (int i = 0; i < 120; ++i) {
        const bool dyn = r.fit.removed_at[i] >= 0;
        n_dynamic += dyn;
        EXPECT_EQ(r.screened[i], (dyn || r.at_solution.screened[i]) ? 1 : 0) << what << " i=" << i;
        if (r.screened[i]) {
          ++n_screened;
        } else {
          ASSERT_LT(next_kept, r.kept.size()) << what;
          EXPECT_EQ(r.kept[next_kept++], i) << what;
        }
      }
      EXPECT_EQ(next_kept, r.kept.size()) << what;
      EXPECT_EQ(r.n_dynamic, n_dynamic) << what;
      if (!dynamic) {
        EXPECT_EQ(n_dynamic, 0) << what;
      }
      EXPECT_EQ(r.n_screened, n_screened) << what;
      EXPECT_DOUBLE_EQ(r.fraction_screened(), n_screened / 120.0) << what;
      EXPECT_TRUE(r.fit.converged) << what;
      const VerifyReport v = verify_screening(rp.problem, r.screened);
      EXPECT_TRUE(v.safe) << what << ": " << v.violations.size() << " violations";
    }
  }
}

}  // namespace
}  // namespace inductive
