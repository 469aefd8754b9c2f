// Refitting a GraphiT model's output layer on a few labelled graphs (inductive/graphit_head_fit.h): the hidden
// activations are what the output layer reads, the refit learns a new task from them with the frozen encoder, and
// the refitted model is an ordinary model (predicts with the new classes, round-trips through the model file).
#include <algorithm>
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "graphit_test_util.h"
#include "inductive/graphit_head_fit.h"

namespace inductive {
namespace {

using testing::expect_error;

GraphitModel small_model() {
  GraphitConfig c = GraphitConfig::with_dim(16, 2, 4);
  c.vocab = 4;
  c.node_labels = {"C", "N", "O", "Cl"};
  c.class_labels = {"inactive", "active"};
  return GraphitModel::create(c, 7);
}

TEST(GraphitHeadFit, HiddenActivationsAreWhatTheOutputLayerReads) {
  const GraphitModel model = small_model();
  const std::vector<GraphitGraph> graphs = testing::random_graphs(20, 3, 9, {}, 11);
  std::vector<double> seen;
  const MatF hidden = graphit_hidden(model, graphs, 7, [&](const char* stage, double f) {
    EXPECT_STREQ(stage, "hidden");
    seen.push_back(f);
  });
  ASSERT_EQ(hidden.rows(), 20);
  ASSERT_EQ(hidden.cols(), model.config.hidden);
  EXPECT_GE(hidden.minCoeff(), 0.0f);  // after the ReLU
  MatF outputs = hidden * model.params.out_weight.transpose();
  outputs.rowwise() += model.params.out_bias.transpose();
  EXPECT_LT((outputs - model.predict(graphs)).cwiseAbs().maxCoeff(), 1e-5f);
  EXPECT_EQ(seen, (std::vector<double>{7.0 / 20, 14.0 / 20, 1.0}));  // batches of 7, 7 and 6
}

TEST(GraphitHeadFit, LearnsANewThreeClassTaskWithTheEncoderFrozen) {
  const GraphitModel model = small_model();
  const std::vector<GraphitGraph> graphs = testing::random_graphs(30, 4, 10, {}, 5);
  // A task the frozen features can express: the tercile of a fixed projection of them (10 graphs per class; no
  // std:: distribution, whose draws differ between the native and the wasm standard library).
  const MatF hidden = graphit_hidden(model, graphs);
  VecF direction(model.config.hidden);
  for (int j = 0; j < direction.size(); ++j) direction[j] = std::sin(1.0f + j);
  const VecF score = hidden * direction;
  std::vector<int> order(graphs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return score[a] < score[b]; });
  std::vector<int32_t> labels(graphs.size());
  for (size_t r = 0; r < order.size(); ++r) labels[order[r]] = static_cast<int32_t>(3 * r / order.size());
  HeadFitOptions options;
  options.lambda = 1e-6;
  std::vector<std::string> stages;
  options.progress = [&](const char* stage, double) {
    if (stages.empty() || stages.back() != stage) stages.emplace_back(stage);
  };
  const GraphitHeadRefit r = refit_graphit_head(model, graphs, labels, {"a", "b", "c"}, options);
  EXPECT_EQ(stages.front(), "hidden");
  EXPECT_EQ(r.model.config.outputs, 3);
  EXPECT_EQ(r.model.config.class_labels, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_GE(r.fit.train_accuracy, 0.9);
  const MatF out = r.model.predict(graphs);
  EXPECT_GE(graphit_accuracy(out, labels), 0.9);
  // The encoder and hidden layer are untouched; only the output layer changed.
  EXPECT_EQ(graphit_hidden(r.model, graphs), hidden);
  EXPECT_EQ(r.model.params.hidden_weight, model.params.hidden_weight);
  // An ordinary model file.
  const std::vector<uint8_t> bytes = r.model.to_bytes();
  const GraphitModel back = GraphitModel::from_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(back.predict(graphs), out);
}

TEST(GraphitHeadFit, RefusesOneClassAndMismatchedLabels) {
  const GraphitModel model = small_model();
  const std::vector<GraphitGraph> graphs = testing::random_graphs(4, 3, 5, {}, 2);
  expect_error(
      [&] {
        refit_graphit_head(model, graphs, {0, 0, 0, 0}, {"only"}, {});
      },
      ErrorCode::kInvalidArgument, "at least 2 classes");
  expect_error(
      [&] {
        refit_graphit_head(model, graphs, {0, 1}, {"a", "b"}, {});
      },
      ErrorCode::kShapeMismatch, "2 labels for 4 graphs");
}

TEST(GraphitHeadFit, AProgressCallbackThatThrowsCancelledStopsTheFitAndLeavesTheModel) {
  const GraphitModel model = small_model();
  const std::vector<GraphitGraph> graphs = testing::random_graphs(10, 3, 6, {}, 4);
  HeadFitOptions options;
  options.progress = [](const char*, double) { throw Error(ErrorCode::kCancelled, "refit: cancelled"); };
  const MatF before = model.predict(graphs);
  expect_error(
      [&] {
        refit_graphit_head(model, graphs, {0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, {"a", "b"}, options);
      },
      ErrorCode::kCancelled, "cancelled");
  EXPECT_EQ(model.predict(graphs), before);
  EXPECT_STREQ(error_code_name(ErrorCode::kCancelled), "cancelled");
}

}  // namespace
}  // namespace inductive
