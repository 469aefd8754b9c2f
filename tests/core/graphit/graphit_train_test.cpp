// GraphiT training: learns a structural property of synthetic graphs, follows the lr schedules, records
// per-epoch metrics, and an interrupted run resumes bit-identically from its checkpoint.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "graphit_test_util.h"
#include "inductive/backend_registry.h"
#include "inductive/graphit_train.h"
#include "inductive/otke_stepper.h"

namespace inductive {
namespace {

using testing::expect_error;
using testing::TestGraphOptions;

// Class 1: some node labelled 1 is adjacent to a node labelled 2; class 0: no such edge. Both classes have the
// same label and similar edge statistics, so the model must use the graph structure (attention through the kernel).
GraphitDataset contact_data(int count, uint32_t seed, int pe = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  TestGraphOptions o;
  o.vocab = 3;
  o.pe = pe;
  GraphitDataset d;
  for (int k = 0; k < count; ++k) {
    const int n = 8 + static_cast<int>(rng() % 5);
    std::vector<int32_t> labels(n);
    for (auto& l : labels) l = static_cast<int32_t>(rng() % 3);
    labels[0] = 1;
    labels[1] = 2;
    const int label = k % 2;
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        const bool contact = (labels[i] == 1 && labels[j] == 2) || (labels[i] == 2 && labels[j] == 1);
        if (u(rng) < 0.3 && !contact) a(i, j) = a(j, i) = 1;
      }
    if (label) a(0, 1) = a(1, 0) = 1;  // exactly one 1-2 contact
    d.graphs.push_back(testing::graph_from_adjacency(a, labels, o, rng));
    d.classes.push_back(label);
  }
  return d;
}

GraphitConfig small_config(int pe = 0) {
  GraphitConfig c = GraphitConfig::with_dim(16, 2, 2);
  c.vocab = 3;
  c.pe_dim = pe;
  return c;
}

TEST(GraphitTrain, LearnsWhetherTwoLabelsAreInContact) {
  const GraphitDataset train = contact_data(160, 1), val = contact_data(80, 2);
  GraphitModel model = GraphitModel::create(small_config(), 7);
  GraphitTrainOptions o;
  o.epochs = 40;
  o.batch_size = 16;
  o.adam.lr = 5e-3;
  o.adam.weight_decay = 0;
  o.lr_halve_every = 20;
  int calls = 0;
  const auto report = train_graphit(model, train, &val, &val, o, [&](const GraphitEpoch& e) {
    ++calls;
    EXPECT_EQ(e.epoch, calls);
    EXPECT_GE(e.eta_seconds, 0);
  });
  EXPECT_EQ(calls, 40);
  ASSERT_EQ(report.history.size(), 40u);
  const double final_acc = evaluate_graphit(model, val).metric;
  EXPECT_GE(final_acc, 0.9) << "1-2 contacts on held-out graphs";
  EXPECT_LT(report.history.back().train_loss, report.history.front().train_loss);
  EXPECT_DOUBLE_EQ(report.history.back().val_metric, final_acc);
  EXPECT_GE(report.best_epoch, 1);
  EXPECT_GE(report.best_val_metric, final_acc);
  double mean = 0;
  for (int e = 30; e < 40; ++e) mean += report.history[e].test_metric / 10;
  EXPECT_DOUBLE_EQ(report.mean_test_metric_last(10), mean);
  EXPECT_DOUBLE_EQ(report.history[0].lr, 5e-3);
  EXPECT_DOUBLE_EQ(report.history[25].lr, 2.5e-3) << "halved after 20 epochs";
}

TEST(GraphitTrain, LearningRateSchedules) {
  GraphitTrainOptions o;
  o.adam.lr = 1e-3;
  o.lr_halve_every = 50;
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 1, 1), 1e-3);
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 50, 9999), 1e-3);
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 51, 1), 5e-4);
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 101, 1), 2.5e-4);
  o.lr_halve_every = 0;
  o.warmup_steps = 2000;
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 1, 1), 1e-3 / 2000);
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 3, 1000), 0.5e-3);
  EXPECT_DOUBLE_EQ(graphit_learning_rate(o, 300, 5000), 1e-3);
}

TEST(GraphitTrain, ResumingFromACheckpointEqualsAnUninterruptedRun) {
  const GraphitDataset train = contact_data(24, 3, 2), val = contact_data(8, 4, 2);
  GraphitConfig c = small_config(2);
  c.norm = GraphitNorm::kBatch;
  c.dropout = 0.1;  // dropout masks and LapPE sign flips must replay exactly
  const GraphitModel init = GraphitModel::create(c, 1);
  GraphitTrainOptions o;
  o.epochs = 4;
  o.batch_size = 8;
  o.warmup_steps = 5;
  o.lr_halve_every = 2;
  o.seed = 9;
  int hook_calls = 0;
  o.batch_hook = [&](GraphitBatch& b, std::mt19937_64& rng) {
    ++hook_calls;
    b.pe *= 1.0f + static_cast<float>(rng() % 2) * 0.1f;  // an augmentation drawing from the epoch's rng
  };

  GraphitModel straight = init;
  const auto full = train_graphit(straight, train, &val, nullptr, o);
  EXPECT_EQ(hook_calls, 4 * 3);

  const std::string ck = inductive::testing::temp_path("graphit_resume_test.ckpt");
  std::remove(ck.c_str());
  GraphitModel first = init;
  o.checkpoint_path = ck;
  o.epochs = 2;
  train_graphit(first, train, &val, nullptr, o);  // "interrupted" after 2 epochs
  GraphitModel resumed = init;
  o.epochs = 4;
  const auto report = train_graphit(resumed, train, &val, nullptr, o);
  EXPECT_TRUE(report.resumed);
  EXPECT_EQ(report.resumed_from_epoch, 2);
  ASSERT_EQ(report.history.size(), 4u);
  EXPECT_EQ(resumed.to_bytes(), straight.to_bytes()) << "parameters and running statistics bit-identical";
  for (int e = 0; e < 4; ++e) {
    EXPECT_EQ(report.history[e].train_loss, full.history[e].train_loss) << e;
    EXPECT_EQ(report.history[e].val_metric, full.history[e].val_metric) << e;
    EXPECT_TRUE(std::isnan(report.history[e].test_metric));
  }

  GraphitModel other = GraphitModel::create(small_config(2), 1);
  expect_error([&] { train_graphit(other, train, &val, nullptr, o); }, ErrorCode::kInvalidArgument,
               "another model configuration");
  GraphitModel same = init;
  o.seed = 10;
  expect_error([&] { train_graphit(same, train, &val, nullptr, o); }, ErrorCode::kInvalidArgument,
               "resume with the same options");
  std::remove(ck.c_str());
}

TEST(GraphitTrain, RegressionReportsMaeAndRejectsMissingTargets) {
  GraphitConfig c = small_config();
  c.task = GraphitTask::kRegression;
  c.outputs = 1;
  c.pooling = GraphitPooling::kSum;
  GraphitDataset train = contact_data(32, 5);
  for (const auto& g : train.graphs) train.values.push_back(static_cast<float>(g.degree.sum() / 2));  // edges
  GraphitModel model = GraphitModel::create(c, 2);
  const double before = evaluate_graphit(model, train).metric;
  GraphitTrainOptions o;
  o.epochs = 30;
  o.batch_size = 8;
  o.adam.lr = 1e-2;
  o.adam.weight_decay = 0;
  const auto report = train_graphit(model, train, nullptr, nullptr, o);
  const auto after = evaluate_graphit(model, train);
  EXPECT_LT(after.metric, 0.5 * before) << "MAE of the edge count";
  EXPECT_EQ(report.best_epoch, 0);
  GraphitDataset bad = train;
  bad.values.pop_back();
  expect_error([&] { train_graphit(model, bad, nullptr, nullptr, o); }, ErrorCode::kShapeMismatch, "target values");
}

}  // namespace
}  // namespace inductive

namespace inductive {
namespace {

// The backend seam (inductive/graphit_stepper.h): the CPU backend is the in-place trainer, and a backend that cannot
// train GraphiT says so before any work rather than falling back.
TEST(GraphitTrain, RunsThroughTheBackendItIsGiven) {
  const GraphitDataset train = contact_data(24, 7), val = contact_data(8, 8);
  GraphitTrainOptions o;
  o.epochs = 3;
  o.batch_size = 8;
  o.seed = 2;
  GraphitModel in_place = GraphitModel::create(small_config(), 1), via_cpu = in_place;
  const GraphitTrainReport a = train_graphit(in_place, train, &val, nullptr, o);
  const std::unique_ptr<Backend> cpu = make_cpu_backend();
  o.backend = cpu.get();
  const GraphitTrainReport b = train_graphit(via_cpu, train, &val, nullptr, o);
  EXPECT_EQ(in_place.to_bytes(), via_cpu.to_bytes());
  EXPECT_EQ(a.history.back().train_loss, b.history.back().train_loss);

  struct SinkhornOnly final : Backend {
    std::string name() const override { return "sinkhorn-only"; }
    void sinkhorn_log(const SinkhornProblem<float>& p, const SinkhornOptions& s,
                      const SinkhornOutput<float>& out) override {
      inductive::sinkhorn_log(p, s, out);
    }
    std::unique_ptr<OtkeStepper> otke_stepper(OtkeModel&, Adam&, const OtkeLossOptions&) override { return nullptr; }
  } other;
  o.backend = &other;
  GraphitModel untouched = GraphitModel::create(small_config(), 1);
  const std::vector<uint8_t> before = untouched.to_bytes();
  expect_error([&] { train_graphit(untouched, train, &val, nullptr, o); }, ErrorCode::kBackend,
               "backend sinkhorn-only cannot train GraphiT models yet");
  EXPECT_EQ(untouched.to_bytes(), before);
}

}  // namespace
}  // namespace inductive
