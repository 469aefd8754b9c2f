// The epoch loop both trainers run (inductive/epoch_loop.h): which epochs run, in which order the examples come, how
// minibatches cut them, when checkpoints are written and by whom, and how disagreeing ranks are caught.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/communicator.h"
#include "inductive/epoch_loop.h"

namespace inductive {
namespace {

using testing::expect_error;

// What the loop did, hook by hook.
struct Trace {
  std::vector<std::string> calls;
  std::vector<std::vector<int>> orders;           // per epoch: the examples in the order the steps saw them
  std::vector<std::vector<int>> batch_sizes;      // per epoch
  std::vector<std::pair<int, bool>> checkpoints;  // (epoch, write)
  std::vector<double> etas;
};

EpochHooks traced(Trace& t) {
  EpochHooks h;
  h.begin_epoch = [&t](int epoch) {
    t.calls.push_back("begin " + std::to_string(epoch));
    t.orders.emplace_back();
    t.batch_sizes.emplace_back();
  };
  h.step = [&t](const std::vector<int>& order, int begin, int end, std::mt19937_64&) {
    t.orders.back().insert(t.orders.back().end(), order.begin() + begin, order.begin() + end);
    t.batch_sizes.back().push_back(end - begin);
  };
  h.end_epoch = [&t](int epoch, EpochClock& clock) {
    t.calls.push_back("end " + std::to_string(epoch));
    EXPECT_GE(clock.seconds(), 0.0);
    t.etas.push_back(clock.eta());
  };
  h.parameter_hash = [] { return uint64_t{42}; };
  h.save_checkpoint = [&t](int epoch, bool write) {
    t.calls.push_back("checkpoint " + std::to_string(epoch));
    t.checkpoints.emplace_back(epoch, write);
  };
  h.report_epoch = [&t](int epoch) { t.calls.push_back("report " + std::to_string(epoch)); };
  return h;
}

EpochLoop loop_of(int first, int last, int n, int batch_size) {
  EpochLoop l;
  l.first = first;
  l.last = last;
  l.n = n;
  l.batch_size = batch_size;
  l.seed = 7;
  l.seed_stride = 1000003;
  l.who = "test train";
  return l;
}

TEST(EpochLoop, RunsEachEpochInOrderWithItsHooks) {
  Trace t;
  EpochLoop l = loop_of(1, 2, 5, 2);
  l.checkpoint = true;
  run_epoch_loop(l, traced(t));
  EXPECT_EQ(t.calls, (std::vector<std::string>{"begin 1", "end 1", "checkpoint 1", "report 1", "begin 2", "end 2",
                                               "checkpoint 2", "report 2"}));
  EXPECT_EQ(t.batch_sizes, (std::vector<std::vector<int>>{{2, 2, 1}, {2, 2, 1}}));  // the last batch is shorter
  EXPECT_EQ(t.etas.back(), 0.0);                                                    // nothing left after the last
}

TEST(EpochLoop, EachEpochVisitsEveryExampleOnceInItsOwnSeededOrder) {
  Trace t;
  run_epoch_loop(loop_of(1, 3, 50, 8), traced(t));
  ASSERT_EQ(t.orders.size(), 3u);
  std::vector<int> all(50);
  std::iota(all.begin(), all.end(), 0);
  for (std::vector<int> o : t.orders) {
    std::sort(o.begin(), o.end());
    EXPECT_EQ(o, all);
  }
  EXPECT_NE(t.orders[0], t.orders[1]);
  EXPECT_NE(t.orders[0], all);
}

TEST(EpochLoop, AResumedRunSeesTheOrdersAnUninterruptedOneWould) {
  Trace straight, resumed;
  run_epoch_loop(loop_of(1, 4, 30, 4), traced(straight));
  run_epoch_loop(loop_of(3, 4, 30, 4), traced(resumed));
  ASSERT_EQ(resumed.orders.size(), 2u);
  EXPECT_EQ(resumed.orders[0], straight.orders[2]);
  EXPECT_EQ(resumed.orders[1], straight.orders[3]);
  EXPECT_EQ(resumed.calls.front(), "begin 3");
}

TEST(EpochLoop, WithoutShufflingTheOrderIsTheDatasets) {
  Trace t;
  EpochLoop l = loop_of(1, 1, 6, 4);
  l.shuffle = false;
  run_epoch_loop(l, traced(t));
  EXPECT_EQ(t.orders[0], (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(EpochLoop, StopBeforeEndsTheRun) {
  Trace t;
  EpochHooks h = traced(t);
  h.stop_before = [](int epoch) { return epoch == 3; };  // e.g. early stopping after epoch 2
  run_epoch_loop(loop_of(1, 10, 4, 4), h);
  EXPECT_EQ(t.orders.size(), 2u);
  EXPECT_EQ(t.calls.back(), "report 2");
}

TEST(EpochLoop, ChecksPointsEveryKthEpochAndAtTheLast) {
  Trace t;
  EpochLoop l = loop_of(1, 7, 3, 3);
  l.checkpoint = true;
  l.checkpoint_every = 3;
  run_epoch_loop(l, traced(t));
  EXPECT_EQ(t.checkpoints, (std::vector<std::pair<int, bool>>{{3, true}, {6, true}, {7, true}}));
  Trace none;
  run_epoch_loop(loop_of(1, 3, 3, 3), traced(none));  // no checkpoint path
  EXPECT_TRUE(none.checkpoints.empty());
}

TEST(EpochLoop, AReportThatThrowsEndsTheRunAfterTheEpochsCheckpoint) {
  Trace t;
  EpochHooks h = traced(t);
  h.report_epoch = [](int) { throw Error(ErrorCode::kCancelled, "cancelled"); };
  EpochLoop l = loop_of(1, 5, 3, 3);
  l.checkpoint = true;
  expect_error([&] { run_epoch_loop(l, h); }, ErrorCode::kCancelled, "cancelled");
  EXPECT_EQ(t.checkpoints, (std::vector<std::pair<int, bool>>{{1, true}}));
}

// A rank of a two-rank run whose peer holds `peer_hash`.
class TwoRanks final : public Communicator {
 public:
  TwoRanks(int rank, uint64_t peer_hash) : rank_(rank), peer_(peer_hash) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  std::string name() const override { return "two ranks"; }
  void allreduce_sum(double*, int64_t) override {}
  std::vector<uint64_t> allgather(uint64_t mine) override {
    return rank_ == 0 ? std::vector<uint64_t>{mine, peer_} : std::vector<uint64_t>{peer_, mine};
  }
  std::vector<float> gather_to_writer(std::vector<float> mine) override {
    return rank_ == 0 ? mine : std::vector<float>{};
  }

 private:
  int rank_;
  uint64_t peer_;
};

TEST(EpochLoop, OnlyTheWriterRankWritesCheckpoints) {
  for (int rank : {0, 1}) {
    TwoRanks comm(rank, 42);
    Trace t;
    EpochLoop l = loop_of(1, 2, 3, 3);
    l.checkpoint = true;
    l.communicator = &comm;
    run_epoch_loop(l, traced(t));
    EXPECT_EQ(t.checkpoints, (std::vector<std::pair<int, bool>>{{1, rank == 0}, {2, rank == 0}}));
  }
}

TEST(EpochLoop, RanksThatDisagreeStopTheRunBeforeItsCheckpoint) {
  TwoRanks comm(0, 41);
  Trace t;
  EpochLoop l = loop_of(1, 3, 3, 3);
  l.checkpoint = true;
  l.communicator = &comm;
  expect_error([&] { run_epoch_loop(l, traced(t)); }, ErrorCode::kInternal,
               "test train: after epoch 1 rank(s) 1 hold different parameters");
  EXPECT_TRUE(t.checkpoints.empty());
}

TEST(EpochLoop, RanksAreAlsoCheckedEveryKStepsWhenAsked) {
  // 10 examples in batches of 3: 4 steps an epoch; a check every 3 steps comes at step 3, inside epoch 1.
  TwoRanks comm(0, 41);
  Trace t;
  EpochLoop l = loop_of(1, 3, 10, 3);
  l.communicator = &comm;
  l.rank_check_every = 3;
  EpochHooks h = traced(t);
  int hashes = 0;
  h.parameter_hash = [&] { return ++hashes < 3 ? uint64_t{41} : uint64_t{42}; };  // diverges after the first check
  expect_error([&] { run_epoch_loop(l, h); }, ErrorCode::kInternal,
               "test train: after step 6 (epoch 2) rank(s) 1 hold different parameters");
  EXPECT_EQ(hashes, 3);  // step 3, epoch 1's end, step 6
  l.rank_check_every = -1;
  expect_error([&] { run_epoch_loop(l, traced(t)); }, ErrorCode::kInvalidArgument,
               "test train: the ranks' check interval must be >= 0 steps: got -1");
}

TEST(EpochLoop, RefusesAnEmptyTrainingSet) {
  Trace t;
  expect_error([&] { run_epoch_loop(loop_of(1, 1, 0, 4), traced(t)); }, ErrorCode::kInvalidArgument,
               "test train: needs at least one example");
}

}  // namespace
}  // namespace inductive
