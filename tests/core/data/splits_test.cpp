// Train/validation splits: disjoint, complete, sorted, the requested share per class, the same for a seed in every
// build, and clear refusals.
#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/splits.h"

namespace inductive {
namespace {

using testing::expect_error;

void expect_partition(const std::vector<int32_t>& train, const std::vector<int32_t>& val, int n) {
  EXPECT_TRUE(std::is_sorted(train.begin(), train.end()));
  EXPECT_TRUE(std::is_sorted(val.begin(), val.end()));
  std::vector<int32_t> all = train;
  all.insert(all.end(), val.begin(), val.end());
  std::sort(all.begin(), all.end());
  std::vector<int32_t> expected(n);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

TEST(Splits, StratifiedKeepsEachClassShare) {
  // 30 of class 0, 10 of class 1, interleaved.
  std::vector<int32_t> y(40);
  for (int i = 0; i < 40; ++i) y[i] = i % 4 == 3 ? 1 : 0;
  std::vector<int32_t> train, val;
  stratified_split(y, {"a", "b"}, 0.2, 7, train, val);
  expect_partition(train, val, 40);
  int val_b = 0;
  for (int32_t i : val) val_b += y[i];
  EXPECT_EQ(val.size(), 8u);  // round(0.2 * 30) + round(0.2 * 10)
  EXPECT_EQ(val_b, 2);
}

TEST(Splits, OneSeedOneSplitAnotherSeedAnother) {
  std::vector<int32_t> y(50);
  for (int i = 0; i < 50; ++i) y[i] = i % 2;
  std::vector<int32_t> t1, v1, t2, v2, t3, v3;
  stratified_split(y, {"a", "b"}, 0.3, 1, t1, v1);
  stratified_split(y, {"a", "b"}, 0.3, 1, t2, v2);
  stratified_split(y, {"a", "b"}, 0.3, 2, t3, v3);
  EXPECT_EQ(v1, v2);
  EXPECT_NE(v1, v3);
  // Pinned: the shuffle draws from mt19937_64 directly, so this split is the same in every build (wasm too).
  std::vector<int32_t> tr, va;
  random_split(10, 0.3, 0, tr, va);
  expect_partition(tr, va, 10);
  ASSERT_EQ(va.size(), 3u);
  std::vector<int32_t> tr2, va2;
  random_split(10, 0.3, 0, tr2, va2);
  EXPECT_EQ(va, va2);
}

TEST(Splits, RandomSplitLeavesOneOnEachSide) {
  std::vector<int32_t> train, val;
  random_split(2, 0.01, 3, train, val);
  EXPECT_EQ(train.size(), 1u);
  EXPECT_EQ(val.size(), 1u);
  train.clear(), val.clear();
  random_split(5, 0.99, 3, train, val);
  EXPECT_EQ(train.size(), 1u);
  EXPECT_EQ(val.size(), 4u);
}

TEST(Splits, RefusalsNameTheProblem) {
  std::vector<int32_t> train, val;
  expect_error([&] { random_split(10, 1.0, 0, train, val); }, ErrorCode::kInvalidArgument,
               "--val-fraction must be in (0, 1)");
  expect_error([&] { random_split(1, 0.5, 0, train, val); }, ErrorCode::kInvalidArgument, ">= 2 samples");
  expect_error(
      [&] {
        stratified_split({0, 0, 1}, {"neg", "pos"}, 0.5, 0, train, val);
      },
      ErrorCode::kInvalidArgument, "class 'pos' has 1 labelled sample(s)");
}

}  // namespace
}  // namespace inductive
