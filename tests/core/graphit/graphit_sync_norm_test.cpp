// BatchNorm synchronised across ranks (GraphitRunOptions::sync_norm), with the ranks played by threads: a batch
// split over ranks, each rank's loss weighted by its share (grad_scale), gives the one-process loss, gradients and
// running statistics; a rank without graphs takes part through graphit_norm_sync_idle. Real MPI processes:
// tests/native/test_mpi_otke.py.
#ifndef __EMSCRIPTEN__  // the wasm test build has no threads

#include <thread>

#include <gtest/gtest.h>

#include "../thread_ranks.h"
#include "graphit_test_util.h"
#include "inductive/communicator.h"

namespace inductive {
namespace {

using testing::ThreadCommunicator;
using testing::ThreadRanks;

struct RankStep {
  double weighted_loss = 0;  // the share's mean loss times its share of graphs
  GraphitParams grads;
  std::vector<GraphitNormStats> running;
};

// One training forward and backward of `graphs` split over `ranks` threads (rank r: the graphs shard_of(B, r, ranks)).
std::vector<RankStep> step_on_ranks(const GraphitModel& model, const std::vector<GraphitGraph>& graphs,
                                    const std::vector<int32_t>& classes, int ranks) {
  const int B = static_cast<int>(graphs.size());
  ThreadRanks group(ranks);
  std::vector<RankStep> out(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(group, r);
      RankStep& mine = out[static_cast<size_t>(r)];
      mine.grads = GraphitParams::zeros(model.config);
      mine.running = model.norm_stats;
      const Shard s = shard_of(B, r, ranks);
      if (s.end == s.begin) {
        graphit_norm_sync_idle(model.config, comm, &mine.running);
        return;
      }
      std::vector<int> index;
      for (int64_t g = s.begin; g < s.end; ++g) index.push_back(static_cast<int>(g));
      const GraphitBatch batch = GraphitBatch::pack(model.config, graphs, index, &classes);
      GraphitRunOptions run;
      run.training = true;
      run.running = &mine.running;
      run.sync_norm = &comm;
      run.grad_scale = static_cast<double>(s.end - s.begin) / B;
      mine.weighted_loss = run.grad_scale * model.loss(batch, run, &mine.grads);
    });
  for (auto& t : threads) t.join();
  return out;
}

float relative(const float* a, const float* b, int64_t n) {
  float diff = 0, scale = 1e-30f;
  for (int64_t k = 0; k < n; ++k) {
    diff = std::max(diff, std::fabs(a[k] - b[k]));
    scale = std::max(scale, std::fabs(a[k]));
  }
  return diff / scale;
}

TEST(GraphitSyncNorm, ABatchSplitOverRanksGivesTheOneProcessStep) {
  GraphitConfig c = GraphitConfig::with_dim(16, 2, 2);
  c.vocab = 4;
  c.norm = GraphitNorm::kBatch;
  c.outputs = 2;
  const std::vector<GraphitGraph> graphs = testing::random_graphs(5, 3, 9, testing::TestGraphOptions{}, 21);
  const std::vector<int32_t> classes{0, 1, 1, 0, 1};
  const GraphitModel model = GraphitModel::create(c, 3);

  GraphitParams one = GraphitParams::zeros(c);
  std::vector<GraphitNormStats> one_running = model.norm_stats;
  GraphitRunOptions run;
  run.training = true;
  run.running = &one_running;
  const double one_loss = model.loss(GraphitBatch::pack(c, graphs, {}, &classes), run, &one);

  // 2 ranks (3 + 2 graphs), 3 ranks (2 + 2 + 1), 6 ranks (one rank without a graph).
  for (int ranks : {2, 3, 6}) {
    SCOPED_TRACE(::testing::Message() << ranks << " ranks");
    const std::vector<RankStep> steps = step_on_ranks(model, graphs, classes, ranks);
    double loss = 0;
    GraphitParams sum = GraphitParams::zeros(c);
    auto sum_views = sum.tensors(c);
    for (const RankStep& s : steps) {
      loss += s.weighted_loss;
      const auto views = s.grads.tensors(c);
      for (size_t t = 0; t < views.size(); ++t)
        for (int64_t k = 0; k < views[t].size(); ++k) sum_views[t].data[k] += views[t].data[k];
    }
    EXPECT_NEAR(loss, one_loss, 1e-6 * std::fabs(one_loss));
    // The FFN's output bias feeds BatchNorm, which removes any shift: its gradient is 0 in exact arithmetic, and
    // what both sides hold is rounding noise, far below the other gradients.
    const auto one_views = one.tensors(c);
    float scale = 0;
    for (const auto& v : one_views)
      for (int64_t k = 0; k < v.size(); ++k) scale = std::max(scale, std::fabs(v.data[k]));
    for (size_t t = 0; t < one_views.size(); ++t) {
      if (one_views[t].name.find("ffn2.bias") != std::string::npos) {
        for (int64_t k = 0; k < one_views[t].size(); ++k)
          EXPECT_LT(std::fabs(sum_views[t].data[k]), 1e-5f * scale) << one_views[t].name;
        continue;
      }
      EXPECT_LT(relative(one_views[t].data, sum_views[t].data, one_views[t].size()), 1e-4f) << one_views[t].name;
    }
    // Every rank updates its running statistics with the whole batch's: the one-process ones, on every rank.
    for (const RankStep& s : steps)
      for (int l = 0; l < c.layers; ++l) {
        EXPECT_LT((s.running[l].mean1 - one_running[l].mean1).cwiseAbs().maxCoeff(), 1e-6f);
        EXPECT_LT((s.running[l].var2 - one_running[l].var2).cwiseAbs().maxCoeff(), 1e-6f);
      }
  }

  // Without the synchronisation each rank normalises with its own share's statistics: another step (what the test
  // above would see if the sums were left out).
  GraphitParams local = GraphitParams::zeros(c);
  GraphitRunOptions alone;
  alone.training = true;
  alone.grad_scale = 3.0 / 5;
  model.loss(GraphitBatch::pack(c, graphs, {0, 1, 2}, &classes), alone, &local);
  GraphitRunOptions rest = alone;
  rest.grad_scale = 2.0 / 5;
  model.loss(GraphitBatch::pack(c, graphs, {3, 4}, &classes), rest, &local);
  const auto one_views = one.tensors(c);
  const auto local_views = local.tensors(c);
  float worst = 0;
  for (size_t t = 0; t < one_views.size(); ++t)
    worst = std::max(worst, relative(one_views[t].data, local_views[t].data, one_views[t].size()));
  EXPECT_GT(worst, 1e-2f);
}

}  // namespace
}  // namespace inductive

#endif  // __EMSCRIPTEN__
