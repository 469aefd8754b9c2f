// inductive/random.h: the seeded draws the unsupervised fits use, pinned to exact values so that every build
// (libstdc++ natively, libc++ under Emscripten; this suite runs in both) draws the same numbers, and checked for
// the distributions they claim.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/random.h"

namespace inductive {
namespace {

TEST(Random, DrawsArePinnedSoEveryBuildAgrees) {
  // Values of the native build (libstdc++); the wasm build of this suite must draw exactly the same.
  std::mt19937_64 rng(42);
  EXPECT_EQ(uniform_below(rng, 1000003), 934706u);
  EXPECT_EQ(uniform_below(rng, 10), 4u);
  EXPECT_EQ(uniform_unit(rng), 0.7521452007480266);
  EXPECT_NEAR(standard_normal(rng), 0.44435599535113213, 1e-15);  // libm's log/cos may differ in the last ulp
  std::vector<int> v(8);
  std::iota(v.begin(), v.end(), 0);
  shuffle_range(v.begin(), v.end(), rng);
  EXPECT_EQ(v, (std::vector<int>{2, 6, 3, 1, 5, 0, 7, 4}));
}

TEST(Random, UniformBelowIsUniformAndInRange) {
  std::mt19937_64 rng(1);
  std::vector<int> count(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const uint64_t x = uniform_below(rng, 7);
    ASSERT_LT(x, 7u);
    ++count[x];
  }
  for (int c : count) EXPECT_NEAR(c, 10000, 400);  // 4 standard deviations
  EXPECT_EQ(uniform_below(rng, 1), 0u);
}

TEST(Random, StandardNormalHasMeanZeroAndVarianceOne) {
  std::mt19937_64 rng(3);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = standard_normal(rng);
    ASSERT_TRUE(std::isfinite(x));
    s += x;
    s2 += x * x;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.01);
}

TEST(Random, ShuffleIsAPermutationAndMovesThings) {
  std::mt19937_64 rng(5);
  std::vector<int> v(100);
  std::iota(v.begin(), v.end(), 0);
  shuffle_range(v.begin(), v.end(), rng);
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  int fixed = 0;
  for (int i = 0; i < 100; ++i) fixed += v[i] == i;
  EXPECT_LT(fixed, 10);
}

}  // namespace
}  // namespace inductive
