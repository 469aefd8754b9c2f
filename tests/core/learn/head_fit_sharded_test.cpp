// The head fit sharded over ranks (HeadFitOptions::communicator, as `otke fit` runs it under mpirun), with the ranks
// played by threads of this process: each holds a share of the rows, and the fit on all rows comes out on every
// rank; a bad row on one rank stops every rank with an error instead of leaving the others waiting in a sum. The
// real MPI processes are exercised by tests/native/test_mpi_otke.py.
#ifndef __EMSCRIPTEN__  // the wasm test build has no threads

#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "../thread_ranks.h"
#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/head_fit.h"

namespace inductive {
namespace {

using testing::ThreadCommunicator;
using testing::ThreadRanks;

// Three noisy classes, far from the origin and at a small scale (as OTK embeddings are).
struct Rows {
  MatF x;
  std::vector<int32_t> y;
  explicit Rows(int m) : x(m, 8), y(m) {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0, 1);
    for (int i = 0; i < m; ++i) {
      y[i] = (i * 7) % 3;
      for (int c = 0; c < 8; ++c) x(i, c) = 2.0f + 0.01f * (nd(rng) + (c == y[i] ? 1.5f : 0.0f));
    }
  }
};

struct RankResult {
  HeadFit fit;
  std::string error;
};

// fit_head on `ranks` threads, rank r holding the rows shard_of(m, r, ranks) of `rows`.
std::vector<RankResult> fit_on_ranks(const Rows& rows, int ranks, HeadFitOptions o) {
  ThreadRanks group(ranks);
  std::vector<RankResult> out(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(group, r);
      const Shard s = shard_of(rows.x.rows(), r, ranks);
      HeadFitOptions mine = o;
      mine.communicator = &comm;
      mine.row_offset = s.begin;
      const MatF x = rows.x.middleRows(s.begin, s.end - s.begin);
      const std::vector<int32_t> y(rows.y.begin() + s.begin, rows.y.begin() + s.end);
      try {
        out[static_cast<size_t>(r)].fit = fit_head(x, y, 3, mine);
      } catch (const Error& e) {
        out[static_cast<size_t>(r)].error = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return out;
}

HeadFitOptions holdout_options(int m) {
  HeadFitOptions o;
  o.grid = head_lambda_grid(-2, -10);
  for (int i = 0; i < m; i += 5) o.holdout.push_back(i);  // every fifth row: spread over every rank's share
  o.refit = true;
  return o;
}

TEST(ShardedHeadFit, EveryRankGetsTheFitOnAllRows) {
  const Rows rows(150);
  const HeadFitOptions o = holdout_options(150);
  const HeadFit one = fit_head(rows.x, rows.y, 3, o);
  for (int ranks : {2, 3}) {
    const std::vector<RankResult> r = fit_on_ranks(rows, ranks, o);
    for (int k = 0; k < ranks; ++k) {
      SCOPED_TRACE(::testing::Message() << ranks << " ranks, rank " << k);
      ASSERT_EQ(r[k].error, "");
      const HeadFit& f = r[k].fit;
      EXPECT_EQ(f.lambda, one.lambda);
      EXPECT_EQ(f.grid_accuracy, one.grid_accuracy);  // counts of right answers over every rank's holdout rows
      EXPECT_EQ(f.holdout_accuracy, one.holdout_accuracy);
      EXPECT_EQ(f.class_counts, one.class_counts);
      EXPECT_NEAR(f.train_accuracy, one.train_accuracy, 1.0 / 120);
      EXPECT_NEAR(f.standardizer.s, one.standardizer.s, 1e-5 * one.standardizer.s);
      EXPECT_LT((f.standardizer.mu - one.standardizer.mu).cwiseAbs().maxCoeff(), 1e-6f);
      // Sums in another order: L-BFGS stops at another point within its tolerance.
      const float scale = one.head.weight.cwiseAbs().maxCoeff();
      EXPECT_LT((f.head.weight - one.head.weight).cwiseAbs().maxCoeff(), 2e-3f * scale);
      // Every rank holds the same head, bit for bit: they took the same steps.
      EXPECT_EQ(f.head.weight, r[0].fit.head.weight);
      EXPECT_EQ(f.head.bias, r[0].fit.head.bias);
    }
  }
}

TEST(ShardedHeadFit, ABadRowOnOneRankStopsEveryRank) {
  const Rows clean(90);
  Rows nan = clean;
  nan.x(80, 3) = std::nanf("");  // rank 2 of 3 holds rows 60..89
  for (const RankResult& r : fit_on_ranks(nan, 3, holdout_options(90)))
    EXPECT_NE(r.error.find("fitHead: embeddings contain NaN or Inf"), std::string::npos) << r.error;

  Rows label = clean;
  label.y[40] = 5;  // rank 1 holds rows 30..59: it names the row, the others say where it is
  const std::vector<RankResult> r = fit_on_ranks(label, 3, holdout_options(90));
  EXPECT_NE(r[1].error.find("fitHead: label of sample 40 out of range: got 5, expected 0..2"), std::string::npos)
      << r[1].error;
  for (int k : {0, 2})
    EXPECT_NE(r[k].error.find("fitHead: a label on another rank is out of range 0..2"), std::string::npos)
        << r[k].error;

  // K-fold cross-validation needs every row on one rank: refused on every rank before any sum.
  HeadFitOptions cv;
  for (const RankResult& k : fit_on_ranks(clean, 2, cv))
    EXPECT_NE(k.error.find("chooses lambda on a holdout (or takes it given)"), std::string::npos) << k.error;
}

}  // namespace
}  // namespace inductive

#endif  // __EMSCRIPTEN__
