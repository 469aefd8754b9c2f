// GraphiT gradients: every parameter's gradient matches central finite differences of the loss, for each
// variant (kernel on/off, LayerNorm/BatchNorm in training mode, LapPE, path features, dense features,
// classification/regression, sum/mean pooling, one or several heads), including rows where the attention
// row-sum floor is active.
//
// The model computes in float32; the check stays meaningful with a small model (d = 8), a step of 3e-3, loss
// sums in double, and a per-tensor test on the norm of the error over the sampled entries (a missing term or a
// wrong sign gives O(1) relative errors; float rounding gives ~1e-3), besides a per-entry bound.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "graphit_test_util.h"
#include "inductive/graphit.h"
#include "inductive/parallel.h"

namespace inductive {
namespace {

using testing::TestGraphOptions;

using Variant = testing::GraphitVariant;
using testing::small_config;

// The non-smooth points of the loss: ReLU activity (FFN and head), floored attention rows and their argmax,
// the sign of regression residuals. A central difference whose two sides differ here straddles a kink and is
// skipped (the analytic gradient is a one-sided one there).
std::vector<int> kink_pattern(const GraphitModel& model, const GraphitBatch& batch, const GraphitRunOptions& run) {
  GraphitCache cache;
  const MatF out = model.forward(batch, run, &cache);
  std::vector<int> p;
  for (const auto& l : cache.layers) {
    for (Eigen::Index i = 0; i < l.ffn.size(); ++i) p.push_back(l.ffn.data()[i] > 0);
    for (size_t i = 0; i < l.floored.size(); ++i) p.push_back(l.floored[i] ? 1 + l.argmax[i] : 0);
  }
  for (Eigen::Index i = 0; i < cache.hidden.size(); ++i) p.push_back(cache.hidden.data()[i] > 0);
  if (!model.config.classification())
    for (Eigen::Index i = 0; i < out.size(); ++i) p.push_back(out.data()[i] > batch.values[i]);
  return p;
}

struct GradCheck {
  int checked = 0, skipped = 0;
  double grad_norm2 = 0;
  std::vector<std::string> bad;     // tensors (or entries) whose gradient disagrees with the differences
  std::vector<std::string> short_;  // tensors with fewer checked entries than asked for (all straddled kinks)
};

// Compares `grads` (the analytic gradient at the model's parameters) with central differences of the loss, on
// up to 10 entries per tensor: per entry within 5e-5 (2e-3 / h) + 2%, and per tensor an error norm within 1% of
// the gradient's norm plus the float noise floor of the differences: the loss is accurate to ~1e-7, so a difference
// is off by up to 5e-5 (2e-3 / h), and its root mean square, 3e-5 (2e-3 / h) per entry, is the floor (2e-5 sat
// at the rounding of a build compiled for AVX-512 at -O1, ASan's: a tensor whose gradient is itself 1e-4 failed on
// rounding alone, 7.1e-5 against 6.4e-5, with every entry within its bound).
//
// Steps and probes are picked away from kinks. A central difference whose two sides straddle one (a ReLU or max
// switching anywhere in the network, see kink_pattern) is no test of the one-sided analytic gradient there; which
// ones straddle depends on float rounding, hence on the build (the wasm and ASan builds straddled far more often),
// and a parameter that moves every node (a bias) straddles often. So a straddling difference is retried with
// smaller steps (h = 2e-3, 1e-3, 5e-4, 2.5e-4: a kink within h of the point becomes proportionally rarer), and an
// entry that straddles at every step is replaced by the next candidate (entries in a fixed stride order, then
// shifted by one, ...; up to 4 candidates per wanted entry). The number checked is then the same in every build.
// `dropout_seed` (non-zero): dropout on, every loss evaluated with the masks of an rng seeded with it (the same masks
// each time, so the differences see the gradient of a fixed mask).
GradCheck compare_gradients(GraphitModel& model, const GraphitBatch& batch, const GraphitParams& grads,
                            uint64_t dropout_seed = 0) {
  GraphitRunOptions plain;
  plain.training = true;  // BatchNorm uses the batch statistics; no rng: no dropout
  std::mt19937_64 masks;
  const auto run = [&]() -> GraphitRunOptions {
    GraphitRunOptions r = plain;
    if (dropout_seed != 0) masks.seed(dropout_seed), r.rng = &masks;
    return r;
  };
  GradCheck out;
  const auto views = model.params.tensors(model.config);
  const auto gviews = grads.tensors(model.config);
  const float steps[] = {2e-3f, 1e-3f, 5e-4f, 2.5e-4f};
  for (size_t t = 0; t < views.size(); ++t) {
    const auto& v = views[t];
    const float* g = gviews[t].data;
    const int64_t size = v.size();
    const int64_t stride = std::max<int64_t>(1, size / 10);
    const int64_t wanted = std::min<int64_t>(10, size);
    double err2 = 0, ref2 = 0, noise2 = 0;
    int n_entries = 0;
    int64_t tried = 0;
    for (int64_t shift = 0; shift < stride && n_entries < wanted && tried < 4 * wanted; ++shift) {
      for (int64_t i = ((t * 7) + shift) % stride; i < size && n_entries < wanted && tried < 4 * wanted; i += stride) {
        ++tried;
        const float keep = v.data[i];
        double fd = 0, scale = 0;
        for (const float h : steps) {
          v.data[i] = keep + h;
          const double lp = model.loss(batch, run());
          const auto kp = kink_pattern(model, batch, run());
          v.data[i] = keep - h;
          const double lm = model.loss(batch, run());
          const auto km = kink_pattern(model, batch, run());
          v.data[i] = keep;
          if (kp == km) {
            fd = (lp - lm) / (2.0 * h);
            scale = 2e-3 / h;
            break;
          }
        }
        if (scale == 0) {
          ++out.skipped;
          continue;
        }
        ++out.checked;
        ++n_entries;
        if (std::fabs(g[i] - fd) > 5e-5 * scale + 2e-2 * std::fabs(fd))
          out.bad.push_back(v.name + "[" + std::to_string(i) + "]: " + std::to_string(g[i]) + " vs " +
                            std::to_string(fd));
        err2 += (g[i] - fd) * (g[i] - fd);
        ref2 += fd * fd;
        noise2 += (3e-5 * scale) * (3e-5 * scale);
      }
    }
    if (n_entries < std::min<int64_t>(wanted, 5))
      out.short_.push_back(v.name + " (" + std::to_string(n_entries) + " of " + std::to_string(tried) + " tried)");
    out.grad_norm2 += ref2;
    if (std::sqrt(err2) > 1e-2 * std::sqrt(ref2) + std::sqrt(noise2))
      out.bad.push_back(v.name + ": error norm " + std::to_string(std::sqrt(err2)) + " for gradient norm " +
                        std::to_string(std::sqrt(ref2)));
  }
  return out;
}

// Checks the gradient of every parameter tensor of `model` on `batch` against central differences.
void check_gradients(GraphitModel& model, const GraphitBatch& batch, const std::string& what,
                     uint64_t dropout_seed = 0) {
  GraphitRunOptions run;
  run.training = true;
  std::mt19937_64 masks(dropout_seed);
  if (dropout_seed != 0) run.rng = &masks;
  GraphitParams grads = GraphitParams::zeros(model.config);
  ASSERT_TRUE(std::isfinite(model.loss(batch, run, &grads))) << what;
  const GradCheck r = compare_gradients(model, batch, grads, dropout_seed);
  for (const std::string& b : r.bad) ADD_FAILURE() << what << ": " << b;
  EXPECT_GT(r.grad_norm2, 1e-6) << what << ": the loss should depend on the parameters";
  // Every tensor gets at least 5 checked entries (or all of its entries, when it has fewer), kinks or not.
  for (const std::string& s : r.short_) ADD_FAILURE() << what << ": too few entries away from kinks in " << s;
}

class GraphitGradient : public ::testing::TestWithParam<Variant> {};

TEST_P(GraphitGradient, MatchesFiniteDifferencesForEveryParameter) {
  const Variant v = GetParam();
  const GraphitConfig c = small_config(v);
  TestGraphOptions o;
  o.vocab = std::max(1, v.vocab);
  o.features = v.features;
  o.pe = v.pe;
  o.path = v.path;
  o.adjacency_kernel = v.adjacency_kernel;
  const auto graphs = testing::random_graphs(3, 3, 6, o, 12);
  GraphitModel model = GraphitModel::create(c, 5);
  // Non-trivial norms (the defaults 1 and 0 hide errors in their gradients' use).
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (auto& l : model.params.layers)
    for (VecF* p : {&l.norm1_weight, &l.norm1_bias, &l.norm2_weight, &l.norm2_bias, &l.out_bias})
      for (Eigen::Index i = 0; i < p->size(); ++i) (*p)[i] += u(rng);
  // Sharper attention: larger gradients w.r.t. the queries, well above the float noise of the differences.
  for (auto& l : model.params.layers) l.q_weight *= 3.0f;
  const std::vector<int32_t> classes{0, 2, 1};
  const std::vector<float> values{0.5f, -1.0f, 1.5f, 0.2f, -0.3f, 2.0f};
  const GraphitBatch batch = c.classification() ? GraphitBatch::pack(c, graphs, {}, &classes)
                                                : GraphitBatch::pack(c, graphs, {}, nullptr, &values);
  check_gradients(model, batch, v.name);
}

INSTANTIATE_TEST_SUITE_P(GraphitVariants, GraphitGradient,
                         ::testing::Values(Variant{"kernel_layernorm"}, Variant{"plain_transformer", false},
                                           Variant{"batchnorm", true, GraphitNorm::kBatch, 0.0},
                                           Variant{"lappe", true, GraphitNorm::kLayer, 0.0, 3},
                                           Variant{"path_features", true, GraphitNorm::kLayer, 0.0, 0, 5},
                                           Variant{"dense_features_only", true, GraphitNorm::kLayer, 0.0, 0, 0, 4, 0},
                                           Variant{"regression_sum", true, GraphitNorm::kLayer, 0.0, 2, 0, 0, 4,
                                                   GraphitTask::kRegression, GraphitPooling::kSum},
                                           Variant{"one_head_batchnorm_plain", false, GraphitNorm::kBatch, 0.0, 0, 0, 0,
                                                   4, GraphitTask::kClassification, GraphitPooling::kSum, 1},
                                           Variant{"four_heads_everything", true, GraphitNorm::kBatch, 0.0, 2, 3, 2, 4,
                                                   GraphitTask::kClassification, GraphitPooling::kMean, 4},
                                           Variant{"adjacency_kernel", true, GraphitNorm::kLayer, 0.0, 0, 0, 0, 4,
                                                   GraphitTask::kClassification, GraphitPooling::kMean, 2, 8, true},
                                           Variant{"heads_of_16", true, GraphitNorm::kBatch, 0.0, 0, 0, 0, 4,
                                                   GraphitTask::kClassification, GraphitPooling::kMean, 2, 32, false},
                                           Variant{"heads_of_32", true, GraphitNorm::kLayer, 0.0, 0, 0, 0, 4,
                                                   GraphitTask::kRegression, GraphitPooling::kMean, 1, 32, false},
                                           Variant{"heads_of_12", false, GraphitNorm::kLayer, 0.0, 0, 0, 0, 4,
                                                   GraphitTask::kClassification, GraphitPooling::kMean, 2, 24, false}),
                         [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

// The check is able to fail: small errors planted in the analytic gradient (5% on the values, 10% on the queries,
// a dropped term in a norm's bias, a sign flip on one entry of the embedding) are each reported.
TEST(GraphitGradient, TheCheckDetectsPlantedErrors) {
  const GraphitConfig c = small_config(Variant{"planted", false});
  TestGraphOptions o;
  const auto graphs = testing::random_graphs(3, 3, 6, o, 12);
  GraphitModel model = GraphitModel::create(c, 5);
  for (auto& l : model.params.layers) l.q_weight *= 3.0f;
  const std::vector<int32_t> classes{0, 2, 1};
  const GraphitBatch batch = GraphitBatch::pack(c, graphs, {}, &classes);
  GraphitRunOptions run;
  run.training = true;
  GraphitParams grads = GraphitParams::zeros(c);
  model.loss(batch, run, &grads);
  ASSERT_TRUE(compare_gradients(model, batch, grads).bad.empty());
  auto planted = [&](auto&& corrupt, const std::string& name) {
    GraphitParams g = grads;
    corrupt(g);
    const GradCheck r = compare_gradients(model, batch, g);
    bool found = false;
    for (const auto& b : r.bad) found |= b.compare(0, name.size(), name) == 0;
    EXPECT_TRUE(found) << "a planted error in " << name << " went unnoticed";
  };
  planted([](GraphitParams& g) { g.layers[1].v_weight *= 1.05f; }, "layers.1.attn.v.weight");
  planted([](GraphitParams& g) { g.layers[0].q_weight *= 1.1f; }, "layers.0.attn.q.weight");
  planted([](GraphitParams& g) { g.layers[0].norm2_bias.setZero(); }, "layers.0.norm2.bias");
  planted([](GraphitParams& g) { g.embedding(0, 0) *= -1.0f; }, "embedding.weight");
}

// A kernel with all-zero rows (an isolated node under the adjacency kernel D^-1/2 A D^-1/2) makes
// rowsum(E ⊙ K) = 0 < 1e-6: the floor is active, the output stays finite, and the gradient through the floored
// rows (which keeps the dependence on the row max) is still exact.
TEST(GraphitGradient, FlooredRowsAreFiniteAndExact) {
  Variant v{"floored"};
  const GraphitConfig c = small_config(v);
  TestGraphOptions o;
  o.adjacency_kernel = true;
  std::mt19937 rng(4);
  std::vector<GraphitGraph> graphs;
  Eigen::MatrixXd adj = Eigen::MatrixXd::Zero(5, 5);
  adj(0, 1) = adj(1, 0) = adj(1, 2) = adj(2, 1) = 1;  // nodes 3 and 4 isolated
  graphs.push_back(testing::graph_from_adjacency(adj, {0, 1, 2, 3, 0}, o, rng));
  // A tiny but non-zero kernel row: the floor is active with a non-zero numerator.
  graphs.push_back(testing::graph_from_adjacency(adj, {1, 1, 2, 0, 3}, o, rng));
  graphs[1].kernel.row(3).setConstant(1e-8f);
  graphs[1].kernel(3, 3) = 0;
  ASSERT_EQ(graphs[0].kernel.row(3).sum(), 0.0f);
  GraphitModel model = GraphitModel::create(c, 8);
  const std::vector<int32_t> classes{1, 2};
  const GraphitBatch batch = GraphitBatch::pack(c, graphs, {}, &classes);
  GraphitCache cache;
  const MatF out = model.forward(batch, {}, &cache);
  EXPECT_TRUE(out.allFinite());
  EXPECT_EQ(cache.layers[0].floored[3], 1) << "graph 0, head 0, row 3 is floored";
  check_gradients(model, batch, "floored");
}

// A diverged model (NaN weights) gives a NaN loss and gradients, and its floored rows' argmax stays a column of the
// row: the backward writes the max's gradient there.
TEST(GraphitGradient, ADivergedModelGivesNaNWithArgmaxInsideEachRow) {
  const GraphitConfig c = small_config(Variant{"diverged"});
  TestGraphOptions o;
  const auto graphs = testing::random_graphs(3, 3, 6, o, 31);
  GraphitModel model = GraphitModel::create(c, 3);
  model.params.layers[0].q_weight.setConstant(std::nanf(""));
  const std::vector<int32_t> classes{0, 1, 2};
  const GraphitBatch batch = GraphitBatch::pack(c, graphs, {}, &classes);
  GraphitRunOptions run;
  run.training = true;
  GraphitParams grads = GraphitParams::zeros(c);
  GraphitCache cache;
  EXPECT_TRUE(std::isnan(model.loss(batch, run, &grads, nullptr, &cache)));
  const int H = c.heads;
  for (const auto& layer : cache.layers)
    for (int g = 0; g < batch.n_graphs; ++g)
      for (int r = 0; r < H * batch.size(g); ++r) {
        const size_t at = static_cast<size_t>(batch.offsets[g]) * H + r;
        if (!layer.floored[at]) continue;
        EXPECT_GE(layer.argmax[at], 0);
        EXPECT_LT(layer.argmax[at], batch.size(g)) << "graph " << g << ", row " << r;
      }
  EXPECT_TRUE(cache.layers[0].floored[0]) << "NaN scores make every row sum NaN: floored";
}

TEST(GraphitGradient, DropoutMasksAreReusedByBackward) {
  // With dropout, the gradient of a fixed mask: re-seeding the rng before every forward gives the same masks.
  Variant v{"dropout"};
  GraphitConfig c = small_config(v);
  c.dropout = 0.2;
  TestGraphOptions o;
  const auto graphs = testing::random_graphs(2, 4, 6, o, 21);
  GraphitModel model = GraphitModel::create(c, 2);
  const std::vector<int32_t> classes{0, 1};
  const GraphitBatch batch = GraphitBatch::pack(c, graphs, {}, &classes);
  auto loss_at = [&](GraphitParams* grads) {
    std::mt19937_64 rng(77);
    GraphitRunOptions run;
    run.training = true;
    run.rng = &rng;
    return model.loss(batch, run, grads);
  };
  GraphitParams grads = GraphitParams::zeros(c);
  loss_at(&grads);
  const float h = 3e-3f;
  auto views = model.params.tensors(c);
  auto gviews = grads.tensors(c);
  int checked = 0;
  for (size_t t = 0; t < views.size(); t += 3) {
    float* x = views[t].data;
    const float keep = x[0];
    x[0] = keep + h;
    const double lp = loss_at(nullptr);
    x[0] = keep - h;
    const double lm = loss_at(nullptr);
    x[0] = keep;
    const double fd = (lp - lm) / (2.0 * h);
    EXPECT_NEAR(gviews[t].data[0], fd, 2e-3 + 3e-2 * std::fabs(fd)) << views[t].name;
    ++checked;
  }
  EXPECT_GT(checked, 5);
  // Every tensor, as the variants are checked, with the masks fixed: the attention's mask (A ⊙ M) enters both dV and
  // dA, which the loose first-entry check above does not single out.
  check_gradients(model, batch, "dropout", 77);
  // Dropout is really on: two different rngs give different losses.
  std::mt19937_64 r1(1), r2(2);
  GraphitRunOptions a, b;
  a.training = b.training = true;
  a.rng = &r1;
  b.rng = &r2;
  EXPECT_NE(model.loss(batch, a), model.loss(batch, b));
}

// Threads split the batch's rows and graphs (graphit_gemm.h, parallel.h), never the arithmetic of a sum: the loss,
// every gradient and the evaluation pass's predictions are the same bits on 1, 2 or 3 threads, with either norm
// (their row passes are split too). A batch of ~960 rows is split into 128-row product blocks and 3 gradient
// blocks, so on a machine with 2 or more cores the threads do share its products. Two widths: at d 32 Eigen's
// result for a row can depend on where its block starts. (Before 2026-11-29 the blocks were one per thread, and 1
// and 2 threads differed in the last bits.)
TEST(GraphitGradient, TheSameBitsOnOneThreadAsOnSeveral) {
  struct CapGuard {
    ~CapGuard() { set_parallel_threads(0); }
  } guard;
  for (const auto& [d, norm] :
       {std::pair{32, GraphitNorm::kBatch}, std::pair{64, GraphitNorm::kBatch}, std::pair{64, GraphitNorm::kLayer}}) {
    GraphitConfig c = GraphitConfig::with_dim(d, 2, 4);
    c.vocab = 4;
    c.pe_dim = 2;
    c.norm = norm;
    c.outputs = 3;
    TestGraphOptions o;
    o.pe = 2;
    const auto graphs = testing::random_graphs(48, 15, 25, o, 21);
    std::vector<int32_t> classes;
    for (size_t g = 0; g < graphs.size(); ++g) classes.push_back(static_cast<int32_t>(g % 3));
    const GraphitBatch batch = GraphitBatch::pack(c, graphs, {}, &classes);
    ASSERT_GE(batch.n_nodes, 768);
    GraphitModel model = GraphitModel::create(c, 9);
    auto run_on = [&](int threads, GraphitParams& grads) {
      set_parallel_threads(threads);
      GraphitRunOptions run;
      run.training = true;
      grads = GraphitParams::zeros(c);
      return model.loss(batch, run, &grads);
    };
    GraphitParams one, several;
    const double loss1 = run_on(1, one);
    const MatF predicted1 = model.predict(graphs);
    for (int threads : {2, 3}) {
      const double loss = run_on(threads, several);
      const MatF predicted = model.predict(graphs);
      ASSERT_EQ(predicted.size(), predicted1.size());
      EXPECT_EQ(std::memcmp(predicted.data(), predicted1.data(), sizeof(float) * predicted.size()), 0)
          << "predictions, d " << d << ", " << threads << " threads";
      EXPECT_EQ(std::memcmp(&loss, &loss1, sizeof loss), 0) << "d " << d << ", " << threads << " threads";
      const auto a = one.tensors(c);
      const auto b = several.tensors(c);
      for (size_t t = 0; t < a.size(); ++t)
        EXPECT_EQ(std::memcmp(a[t].data, b[t].data, sizeof(float) * static_cast<size_t>(a[t].size())), 0)
            << a[t].name << ", d " << d << ", " << threads << " threads";
    }
  }
}

// Without statistics across the batch (LayerNorm; BatchNorm in evaluation) the backward pass sends chunks of graphs
// down each layer and then takes that layer's weight gradients (GraphitModel::backward_by_chunks): it gives the
// pass-by-pass schedule's gradients, every tensor bit for bit, on 1 and 2 threads, with dropout, LapPE and paths.
TEST(GraphitGradient, ChunkedBackwardGivesThePassByPassGradientsBitForBit) {
  struct CapGuard {
    ~CapGuard() { set_parallel_threads(0); }
  } guard;
  for (const auto& [norm, training] : {std::pair{GraphitNorm::kLayer, true}, std::pair{GraphitNorm::kBatch, false}}) {
    GraphitConfig c = GraphitConfig::with_dim(32, 2, 4);
    c.vocab = 4;
    c.pe_dim = 2;
    c.path_dim = 3;
    c.norm = norm;
    c.dropout = training ? 0.2 : 0.0;
    c.outputs = 3;
    TestGraphOptions o;
    o.pe = 2;
    o.path = 3;
    const auto graphs = testing::random_graphs(30, 5, 25, o, 33);
    std::vector<int32_t> classes;
    for (size_t g = 0; g < graphs.size(); ++g) classes.push_back(static_cast<int32_t>(g % 3));
    const GraphitBatch batch = GraphitBatch::pack(c, graphs, {}, &classes);
    ASSERT_GT(batch.n_nodes, 3 * 64);  // several chunks
    const GraphitModel model = GraphitModel::create(c, 4);
    for (int threads : {1, 2}) {
      set_parallel_threads(threads);
      std::mt19937_64 rng(5);
      GraphitRunOptions run;
      run.training = training;
      run.rng = &rng;
      GraphitCache cache;
      const MatF out = model.forward(batch, run, &cache);
      ASSERT_EQ(out.rows(), batch.n_graphs);
      // Both schedules from the same gradient at the last layer's output, into fresh gradients.
      MatF dx(batch.n_nodes, c.d);
      dx.setRandom();
      MatF dx2 = dx;
      GraphitParams g1 = GraphitParams::zeros(c), g2 = GraphitParams::zeros(c);
      model.backward_by_chunks(batch, cache, dx, g1);
      model.backward_by_passes(batch, cache, dx2, g2);
      EXPECT_EQ(std::memcmp(dx.data(), dx2.data(), sizeof(float) * static_cast<size_t>(dx.size())), 0)
          << "input gradient, " << threads << " threads";
      const auto a = g1.tensors(c), b = g2.tensors(c);
      int compared = 0;
      for (size_t t = 0; t < a.size(); ++t) {
        EXPECT_EQ(std::memcmp(a[t].data, b[t].data, sizeof(float) * static_cast<size_t>(a[t].size())), 0)
            << a[t].name << ", " << threads << " threads";
        compared += a[t].name.rfind("layers.", 0) == 0;
      }
      EXPECT_GT(compared, 20);
    }
  }
}

}  // namespace
}  // namespace inductive
