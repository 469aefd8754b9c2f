// The GraphiT device pass (native/cuda/graphit_device_pass.h), run by the host executor: the code and the per-item
// functors the CUDA backend launches, checked against the CPU model (GraphitModel::loss, Adam) on every variant. The
// CUDA suite (tests/cuda) runs the same comparisons on a GPU; these run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graphit/graphit_test_util.h"
#include "graphit_device_pass.h"
#include "graphit_exec_host.h"
#include "inductive/adam.h"

namespace inductive {
namespace {

using graphit_device::GraphitDevicePass;
using graphit_device::HostExec;

using Variant = testing::GraphitVariant;
using testing::small_config;

struct Problem {
  GraphitModel model;
  std::vector<GraphitGraph> graphs;
  GraphitBatch batch;
};

// Five graphs of 3-9 nodes; norms and biases moved off their defaults, sharper attention (as the gradient suite).
Problem setup(const Variant& v, uint32_t seed = 12) {
  const GraphitConfig c = small_config(v);
  testing::TestGraphOptions o;
  o.vocab = std::max(1, v.vocab);
  o.features = v.features;
  o.pe = v.pe;
  o.path = v.path;
  Problem s{GraphitModel::create(c, 5), testing::random_graphs(5, 3, 9, o, seed), {}};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (auto& l : s.model.params.layers) {
    for (VecF* p : {&l.norm1_weight, &l.norm1_bias, &l.norm2_weight, &l.norm2_bias, &l.out_bias})
      for (Eigen::Index i = 0; i < p->size(); ++i) (*p)[i] += u(rng);
    l.q_weight *= 3.0f;
  }
  for (auto& st : s.model.norm_stats)
    for (VecF* p : {&st.mean1, &st.mean2})
      for (Eigen::Index i = 0; i < p->size(); ++i) (*p)[i] += u(rng);
  static const std::vector<int32_t> classes{0, 2, 1, 1, 0};
  static const std::vector<float> values{0.5f, -1.0f, 1.5f, 0.2f, -0.3f, 2.0f, 0.0f, 1.0f, -2.0f, 0.7f};
  s.batch = c.classification() ? GraphitBatch::pack(c, s.graphs, {}, &classes)
                               : GraphitBatch::pack(c, s.graphs, {}, nullptr, &values);
  return s;
}

// |a - b| <= tol (|b|max + 1e-3) entry by entry, `b`'s largest magnitude setting the scale of a tensor.
void expect_close(const float* a, const float* b, int64_t n, double tol, const std::string& what) {
  double scale = 1e-3;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!(std::fabs(static_cast<double>(a[i]) - b[i]) <= tol * scale)) {
      if (bad++ < 3) ADD_FAILURE() << what << "[" << i << "]: device pass " << a[i] << ", CPU " << b[i];
    }
}

class GraphitDevicePassTest : public ::testing::TestWithParam<Variant> {};

// Training mode (batch statistics, running statistics, dropout from one seed): the same loss, outputs, gradient of
// every parameter and running statistics as the CPU model.
TEST_P(GraphitDevicePassTest, TrainingStepMatchesTheCpuModel) {
  Problem s = setup(GetParam());
  const GraphitConfig& c = s.model.config;
  HostExec exec;
  GraphitDevicePass<HostExec> pass(exec, s.model);

  GraphitModel cpu = s.model;
  GraphitParams grads = GraphitParams::zeros(c);
  std::mt19937_64 rng_cpu(7), rng_dev(7);
  GraphitRunOptions run;
  run.training = true;
  run.rng = &rng_cpu;
  run.running = c.norm == GraphitNorm::kBatch ? &cpu.norm_stats : nullptr;
  MatF out_cpu, out_dev;
  const double loss_cpu = cpu.loss(s.batch, run, &grads, &out_cpu);

  pass.upload_batch(s.batch, true);
  const double loss_dev = pass.loss(true, &rng_dev, true, &out_dev);
  EXPECT_NEAR(loss_dev, loss_cpu, 1e-5 * std::max(1.0, std::fabs(loss_cpu)));
  expect_close(out_dev.data(), out_cpu.data(), out_cpu.size(), 1e-5, "outputs");
  EXPECT_EQ(rng_dev(), rng_cpu()) << "the device pass drew another number of dropout values";

  const std::vector<float> g = pass.download_gradients();
  const auto views = grads.tensors(c);
  ASSERT_EQ(views.size(), pass.names().size());
  for (size_t t = 0; t < views.size(); ++t) {
    ASSERT_EQ(views[t].name, pass.names()[t]);
    expect_close(g.data() + pass.offset(t), views[t].data, views[t].size(), 1e-4, views[t].name);
  }
  if (c.norm == GraphitNorm::kBatch) {
    GraphitModel pulled = s.model;
    pass.pull_model(pulled);
    for (int l = 0; l < c.layers; ++l) {
      const GraphitNormStats &a = pulled.norm_stats[l], &b = cpu.norm_stats[l];
      expect_close(a.mean1.data(), b.mean1.data(), c.d, 1e-5, "running mean1");
      expect_close(a.var1.data(), b.var1.data(), c.d, 1e-5, "running var1");
      expect_close(a.mean2.data(), b.mean2.data(), c.d, 1e-5, "running mean2");
      expect_close(a.var2.data(), b.var2.data(), c.d, 1e-5, "running var2");
    }
  }
}

// Evaluation mode (running statistics, no dropout): the CPU model's loss and outputs.
TEST_P(GraphitDevicePassTest, EvaluationMatchesTheCpuModel) {
  Problem s = setup(GetParam(), 40);
  HostExec exec;
  GraphitDevicePass<HostExec> pass(exec, s.model);
  MatF out_cpu, out_dev;
  const double loss_cpu = s.model.loss(s.batch, {}, nullptr, &out_cpu);
  pass.upload_batch(s.batch, true);
  const double loss_dev = pass.loss(false, nullptr, false, &out_dev);
  EXPECT_NEAR(loss_dev, loss_cpu, 1e-5 * std::max(1.0, std::fabs(loss_cpu)));
  expect_close(out_dev.data(), out_cpu.data(), out_cpu.size(), 1e-5, "outputs");
}

// Inference without targets, in batches (the last one partial): GraphitModel::predict's outputs.
TEST_P(GraphitDevicePassTest, PredictMatchesTheCpuModel) {
  Problem s = setup(GetParam(), 41);
  HostExec exec;
  const MatF cpu = s.model.predict(s.graphs, 2);
  const MatF dev = graphit_device::device_graphit_predict(exec, s.model, s.graphs, 2);
  ASSERT_EQ(dev.rows(), cpu.rows());
  expect_close(dev.data(), cpu.data(), cpu.size(), 1e-5, "predict");
}

// One graph's attention maps (what `graphit attention --backend cuda` shows): GraphitModel::attention_maps'.
TEST_P(GraphitDevicePassTest, AttentionMapsMatchTheCpuModel) {
  Problem s = setup(GetParam(), 43);
  HostExec exec;
  for (const GraphitGraph& g : s.graphs) {
    MatF cpu_out, dev_out;
    const std::vector<MatF> cpu = s.model.attention_maps(g, &cpu_out);
    const std::vector<MatF> dev = graphit_device::device_graphit_attention_maps(exec, s.model, g, &dev_out);
    ASSERT_EQ(dev.size(), cpu.size());
    ASSERT_EQ(dev_out.size(), cpu_out.size());
    expect_close(dev_out.data(), cpu_out.data(), cpu_out.size(), 1e-5, "outputs of the attention's pass");
    const MatF predicted = s.model.predict({g});  // the pass that explains is the pass that predicts
    expect_close(cpu_out.data(), predicted.data(), predicted.size(), 1e-6, "outputs vs predict");
    for (size_t l = 0; l < cpu.size(); ++l) {
      ASSERT_EQ(dev[l].rows(), g.num_nodes);
      expect_close(dev[l].data(), cpu[l].data(), cpu[l].size(), 1e-5, "attention");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, GraphitDevicePassTest,
                         ::testing::Values(Variant{"kernel_layernorm"}, Variant{"plain_transformer", false},
                                           Variant{"batchnorm", true, GraphitNorm::kBatch},
                                           Variant{"dropout", true, GraphitNorm::kLayer, 0.3},
                                           Variant{"batchnorm_dropout_plain", false, GraphitNorm::kBatch, 0.2},
                                           Variant{"lappe_paths_features", true, GraphitNorm::kLayer, 0.0, 3, 5, 2},
                                           Variant{"dense_features_only", true, GraphitNorm::kBatch, 0.0, 0, 0, 4, 0},
                                           Variant{"regression_sum", true, GraphitNorm::kLayer, 0.1, 2, 0, 0, 4,
                                                   GraphitTask::kRegression, GraphitPooling::kSum},
                                           Variant{"heads_of_16", true, GraphitNorm::kBatch, 0.0, 0, 0, 0, 4,
                                                   GraphitTask::kClassification, GraphitPooling::kMean, 2, 32},
                                           Variant{"heads_of_12", false, GraphitNorm::kLayer, 0.0, 0, 0, 0, 4,
                                                   GraphitTask::kClassification, GraphitPooling::kMean, 2, 24}),
                         [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

// A zero kernel row floors the attention row sum: the device pass sends the row's gradient to its argmax as the CPU.
TEST(GraphitDevicePass, FlooredAttentionRowsMatchTheCpuModel) {
  Problem s = setup(Variant{"floored"});
  for (GraphitGraph& g : s.graphs) g.kernel.row(0).setZero();
  const GraphitConfig& c = s.model.config;
  static const std::vector<int32_t> classes{0, 2, 1, 1, 0};
  s.batch = GraphitBatch::pack(c, s.graphs, {}, &classes);
  HostExec exec;
  GraphitDevicePass<HostExec> pass(exec, s.model);
  GraphitParams grads = GraphitParams::zeros(c);
  GraphitRunOptions run;
  run.training = true;
  const double loss_cpu = s.model.loss(s.batch, run, &grads);
  pass.upload_batch(s.batch, true);
  EXPECT_NEAR(pass.loss(true, nullptr, true, nullptr), loss_cpu, 1e-5);
  const std::vector<float> g = pass.download_gradients();
  const auto views = grads.tensors(c);
  for (size_t t = 0; t < views.size(); ++t)
    expect_close(g.data() + pass.offset(t), views[t].data, views[t].size(), 1e-4, views[t].name);
}

// The batch's two slots (how a step's prefetch reaches the device while the step computes): a batch staged while
// another is current leaves the current one's passes alone until use_staged, and a second stage_batch before
// use_staged replaces the first.
TEST(GraphitDevicePass, AStagedBatchWaitsInTheOtherSlotUntilUsed) {
  const Variant v{"slots", true, GraphitNorm::kLayer};
  Problem a = setup(v, 50), b = setup(v, 51), c = setup(v, 52);
  MatF out_a, out_b, out_c;
  a.model.loss(a.batch, {}, nullptr, &out_a);
  a.model.loss(b.batch, {}, nullptr, &out_b);
  a.model.loss(c.batch, {}, nullptr, &out_c);
  ASSERT_GT((out_a - out_b).norm(), 1e-3);  // the batches tell themselves apart
  HostExec exec;
  GraphitDevicePass<HostExec> pass(exec, a.model);
  pass.upload_batch(a.batch, true);
  MatF out;
  for (const GraphitBatch* staged : {&c.batch, &b.batch}) {
    pass.stage_batch(*staged, true);
    pass.loss(false, nullptr, false, &out);
    expect_close(out.data(), out_a.data(), out_a.size(), 1e-5, "current batch while another is staged");
  }
  pass.use_staged();
  pass.loss(false, nullptr, false, &out);
  ASSERT_EQ(out.rows(), out_b.rows());
  expect_close(out.data(), out_b.data(), out_b.size(), 1e-5, "the last staged batch, once used");
  pass.stage_batch(c.batch, true);  // back into the first slot
  pass.use_staged();
  pass.loss(false, nullptr, false, &out);
  expect_close(out.data(), out_c.data(), out_c.size(), 1e-5, "a third batch, in the first slot again");
}

// Two AdamW steps on the device pass's gradients: the parameters and moments the CPU's Adam gives on the same
// gradients, and pull/push of the moments keep them (a resumed checkpoint). LayerNorm: under BatchNorm the biases
// before a norm have a gradient that is 0 in exact arithmetic, and Adam turns its rounding noise into full steps.
TEST(GraphitDevicePass, AdamStepsMatchTheCpuOptimiser) {
  Problem s = setup(Variant{"adam"});
  const GraphitConfig& c = s.model.config;
  HostExec exec;
  GraphitDevicePass<HostExec> pass(exec, s.model);
  GraphitModel cpu = s.model;
  Adam adam_cpu({1e-2, 0.9, 0.999, 1e-8, 1e-3}), adam_dev({1e-2, 0.9, 0.999, 1e-8, 1e-3});
  pass.upload_batch(s.batch, true);
  for (int step = 0; step < 2; ++step) {
    GraphitParams grads = GraphitParams::zeros(c);
    GraphitRunOptions run;
    run.training = true;
    cpu.loss(s.batch, run, &grads);
    std::vector<ParamBlock> blocks;
    const auto pv = cpu.params.tensors(c);
    const auto gv = grads.tensors(c);
    for (size_t t = 0; t < pv.size(); ++t) blocks.push_back({pv[t].name, pv[t].data, gv[t].data, pv[t].size(), true});
    adam_cpu.step(blocks);

    pass.loss(true, nullptr, true, nullptr);
    adam_dev.step({});  // the count and its constants only (no host blocks)
    pass.adam_step(adam_dev.coefficients());
  }
  GraphitModel pulled = s.model;
  pass.pull_model(pulled);
  const auto a = pulled.params.tensors(c);
  const auto b = cpu.params.tensors(c);
  for (size_t t = 0; t < a.size(); ++t) expect_close(a[t].data, b[t].data, a[t].size(), 1e-4, a[t].name);

  const std::vector<Adam::Moments> moments = pass.pull_moments();
  ASSERT_EQ(moments.size(), adam_cpu.moments().size());
  for (size_t t = 0; t < moments.size(); ++t) {
    ASSERT_EQ(moments[t].name, adam_cpu.moments()[t].name);
    expect_close(moments[t].m.data(), adam_cpu.moments()[t].m.data(), moments[t].m.size(), 1e-4,
                 moments[t].name + ".m");
    expect_close(moments[t].v.data(), adam_cpu.moments()[t].v.data(), moments[t].v.size(), 1e-4,
                 moments[t].name + ".v");
  }
  Adam restored;
  restored.restore(moments, 2);
  GraphitDevicePass<HostExec> again(exec, pulled);
  again.push_moments(restored);
  const std::vector<Adam::Moments> round_trip = again.pull_moments();
  for (size_t t = 0; t < moments.size(); ++t) EXPECT_EQ(round_trip[t].m, moments[t].m) << moments[t].name;
}

}  // namespace
}  // namespace inductive
