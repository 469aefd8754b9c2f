// The GraphiT protocols as the thesis runs them: keep-best training, and cross-validation that selects by the
// mean validation score of the last epochs, retrains on train + validation and scores on the test split.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/graphit_protocol.h"

namespace inductive {
namespace {

using testing::expect_error;

const std::string kData = std::string(INDUCTIVE_TEST_DATA) + "/../../data/";

struct Mutag {
  GraphDataset ds = read_tu_dataset(kData + "tu-MUTAG", "MUTAG");
  std::vector<GraphFold> folds = read_graphit_folds(kData + "graphit-folds/MUTAG", ds.n_graphs());
  GraphitInputSpec spec;  // diffusion kernel, no LapPE, no GCKN
  GraphitConfig base;
  Mutag() {
    base = GraphitConfig::with_dim(16, 1, 2);
    base.vocab = ds.n_node_labels();
    base.outputs = ds.n_classes();
    base.has_graph = true;
    base.graph = spec;
  }
};

GraphitTrainOptions quick(int epochs) {
  GraphitTrainOptions o;
  o.epochs = epochs;
  o.adam.lr = 3e-3;
  o.seed = 5;
  return o;
}

std::vector<float> flat(const GraphitModel& m) {
  std::vector<float> v;
  for (const auto& t : m.params.tensors(m.config)) v.insert(v.end(), t.data, t.data + t.size());
  return v;
}

TEST(GraphitProtocol, SubsetTakesClassesOrTargetsOfTheIndexedGraphs) {
  const Mutag m;
  const PrecomputedDataset pre = precompute_graph_data(m.ds, m.spec.precompute_options());
  const GraphitDataset d = graphit_subset(m.ds, {}, pre, m.base, {3, 0});
  ASSERT_EQ(d.size(), 2);
  EXPECT_EQ(d.classes, (std::vector<int32_t>{m.ds.graphs[3].label, m.ds.graphs[0].label}));
  EXPECT_EQ(d.graphs[0].num_nodes, m.ds.graphs[3].n_nodes);
  GraphitConfig reg = m.base;
  reg.task = GraphitTask::kRegression;
  reg.outputs = 1;
  std::vector<float> targets(m.ds.n_graphs());
  for (int i = 0; i < m.ds.n_graphs(); ++i) targets[i] = 0.5f * i;
  EXPECT_EQ(graphit_subset(m.ds, targets, pre, reg, {4}).values, std::vector<float>{2.0f});
  expect_error([&] { graphit_subset(m.ds, {}, pre, reg, {4}); }, ErrorCode::kShapeMismatch, "one target per graph");
  expect_error([&] { graphit_subset(m.ds, {}, pre, m.base, {188}); }, ErrorCode::kInvalidArgument,
               "graph index 188 is not in [0, 188)");
}

TEST(GraphitProtocol, GridIsEveryCombinationAndResizesTheBaseConfig) {
  const std::vector<GraphitGridPoint> g = graphit_grid({1, 2}, {8}, {1, 2}, {1e-4, 1e-3});
  ASSERT_EQ(g.size(), 8u);
  EXPECT_EQ(g[0].layers, 1);
  EXPECT_EQ(g[1].weight_decay, 1e-3);  // weight decay innermost
  EXPECT_EQ(g[2].heads, 2);
  EXPECT_EQ(g[7].layers, 2);
  const Mutag m;
  const GraphitConfig c = graphit_config_at(m.base, {2, 32, 4, 0.0});
  EXPECT_EQ(c.d, 32);
  EXPECT_EQ(c.ffn, 64);  // the reference's 2 d
  EXPECT_EQ(c.hidden, 32);
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(c.vocab, m.base.vocab);  // inputs and task kept
  EXPECT_EQ(c.outputs, m.base.outputs);
  expect_error([&] { graphit_config_at(m.base, {1, 30, 4, 0.0}); }, ErrorCode::kInvalidArgument, "");
}

TEST(GraphitProtocol, KeepBestLeavesTheModelOfTheBestValidationEpoch) {
  const Mutag m;
  const GraphFold& f = m.folds[0];
  const PrecomputedDataset pre = precompute_graph_data(m.ds, m.spec.precompute_options());
  const GraphitDataset train = graphit_subset(m.ds, {}, pre, m.base, f.train);
  const GraphitDataset val = graphit_subset(m.ds, {}, pre, m.base, f.val);
  GraphitTrainOptions o = quick(8);
  o.keep_best = true;
  GraphitModel kept = GraphitModel::create(m.base, 1);
  const GraphitTrainReport r = train_graphit(kept, train, &val, nullptr, o);
  // The first epoch with the highest validation accuracy...
  int best = 1;
  for (const GraphitEpoch& e : r.history)
    if (e.val_metric > r.history[best - 1].val_metric) best = e.epoch;
  EXPECT_EQ(r.saved_epoch, best);
  EXPECT_EQ(r.best_epoch, best);
  EXPECT_LT(best, 8) << "the data must make the best epoch differ from the last one, or this proves nothing";
  // ...and the model is exactly that epoch's: a run stopped there has the same parameters, bit for bit.
  GraphitModel stopped = GraphitModel::create(m.base, 1);
  o.keep_best = false;
  o.epochs = best;
  const GraphitTrainReport rs = train_graphit(stopped, train, &val, nullptr, o);
  EXPECT_EQ(rs.saved_epoch, best);
  EXPECT_EQ(flat(kept), flat(stopped));

  o.keep_best = true;
  expect_error([&] { train_graphit(kept, train, nullptr, nullptr, o); }, ErrorCode::kInvalidArgument,
               "--keep-best needs a validation set");
}

TEST(GraphitProtocol, CrossValidationSelectsOnValidationAndScoresTheRetrainedModelOnTest) {
  const Mutag m;
  GraphitCvOptions o;
  o.grid = graphit_grid({1}, {8, 16}, {2}, {1e-4});
  o.folds_to_run = {2, 5};
  o.last = 2;
  o.train = quick(3);
  std::vector<GraphitCvProgress::Kind> seen;
  const GraphitCvReport r =
      run_graphit_cv(m.ds, {}, m.folds, m.spec, m.base, o, [&](const GraphitCvProgress& p) { seen.push_back(p.kind); });
  ASSERT_EQ(r.folds.size(), 2u);
  EXPECT_EQ(r.folds[0].fold, 2);
  EXPECT_EQ(r.folds[1].fold, 5);
  EXPECT_FALSE(r.regression);
  using K = GraphitCvProgress::Kind;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), K::kPrepared), 2);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), K::kValidated), 4);  // 2 folds x 2 points
  EXPECT_EQ(std::count(seen.begin(), seen.end(), K::kTested), 2);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), K::kEpoch), 6 * 3);  // 6 runs of 3 epochs

  const PrecomputedDataset pre = precompute_graph_data(m.ds, m.spec.precompute_options());
  double sum = 0;
  for (const GraphitCvFold& f : r.folds) {
    const GraphFold& fold = m.folds[f.fold - 1];
    // Selection: the point with the highest mean validation accuracy of the last 2 epochs, recomputed here.
    ASSERT_EQ(f.val.size(), 2u);
    for (int p = 0; p < 2; ++p) {
      const GraphitConfig c = graphit_config_at(m.base, o.grid[p]);
      GraphitModel model = GraphitModel::create(c, o.train.seed);
      const GraphitDataset tr = graphit_subset(m.ds, {}, pre, c, fold.train);
      const GraphitDataset va = graphit_subset(m.ds, {}, pre, c, fold.val);
      EXPECT_EQ(train_graphit(model, tr, &va, nullptr, o.train).mean_val_metric_last(2), f.val[p]);
    }
    EXPECT_EQ(f.selected, f.val[1] > f.val[0] ? 1 : 0);
    // Score: the selected point retrained on train + validation, mean test accuracy of the last 2 epochs.
    const GraphitConfig c = graphit_config_at(m.base, o.grid[f.selected]);
    std::vector<int32_t> train = fold.train;
    train.insert(train.end(), fold.val.begin(), fold.val.end());
    GraphitModel model = GraphitModel::create(c, o.train.seed);
    const GraphitDataset tr = graphit_subset(m.ds, {}, pre, c, train);
    const GraphitDataset te = graphit_subset(m.ds, {}, pre, c, fold.test);
    const GraphitTrainReport rr = train_graphit(model, tr, nullptr, &te, o.train);
    EXPECT_EQ(f.test_last, rr.mean_test_metric_last(2));
    EXPECT_EQ(f.test_final, rr.history.back().test_metric);
    sum += f.test_last;
  }
  EXPECT_DOUBLE_EQ(r.mean, sum / 2);
  EXPECT_DOUBLE_EQ(r.stddev, std::abs(r.folds[0].test_last - r.folds[1].test_last) / 2);
}

TEST(GraphitProtocol, OneGridPointTrainsEachFoldOnce) {
  const Mutag m;
  GraphitCvOptions o;
  o.grid = {GraphitGridPoint{1, 8, 2, 1e-4}};
  o.folds_to_run = {1};
  o.last = 1;
  o.train = quick(2);
  int epochs = 0;
  const GraphitCvReport r = run_graphit_cv(m.ds, {}, m.folds, m.spec, m.base, o, [&](const GraphitCvProgress& p) {
    if (p.kind == GraphitCvProgress::Kind::kEpoch) ++epochs;
  });
  EXPECT_EQ(epochs, 2);
  ASSERT_EQ(r.folds.size(), 1u);
  EXPECT_TRUE(r.folds[0].val.empty());
  EXPECT_EQ(r.stddev, 0.0);
}

TEST(GraphitProtocol, BadRequestsFailBeforeAnyTraining) {
  const Mutag m;
  GraphitCvOptions o;
  o.train = quick(1);
  int calls = 0;
  auto count = [&](const GraphitCvProgress&) { ++calls; };
  o.folds_to_run = {11};
  expect_error([&] { run_graphit_cv(m.ds, {}, m.folds, m.spec, m.base, o, count); }, ErrorCode::kInvalidArgument,
               "--folds-to-run: fold 11 is not in [1, 10]");
  o.folds_to_run = {1};
  o.grid.clear();
  expect_error([&] { run_graphit_cv(m.ds, {}, m.folds, m.spec, m.base, o, count); }, ErrorCode::kInvalidArgument,
               "grid is empty");
  o.grid = {GraphitGridPoint{1, 10, 4, 0}};  // 10 is not a multiple of 4 heads
  expect_error([&] { run_graphit_cv(m.ds, {}, m.folds, m.spec, m.base, o, count); }, ErrorCode::kInvalidArgument, "");
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace inductive
