// GraphiT model: config strictness, permutation equivariance, batch independence, degenerate graphs, attention
// maps, and the model file (bit-identical round trip, wrong kind/version, corrupt values).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "graphit_test_util.h"
#include "inductive/graphit.h"
#include "inductive/otke.h"
#include "inductive/parallel.h"

namespace inductive {
namespace {

using testing::expect_error;
using testing::TestGraphOptions;

GraphitConfig base_config() {
  GraphitConfig c = GraphitConfig::with_dim(16, 2, 4);
  c.vocab = 4;
  c.pe_dim = 2;
  c.path_dim = 3;
  c.node_labels = {"C", "N", "O", "Cl"};
  c.class_labels = {"inactive", "active"};
  return c;
}

TestGraphOptions base_options() {
  TestGraphOptions o;
  o.pe = 2;
  o.path = 3;
  return o;
}

TEST(GraphitConfig, RoundTripsThroughJsonAndRejectsTyposAndBadValues) {
  GraphitConfig c = base_config();
  c.norm = GraphitNorm::kBatch;
  c.dropout = 0.1;
  const GraphitConfig back = GraphitConfig::from_json(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
  auto j = c.to_json();
  j["encoder"]["head"] = 4;
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "unknown key 'encoder.head'");
  j = c.to_json();
  j["encoder"]["d"] = "64";
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "'encoder.d' must be an integer");
  j = c.to_json();
  j["encoder"]["kernel"] = 1;
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "must be true or false");
  j = c.to_json();
  j["encoder"]["heads"] = 3;
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "must be >= 1 and divide d");
  j = c.to_json();
  j["encoder"]["norm"] = "group";
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "layer or batch");
  j = c.to_json();
  j["extra"] = {};
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "unknown section 'extra'");
  j = c.to_json();
  j["input"]["node_labels"] = {"C", "N"};
  expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "node_labels has 2 entries");
  // A d far out of range reaches the range check, not an overflow in ffn's default 2 d (a fuzzer's finding).
  for (const int64_t huge : {int64_t{2064951154}, int64_t{-2064951154}}) {
    j = c.to_json();
    j["encoder"].erase("ffn");
    j["encoder"]["d"] = huge;
    expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "encoder.d must be in 1..65536");
  }
  // Defaults: ffn = 2 d, hidden = d, degree scaling follows the kernel, regression has one output.
  const GraphitConfig d = GraphitConfig::from_json(
      {{"input", {{"vocab", 3}}}, {"encoder", {{"d", 32}, {"kernel", false}}}, {"task", {{"type", "regression"}}}});
  EXPECT_EQ(d.ffn, 64);
  EXPECT_EQ(d.hidden, 32);
  EXPECT_FALSE(d.degree_scaling);
  EXPECT_EQ(d.outputs, 1);
}

TEST(GraphitBatch, RejectsInconsistentGraphs) {
  const GraphitConfig c = base_config();
  auto graphs = testing::random_graphs(2, 3, 5, base_options(), 1);
  graphs[1].node_labels[0] = 7;
  expect_error([&] { GraphitBatch::pack(c, graphs); }, ErrorCode::kInvalidArgument, "graph 1: node 0 has label 7");
  graphs = testing::random_graphs(2, 3, 5, base_options(), 1);
  graphs[0].kernel.resize(2, 2);
  expect_error([&] { GraphitBatch::pack(c, graphs); }, ErrorCode::kShapeMismatch, "graph 0: kernel is 2 x 2");
  graphs = testing::random_graphs(2, 3, 5, base_options(), 1);
  graphs[0].pe(0, 0) = NAN;
  expect_error([&] { GraphitBatch::pack(c, graphs); }, ErrorCode::kInvalidArgument, "pe contains NaN");
  graphs = testing::random_graphs(2, 3, 5, base_options(), 1);
  graphs[1].num_nodes = 0;
  expect_error([&] { GraphitBatch::pack(c, graphs); }, ErrorCode::kInvalidArgument, "graph 1 has 0 nodes");
  graphs = testing::random_graphs(2, 3, 5, base_options(), 1);
  const std::vector<int32_t> bad{0, 2};
  expect_error([&] { GraphitBatch::pack(c, graphs, {}, &bad); }, ErrorCode::kInvalidArgument, "graph 1 has class 2");
}

// Permuting the nodes of a graph (labels, features, kernel P K P^T, degrees, PE) permutes the encoder's node
// outputs the same way and leaves the graph's prediction unchanged.
TEST(GraphitModel, PermutingNodesPermutesOutputsAndKeepsThePrediction) {
  for (const char* norm : {"layer", "batch"}) {
    GraphitConfig c = base_config();
    c.norm = parse_enum(kGraphitNorms, norm, "norm");
    const GraphitModel model = GraphitModel::create(c, 3);
    const auto graphs = testing::random_graphs(1, 9, 9, base_options(), 5);
    const GraphitGraph& g = graphs[0];
    const int n = g.num_nodes;
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937 rng(1);
    std::shuffle(perm.begin(), perm.end(), rng);
    GraphitGraph p = g;  // p's node i is g's node perm[i]
    for (int i = 0; i < n; ++i) {
      p.node_labels[i] = g.node_labels[perm[i]];
      p.degree[i] = g.degree[perm[i]];
      p.pe.row(i) = g.pe.row(perm[i]);
      p.path_features.row(i) = g.path_features.row(perm[i]);
      for (int j = 0; j < n; ++j) p.kernel(i, j) = g.kernel(perm[i], perm[j]);
    }
    const std::vector<GraphitGraph> gp{p};
    GraphitCache ca, cb;
    const MatF ya = model.forward(GraphitBatch::pack(c, graphs), {}, &ca);
    const MatF yb = model.forward(GraphitBatch::pack(c, gp), {}, &cb);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < c.d; ++k) EXPECT_NEAR(cb.x_out(i, k), ca.x_out(perm[i], k), 2e-5) << norm;
    for (int k = 0; k < c.outputs; ++k) EXPECT_NEAR(ya(0, k), yb(0, k), 2e-5) << norm;
  }
}

// Packing graph A with other graphs gives A the same output as alone (LayerNorm; BatchNorm in evaluation mode).
TEST(GraphitModel, PackedGraphsDoNotInfluenceEachOther) {
  for (const char* norm : {"layer", "batch"}) {
    GraphitConfig c = base_config();
    c.norm = parse_enum(kGraphitNorms, norm, "norm");
    GraphitModel model = GraphitModel::create(c, 4);
    if (c.norm == GraphitNorm::kBatch)
      for (auto& s : model.norm_stats) s.mean1.setConstant(0.1f), s.var2.setConstant(2.0f);
    const auto graphs = testing::random_graphs(5, 1, 12, base_options(), 8);
    const MatF all = model.forward(GraphitBatch::pack(c, graphs));
    for (int g = 0; g < 5; ++g) {
      const MatF alone = model.forward(GraphitBatch::pack(c, graphs, {g}));
      for (int k = 0; k < c.outputs; ++k) EXPECT_NEAR(all(g, k), alone(0, k), 1e-5) << norm << " graph " << g;
    }
    const MatF pred = model.predict(graphs, 2);
    EXPECT_TRUE(pred.isApprox(all, 1e-5f)) << norm;
  }
}

// predict() keeps no layer's activations (GraphitRunOptions::keep_layers = false: every layer writes layer 0's
// buffers). The same operations on the same rows: the kept-layers pass's bits, for LayerNorm and evaluation BatchNorm
// (per-layer rstd), with and without the kernel, on one thread and several, and with one cache going back and forth
// between the two modes (a kept pass after a shared one must size its layers again).
TEST(GraphitModel, InferenceThatKeepsNoLayerGivesTheKeptLayersBits) {
  struct CapGuard {
    ~CapGuard() { set_parallel_threads(0); }
  } guard;
  for (const char* norm : {"layer", "batch"})
    for (const bool kernel : {true, false}) {
      GraphitConfig c = base_config();
      c.layers = 3;
      c.kernel = kernel;
      c.norm = parse_enum(kGraphitNorms, norm, "norm");
      GraphitModel model = GraphitModel::create(c, 4);
      if (c.norm == GraphitNorm::kBatch)
        for (size_t l = 0; l < model.norm_stats.size(); ++l) {  // a different rstd per layer
          model.norm_stats[l].mean1.setConstant(0.1f * static_cast<float>(l));
          model.norm_stats[l].var1.setConstant(1.0f + static_cast<float>(l));
          model.norm_stats[l].var2.setConstant(2.0f + 0.5f * static_cast<float>(l));
        }
      const auto graphs = testing::random_graphs(40, 3, 30, base_options(), 17);
      const GraphitBatch batch = GraphitBatch::pack(c, graphs);
      GraphitRunOptions shared;
      shared.keep_layers = false;
      for (int threads : {1, 3}) {
        set_parallel_threads(threads);
        GraphitCache cache;
        const MatF kept = model.forward(batch, {}, &cache);
        const MatF outputs_only = model.forward(batch, shared, &cache);
        const MatF kept_again = model.forward(batch, {}, &cache);
        const std::string where =
            std::string(norm) + (kernel ? ", kernel" : ", plain") + ", " + std::to_string(threads) + " threads";
        ASSERT_EQ(kept.size(), outputs_only.size());
        EXPECT_EQ(std::memcmp(kept.data(), outputs_only.data(), sizeof(float) * kept.size()), 0) << where;
        EXPECT_EQ(std::memcmp(kept.data(), kept_again.data(), sizeof(float) * kept.size()), 0) << where;
        ASSERT_EQ(cache.layers.size(), static_cast<size_t>(c.layers));
        EXPECT_EQ(cache.layers.back().q.rows(), batch.n_nodes) << where << ": the kept pass sized every layer";
        const MatF predicted = model.predict(graphs, 64);
        EXPECT_EQ(std::memcmp(kept.data(), predicted.data(), sizeof(float) * kept.size()), 0) << where;
      }
    }
}

// predict() with at least two batches a thread runs each batch whole on one thread, each thread with its own buffers;
// with fewer it shares each batch's rows out. Either way every graph gets the bits of one thread, including the
// short last batch and BatchNorm's per-layer statistics, and a failing prediction the one-thread error.
TEST(GraphitModel, PredictionOnSeveralThreadsGivesEveryBatchTheOneThreadBits) {
  struct CapGuard {
    ~CapGuard() { set_parallel_threads(0); }
  } guard;
  for (const char* norm : {"layer", "batch"}) {
    GraphitConfig c = base_config();
    c.layers = 2;
    c.norm = parse_enum(kGraphitNorms, norm, "norm");
    GraphitModel model = GraphitModel::create(c, 6);
    if (c.norm == GraphitNorm::kBatch)
      for (size_t l = 0; l < model.norm_stats.size(); ++l) model.norm_stats[l].var2.setConstant(1.5f + l);
    const auto graphs = testing::random_graphs(50, 3, 30, base_options(), 23);
    for (const int batch_size : {3, 4, 30}) {  // 17 and 13 batches (a thread each at a time), then 2 (rows shared)
      set_parallel_threads(1);
      const MatF one = model.predict(graphs, batch_size);
      ASSERT_EQ(one.rows(), 50);
      for (int threads : {2, 3}) {
        set_parallel_threads(threads);
        for (int round = 0; round < 3; ++round) {  // the batches dealt anew each call
          const MatF several = model.predict(graphs, batch_size);
          ASSERT_EQ(several.size(), one.size());
          EXPECT_EQ(std::memcmp(one.data(), several.data(), sizeof(float) * one.size()), 0)
              << norm << ", batches of " << batch_size << ", " << threads << " threads, round " << round;
        }
      }
    }
  }
  // Graphs the model cannot take in two batches: the first one's error, as on one thread, whichever thread failed
  // first.
  GraphitModel model = GraphitModel::create(base_config(), 6);
  auto graphs = testing::random_graphs(50, 3, 30, base_options(), 23);
  graphs[41].node_labels[0] = 9;
  graphs[9].node_labels[1] = 7;
  for (int threads : {1, 2, 3}) {
    set_parallel_threads(threads);
    for (int round = 0; round < 5; ++round)
      expect_error([&] { model.predict(graphs, 4); }, ErrorCode::kInvalidArgument, "graph 9: node 1 has label 7");
  }
}

TEST(GraphitModel, SingleNodeAndIsolatedNodesAndZeroKernelRowsGiveFiniteOutputs) {
  GraphitConfig c = base_config();
  TestGraphOptions o = base_options();
  std::mt19937 rng(2);
  std::vector<GraphitGraph> graphs;
  graphs.push_back(testing::graph_from_adjacency(Eigen::MatrixXd::Zero(1, 1), {2}, o, rng));           // one node
  graphs.push_back(testing::graph_from_adjacency(Eigen::MatrixXd::Zero(4, 4), {0, 1, 2, 3}, o, rng));  // no edge
  o.adjacency_kernel = true;  // zero kernel rows for the isolated nodes
  Eigen::MatrixXd adj = Eigen::MatrixXd::Zero(4, 4);
  adj(0, 1) = adj(1, 0) = 1;
  graphs.push_back(testing::graph_from_adjacency(adj, {0, 1, 2, 3}, o, rng));
  graphs.push_back(testing::graph_from_adjacency(Eigen::MatrixXd::Zero(3, 3), {0, 0, 0}, o, rng));  // K = 0
  EXPECT_EQ(graphs[3].kernel.squaredNorm(), 0.0f);
  for (const char* norm : {"layer", "batch"}) {
    c.norm = parse_enum(kGraphitNorms, norm, "norm");
    const GraphitModel model = GraphitModel::create(c, 1);
    const MatF out = model.predict(graphs);
    EXPECT_TRUE(out.allFinite()) << norm;
    GraphitParams grads = GraphitParams::zeros(c);
    const std::vector<int32_t> y{0, 1, 0, 1};
    GraphitRunOptions train;
    train.training = true;
    const double loss = model.loss(GraphitBatch::pack(c, graphs, {}, &y), train, &grads);
    EXPECT_TRUE(std::isfinite(loss)) << norm;
    for (const auto& t : grads.tensors(c))
      EXPECT_TRUE(Eigen::Map<const VecF>(t.data, t.size()).allFinite()) << norm << " " << t.name;
    const auto att = model.attention(graphs[2]);
    EXPECT_EQ(att.layers[0].row(2).squaredNorm(), 0.0f) << "an isolated node attends to nothing";
  }
}

TEST(GraphitModel, AttentionMapsAreHeadAveragedRowStochasticAndFollowTheKernel) {
  GraphitConfig c = base_config();
  TestGraphOptions o = base_options();
  o.adjacency_kernel = true;
  std::mt19937 rng(6);
  Eigen::MatrixXd adj = testing::random_adjacency(7, 0.5, rng);
  adj.row(6).setZero();
  adj.col(6).setZero();
  adj(0, 1) = adj(1, 0) = 1;
  const GraphitGraph g = testing::graph_from_adjacency(adj, {0, 1, 2, 3, 0, 1, 2}, o, rng);
  const GraphitModel model = GraphitModel::create(c, 9);
  const auto att = model.attention(g);
  ASSERT_EQ(att.layers.size(), 2u);
  ASSERT_EQ(att.saliency.size(), 2u);
  for (int l = 0; l < 2; ++l) {
    const MatF& a = att.layers[l];
    ASSERT_EQ(a.rows(), 7);
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5) << "row " << i;
    EXPECT_EQ(a.row(6).sum(), 0.0f);
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 7; ++j)
        if (g.kernel(i, j) == 0) {
          EXPECT_EQ(a(i, j), 0.0f) << "attention only where the kernel is non-zero";
        }
    EXPECT_TRUE(att.saliency[l].isApprox(a.colwise().sum().transpose() / 7.0f));
    EXPECT_NEAR(att.saliency[l].sum(), 6.0f / 7.0f, 1e-5) << "one floored (empty) row";
  }
  EXPECT_TRUE(att.mean_saliency.isApprox((att.saliency[0] + att.saliency[1]) / 2.0f));
}

TEST(GraphitModel, SavesAndLoadsBitIdentically) {
  for (const char* norm : {"layer", "batch"}) {
    GraphitConfig c = base_config();
    c.norm = parse_enum(kGraphitNorms, norm, "norm");
    GraphitModel model = GraphitModel::create(c, 12);
    const auto graphs = testing::random_graphs(6, 2, 10, base_options(), 13);
    if (c.norm == GraphitNorm::kBatch) {  // non-trivial running statistics from a few training-mode passes
      GraphitRunOptions run;
      run.training = true;
      run.running = &model.norm_stats;
      for (int k = 0; k < 3; ++k) model.forward(GraphitBatch::pack(c, graphs), run);
      EXPECT_NE(model.norm_stats[0].mean1.squaredNorm(), 0.0f);
    }
    const std::vector<uint8_t> bytes = model.to_bytes();
    const GraphitModel back = GraphitModel::from_bytes(bytes.data(), bytes.size());
    EXPECT_EQ(back.config.to_json(), model.config.to_json());
    const MatF a = model.predict(graphs), b = back.predict(graphs);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(float) * a.size())) << norm;
    EXPECT_EQ(back.to_bytes(), bytes) << "writing is deterministic";
    EXPECT_EQ(back.label_indices({"Cl", "C", "O"}), (std::vector<int32_t>{3, 0, 2}));
    expect_error([&] { back.label_indices({"Br"}); }, ErrorCode::kInvalidArgument, "node label 'Br' (node 0)");

    const std::string path = inductive::testing::temp_path("graphit_model_test.safetensors");
    model.save(path);
    const GraphitModel loaded = GraphitModel::load(path);
    EXPECT_EQ(loaded.to_bytes(), bytes);
    std::remove(path.c_str());
  }
}

TEST(GraphitModel, RejectsOtherKindsNewerVersionsAndCorruptFiles) {
  const GraphitConfig c = base_config();
  const GraphitModel model = GraphitModel::create(c, 1);
  ModelContents contents = model.to_contents();
  // Another kind of model.
  OtkeModel otke;
  otke.config.input_type = OtkeInput::kVectors;
  otke.config.input_dim = 2;
  otke.config.embedding = OtkeEmbedding::kIdentity;
  otke.config.pooling = OtkePooling::kMean;
  const auto obytes = otke.to_bytes();
  expect_error([&] { GraphitModel::from_bytes(obytes.data(), obytes.size()); }, ErrorCode::kBadModelFile,
               "expected a graphit model");
  // A newer format version.
  contents.format_version = kFormatVersion + 1;
  try {
    write_model(contents);
    ADD_FAILURE() << "a newer version must not be written";
  } catch (const Error&) {
  }
  // Build the newer file by patching the header of a valid one.
  std::vector<uint8_t> bytes = model.to_bytes();
  std::string text(bytes.begin(), bytes.end());
  const std::string key = "\"format_version\":\"1\"";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text[at + key.size() - 2] = '9';
  std::vector<uint8_t> newer(text.begin(), text.end());
  expect_error([&] { GraphitModel::from_bytes(newer.data(), newer.size()); }, ErrorCode::kUnsupportedVersion,
               "format_version 9");
  // A missing tensor is named by the schema check.
  contents = model.to_contents();
  contents.format_version = kFormatVersion;
  ModelContents missing = contents;
  missing.tensors.erase(missing.tensors.begin());
  expect_error([&] { write_model(missing); }, ErrorCode::kInvalidArgument, "embedding.weight");
  // NaN weights.
  GraphitModel bad = GraphitModel::create(c, 1);
  bad.params.hidden_bias[0] = NAN;
  const auto nbytes = bad.to_bytes();
  expect_error([&] { GraphitModel::from_bytes(nbytes.data(), nbytes.size()); }, ErrorCode::kBadModelFile,
               "head.hidden.bias contains NaN");
}

}  // namespace
}  // namespace inductive
