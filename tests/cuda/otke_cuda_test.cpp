// OTKE training on the CUDA backend held to the CPU reference: the Sinkhorn tape and unrolled backward, and the
// implicit backward, on masked batches of every work-split class, the whole step's loss and gradients for each
// supported variant (identity, Nystrom and conv embeddings, keep_norm, q > 1, positional weighting, both scales, the
// mean/max pooling baselines, tokens, MLP heads with dropout), Adam, logits, a 3-epoch training run and its
// checkpoint/resume, and the errors (unsupported configurations, no device, out of device memory with the checkpoint
// left intact). Tests that need a device skip with a message when there is none; the error tests without a device run
// everywhere.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "../core/test_util.h"
#include "../core/thread_ranks.h"
#include "../device/sinkhorn_implicit_case.h"
#include "cuda_backend.h"
#include "cuda_test_util.h"
#include "cuda_util.h"
#include "inductive/backend_registry.h"
#include "inductive/communicator.h"
#include "inductive/otke_stepper.h"
#include "inductive/otke_train.h"
#include "inductive/sinkhorn.h"
#include "nccl_allreduce.h"
#include "otke_stepper_cuda.h"
#include "sinkhorn_kernels.h"

namespace inductive {
namespace {

using testing::expect_error;

using testing::cuda_device_present;

// ||a - b|| / ||b|| over every entry (padding included: both must hold 0 there).
double rel_error(const float* a, const float* b, size_t size) {
  double num = 0, den = 0;
  for (size_t i = 0; i < size; ++i) {
    if (!std::isfinite(a[i])) return std::numeric_limits<double>::infinity();
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}
double rel_error(const MatF& a, const MatF& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  return rel_error(a.data(), b.data(), static_cast<size_t>(a.size()));
}

template <typename T>
cuda::DeviceBuffer to_device(const std::vector<T>& v) {
  cuda::DeviceBuffer d(v.size() * sizeof(T));
  cuda::check(cudaMemcpy(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}
template <typename T>
std::vector<T> to_host(const cuda::DeviceBuffer& d, size_t count) {
  std::vector<T> v(count);
  cuda::check(cudaMemcpy(v.data(), d.data(), count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return v;
}

// ---- Sinkhorn: tape and unrolled backward -----------------------------------------------------------------------

struct BackwardCase {
  int batch, n_max, p_max;
  double eps;
  int iters;
};

void check_backward(const BackwardCase& c, uint32_t seed) {
  SCOPED_TRACE("batch " + std::to_string(c.batch) + " n " + std::to_string(c.n_max) + " p " + std::to_string(c.p_max) +
               " eps " + std::to_string(c.eps));
  const size_t size = static_cast<size_t>(c.batch) * c.n_max * c.p_max;
  std::vector<float> sim = testing::random_vector<float>(size, seed, -1, 1);
  const std::vector<float> dplan = testing::random_vector<float>(size, seed + 1, -1, 1);
  std::vector<int32_t> n(c.batch), p(c.batch);
  const auto rn = testing::random_vector<double>(c.batch, seed + 2),
             rp = testing::random_vector<double>(c.batch, seed + 3);
  for (int b = 0; b < c.batch; ++b) {
    n[b] = b == 0 ? c.n_max : 1 + static_cast<int32_t>(rn[b] * (c.n_max - 1));
    p[b] = b == 0 ? c.p_max : 1 + static_cast<int32_t>(rp[b] * (c.p_max - 1));
  }
  SinkhornOptions o;
  o.eps = c.eps;
  o.max_iter = c.iters;
  o.similarity = true;
  const SinkhornProblem<float> pr{sim.data(), c.batch, c.n_max, c.p_max, n.data(), p.data(), nullptr, nullptr};
  std::vector<float> plan(size), grad(size);
  SinkhornTape<float> tape;
  sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data()}, &tape);
  sinkhorn_log_backward(pr, o, tape, plan.data(), dplan.data(), grad.data());

  cuda::DeviceBuffer ds = to_device(sim), ddp = to_device(dplan), dn = to_device(n), dp = to_device(p);
  cuda::DeviceBuffer dplan_out(size * sizeof(float)), dgrad(size * sizeof(float));
  cuda::DeviceBuffer dtape(static_cast<size_t>(c.batch) * c.iters * (c.n_max + c.p_max) * sizeof(float));
  cuda::check(cudaMemset(dgrad.data(), 0xff, dgrad.bytes()), "cudaMemset");  // NaN: unwritten entries show
  SinkhornProblem<float> dpr = pr;
  dpr.cost = ds.as<float>();
  dpr.n = dn.as<int32_t>();
  dpr.p = dp.as<int32_t>();
  cuda::SinkhornLaunch launch;
  launch.tape = dtape.as<float>();
  cuda::DeviceBuffer work(cuda::sinkhorn_workspace_bytes(c.batch, c.n_max, c.p_max, launch));
  cuda::sinkhorn_log_device(dpr, o, SinkhornOutput<float>{dplan_out.as<float>()}, work.data(), work.bytes(), launch);
  cuda::sinkhorn_log_backward_device(dpr, o, dtape.as<float>(), dplan_out.as<float>(), ddp.as<float>(),
                                     dgrad.as<float>(), nullptr);
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::vector<float> gplan = to_host<float>(dplan_out, size), ggrad = to_host<float>(dgrad, size);
  EXPECT_LE(rel_error(gplan.data(), plan.data(), size), 1e-5);
  // Relative to the gradient's natural scale, |dP o P| / eps: with p = 1 the plan does not depend on the
  // similarities at all and both gradients are rounding noise around 0.
  double natural = 0, diff = 0;
  for (size_t e = 0; e < size; ++e) {
    natural += std::pow(double(dplan[e]) * plan[e] / c.eps, 2);
    diff += std::pow(double(ggrad[e]) - grad[e], 2);
    ASSERT_TRUE(std::isfinite(ggrad[e])) << "gradient entry " << e << " not written or not finite";
  }
  EXPECT_LE(std::sqrt(diff), 1e-4 * std::max(std::sqrt(natural), 1e-30)) << "natural scale " << std::sqrt(natural);
  if (c.p_max > 1) EXPECT_LE(rel_error(ggrad.data(), grad.data(), size), 1e-4);
  for (int b = 0; b < c.batch; ++b)
    for (int i = 0; i < c.n_max; ++i)
      for (int j = 0; j < c.p_max; ++j)
        if (i >= n[b] || j >= p[b]) {
          ASSERT_EQ(ggrad[(static_cast<size_t>(b) * c.n_max + i) * c.p_max + j], 0.0f)
              << "padding " << b << "," << i << "," << j;
        }
}

TEST(CudaSinkhornBackward, MatchesTheCpuUnrolledGradientOnMaskedBatchesOfEveryShapeClass) {
  REQUIRE_CUDA_DEVICE();
  // p = 1, narrow (many row slices per column), OTKE's p = 64 and p = 10, wide (p > 512: several columns a thread),
  // n = 1, small eps (large logits), many iterations.
  const BackwardCase cases[] = {{3, 17, 1, 0.5, 10},    {5, 37, 7, 0.5, 10},  {4, 300, 64, 0.5, 10},
                                {4, 1000, 10, 0.5, 10}, {2, 50, 600, 0.5, 5}, {3, 1, 9, 0.5, 10},
                                {3, 40, 16, 0.05, 10},  {2, 30, 12, 1.0, 100}};
  uint32_t seed = 100;
  for (const BackwardCase& c : cases) check_backward(c, seed += 10);
}

TEST(CudaSinkhornBackward, RefusesToleranceModeAndMissingBuffers) {
  REQUIRE_CUDA_DEVICE();
  SinkhornOptions o;
  o.tol = 1e-3;
  const SinkhornProblem<float> pr{nullptr, 1, 4, 4, nullptr, nullptr, nullptr, nullptr};
  float x = 0;
  expect_error([&] { cuda::sinkhorn_log_backward_device(pr, o, &x, &x, &x, &x, nullptr); }, ErrorCode::kInvalidArgument,
               "tol = 0");
  o.tol = 0;
  expect_error([&] { cuda::sinkhorn_log_backward_device(pr, o, &x, &x, &x, &x, nullptr); }, ErrorCode::kInvalidArgument,
               "must all be given");
}

// ---- Sinkhorn: implicit backward -------------------------------------------------------------------------------

// The device's implicit gradient on the CPU forward's plan, against the CPU's implicit gradient (the cases the
// host-executor test of the same functors runs: tests/device/sinkhorn_implicit_pass_test.cpp).
TEST(CudaSinkhornImplicit, MatchesTheCpuImplicitGradientOnMaskedBatchesOfEveryShape) {
  REQUIRE_CUDA_DEVICE();
  uint32_t seed = 300;
  for (const testing::ImplicitShape& shape : testing::implicit_shapes()) {
    const testing::ImplicitCase c = testing::implicit_case(shape, seed += 10);
    cuda::DeviceBuffer ds = to_device(c.sim), dplan = to_device(c.plan), ddp = to_device(c.dplan);
    cuda::DeviceBuffer dn = to_device(c.n), dp = to_device(c.p), dgrad(c.size() * sizeof(float));
    cuda::DeviceBuffer ok(shape.batch * sizeof(int32_t));
    cuda::check(cudaMemset(dgrad.data(), 0xff, dgrad.bytes()), "cudaMemset");  // NaN: unwritten entries show
    SinkhornProblem<float> pr = c.problem();
    pr.cost = ds.as<float>();
    pr.n = dn.as<int32_t>();
    pr.p = dp.as<int32_t>();
    cuda::DeviceBuffer work(cuda::sinkhorn_implicit_workspace_bytes(shape.batch, shape.n_max, shape.p_max));
    cuda::sinkhorn_implicit_backward_device(pr, c.options, dplan.as<float>(), ddp.as<float>(), dgrad.as<float>(),
                                            work.data(), work.bytes(), ok.as<int32_t>(), nullptr);
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const std::vector<int32_t> flags = to_host<int32_t>(ok, shape.batch);
    for (int b = 0; b < shape.batch; ++b) EXPECT_EQ(flags[b], 1) << c.name() << ", problem " << b;
    testing::expect_matches_cpu(c, to_host<float>(dgrad, c.size()), 1e-5);
  }
}

TEST(CudaSinkhornImplicit, RefusesAShortWorkspaceAndMissingBuffers) {
  REQUIRE_CUDA_DEVICE();
  SinkhornOptions o;
  o.similarity = true;
  float x = 0;
  int32_t ok = 0;
  const SinkhornProblem<float> pr{&x, 1, 4, 4, nullptr, nullptr, nullptr, nullptr};
  expect_error([&] { cuda::sinkhorn_implicit_backward_device(pr, o, &x, &x, &x, &x, 8, &ok, nullptr); },
               ErrorCode::kInvalidArgument, "are needed");
  expect_error([&] { cuda::sinkhorn_implicit_backward_device(pr, o, nullptr, &x, &x, &x, 1 << 20, &ok, nullptr); },
               ErrorCode::kInvalidArgument, "must all be given");
}

// ---- the OTKE step ----------------------------------------------------------------------------------------------

struct Variant {
  const char* name;
  int q;
  float sigma_pos;
  OtkScale scale;
  int p;
  int anchors = 0;  // > 0: a Nystrom embedding with this many anchors (else identity)
  bool keep_norm = false;
  SinkhornGradient gradient = SinkhornGradient::kUnrolled;
  OtkePooling pooling = OtkePooling::kOtk;  // mean/max: the baselines (q, p, sigma_pos and scale unused)
  int filters = 0;                          // > 0: a conv embedding ReLU(x W^T + b) with this many filters
  int vocab = 0;                            // > 0: token inputs, a vocabulary of this many (the table's rows)
  int hidden = 0;                           // > 0: an MLP head with this many hidden units
  float dropout = 0;                        // the MLP's dropout (training steps only)
  bool multilabel = false;                  // C independent binary labels (bit sets), binary cross-entropy
  bool fixed_table = false;                 // tokens: the table does not learn (--freeze-tokens)
};

OtkeModel make_model(const Variant& v, int dim, int classes, uint32_t seed) {
  OtkeModel m;
  m.config.input_type = v.vocab > 0 ? OtkeInput::kTokens : OtkeInput::kVectors;
  m.config.input_dim = dim;
  if (v.vocab > 0) {
    m.config.tokens = {"<unk>"};
    for (int t = 1; t < v.vocab; ++t) m.config.tokens.push_back("w" + std::to_string(t));
    m.token_table = testing::random_mat(v.vocab, dim, seed + 70);
  }
  m.config.embedding = v.anchors > 0 ? OtkeEmbedding::kNystrom : OtkeEmbedding::kIdentity;
  m.config.pooling = v.pooling;
  m.config.otk.p = v.p;
  m.config.otk.q = v.q;
  m.config.otk.eps = 0.5;
  m.config.otk.iters = 10;
  m.config.otk.sigma_pos = v.sigma_pos;
  m.config.otk.scale = v.scale;
  m.config.classes = classes;
  m.config.multilabel = v.multilabel;
  int k = dim;
  if (v.filters > 0) {
    m.config.embedding = OtkeEmbedding::kConv;
    m.config.filters = v.filters;
    m.conv_weight = testing::random_mat(v.filters, dim, seed + 80) * 0.5f;
    m.conv_bias = testing::random_mat(v.filters, 1, seed + 81).col(0) * 0.2f;
    k = v.filters;
  }
  if (v.anchors > 0) {
    m.config.anchors = v.anchors;
    m.config.nystrom.keep_norm = v.keep_norm;
    m.nystrom = Nystrom(testing::random_mat(v.anchors, dim, seed + 90), m.config.nystrom);
    k = v.anchors;
  }
  if (v.pooling == OtkePooling::kOtk) {
    std::vector<MatF> refs;
    for (int r = 0; r < v.q; ++r) refs.push_back(testing::random_mat(v.p, k, seed + r));
    m.pooling = OtkPooling(refs, m.config.otk);
  }
  if (v.hidden > 0) {
    m.config.hidden = v.hidden;
    m.config.dropout = v.dropout;
    m.hidden.weight = testing::random_mat(v.hidden, m.config.output_dim(), seed + 60) * 0.3f;
    m.hidden.bias = testing::random_mat(v.hidden, 1, seed + 61).col(0) * 0.1f;
  }
  m.head.weight = testing::random_mat(classes, m.config.head_dim(), seed + 50) * 0.3f;
  m.head.bias = testing::random_mat(classes, 1, seed + 51).col(0);
  return m;
}

SetBatch make_sets(int batch, int n_max, int dim, uint32_t seed) {
  SetBatch x(batch, n_max, dim);
  const auto len = testing::random_vector<double>(batch, seed);
  const auto v = testing::random_vector<float>(x.x.size(), seed + 1, -1, 1);
  for (int b = 0; b < batch; ++b) {
    x.n[b] = b == 0 ? n_max : 1 + static_cast<int>(len[b] * (n_max - 1));
    for (int i = 0; i < x.n[b]; ++i)
      for (int c = 0; c < dim; ++c) *(x.row(b, i) + c) = v[(static_cast<size_t>(b) * n_max + i) * dim + c];
  }
  return x;
}

// Sets of token indices (width 1) for a vocabulary of `vocab`; padding entries hold an out-of-range index, which
// the device's lookup must never follow.
SetBatch make_token_sets(int batch, int n_max, int vocab, uint32_t seed) {
  SetBatch x(batch, n_max, 1);
  const auto len = testing::random_vector<double>(batch, seed);
  const auto v = testing::random_vector<double>(x.x.size(), seed + 1);
  for (int b = 0; b < batch; ++b) {
    x.n[b] = b == 0 ? n_max : 1 + static_cast<int>(len[b] * (n_max - 1));
    for (int i = 0; i < n_max; ++i)
      *x.row(b, i) = i < x.n[b] ? static_cast<float>(static_cast<int>(v[b * n_max + i] * vocab) % vocab) : 1e9f;
  }
  return x;
}

std::vector<int32_t> make_labels(int batch, int classes, uint32_t seed) {
  const auto r = testing::random_vector<double>(batch, seed);
  std::vector<int32_t> y(batch);
  for (int b = 0; b < batch; ++b) y[b] = static_cast<int32_t>(r[b] * classes) % classes;
  return y;
}
// A variant's labels: class indices, or for a multilabel head any subset of the C labels as bits.
std::vector<int32_t> make_labels(const Variant& v, int batch, int classes, uint32_t seed) {
  return make_labels(batch, v.multilabel ? 1 << classes : classes, seed);
}

const Variant kVariants[] = {
    {"q1", 1, 0.0f, OtkScale::kPaper, 5},
    {"q3 positional", 3, 0.1f, OtkScale::kPaper, 6},
    {"otk-compatible", 2, 0.0f, OtkScale::kOtkCompatible, 4},
    {"p64", 1, 0.0f, OtkScale::kPaper, 64},
    {"nystrom", 1, 0.0f, OtkScale::kPaper, 5, 7},
    {"nystrom q2 positional keep-norm", 2, 0.1f, OtkScale::kPaper, 4, 6, true},
    {"implicit q2 positional", 2, 0.1f, OtkScale::kPaper, 6, 0, false, SinkhornGradient::kImplicit},
    {"implicit nystrom p64", 1, 0.0f, OtkScale::kPaper, 64, 7, false, SinkhornGradient::kImplicit},
    {"mean identity", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMean},
    {"max identity", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMax},
    {"mean nystrom keep-norm", 1, 0.0f, OtkScale::kPaper, 1, 9, true, SinkhornGradient::kUnrolled, OtkePooling::kMean},
    {"max nystrom", 1, 0.0f, OtkScale::kPaper, 1, 7, false, SinkhornGradient::kUnrolled, OtkePooling::kMax},
    {"conv q2 positional", 2, 0.1f, OtkScale::kPaper, 5, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk, 12},
    {"conv implicit p64", 1, 0.0f, OtkScale::kPaper, 64, 0, false, SinkhornGradient::kImplicit, OtkePooling::kOtk, 6},
    {"conv max", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMax, 10},
    {"tokens q2", 2, 0.1f, OtkScale::kPaper, 4, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk, 0, 11},
    {"tokens mean", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMean, 0, 5},
    {"tokens conv max", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMax, 6, 9},
    {"tokens nystrom (table fixed)", 1, 0.0f, OtkScale::kPaper, 4, 5, false, SinkhornGradient::kUnrolled,
     OtkePooling::kOtk, 0, 7, 0, 0, false, true},
    {"tokens nystrom q2 (table and anchors learn)", 2, 0.1f, OtkScale::kPaper, 4, 6, false, SinkhornGradient::kUnrolled,
     OtkePooling::kOtk, 0, 9},
    {"tokens nystrom keep-norm max", 1, 0.0f, OtkScale::kPaper, 1, 5, true, SinkhornGradient::kUnrolled,
     OtkePooling::kMax, 0, 8},
    {"mlp nystrom q2", 2, 0.1f, OtkScale::kPaper, 4, 6, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk, 0, 0,
     10},
    {"mlp conv max (dropout off outside steps)", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled,
     OtkePooling::kMax, 8, 0, 6, 0.3f},
    {"multilabel q2 positional", 2, 0.1f, OtkScale::kPaper, 5, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk,
     0, 0, 0, 0, true},
    {"multilabel mlp conv (the DeepSEA model)", 1, 0.0f, OtkScale::kPaper, 6, 0, false, SinkhornGradient::kUnrolled,
     OtkePooling::kOtk, 8, 0, 10, 0.2f, true},
    {"multilabel tokens mean", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMean,
     0, 9, 0, 0, true}};

TEST(CudaOtkeStepper, LossAndGradientsMatchTheCpuForEveryVariant) {
  REQUIRE_CUDA_DEVICE();
  uint32_t seed = 300;
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.name);
    const OtkeModel model = make_model(v, 8, 3, seed += 100);
    const SetBatch x = v.vocab > 0 ? make_token_sets(7, 23, v.vocab, seed + 7) : make_sets(7, 23, 8, seed + 7);
    const std::vector<int32_t> y = make_labels(v, 7, 3, seed + 8);
    OtkeGradients cpu, gpu;
    OtkeLossOptions lo;
    lo.sinkhorn_gradient = v.gradient;
    lo.tokens = v.vocab > 0 && !v.fixed_table;
    const double loss_cpu = otke_loss(model, x, y, &cpu, lo);
    Adam adam;
    cuda::CudaOtkeStepper stepper(0, model, adam, lo);
    const double loss_gpu = stepper.loss_and_gradients(x, y, &gpu);
    EXPECT_NEAR(loss_gpu, loss_cpu, 1e-5 * std::max(1.0, std::fabs(loss_cpu)));
    EXPECT_LE(rel_error(gpu.head_weight, cpu.head_weight), 1e-4);
    EXPECT_LE(rel_error(MatF(gpu.head_bias.transpose()), MatF(cpu.head_bias.transpose())), 1e-4);
    ASSERT_EQ(gpu.references.size(), cpu.references.size());
    for (size_t r = 0; r < cpu.references.size(); ++r) EXPECT_LE(rel_error(gpu.references[r], cpu.references[r]), 1e-4);
    EXPECT_EQ(gpu.anchors.size(), cpu.anchors.size());
    if (cpu.anchors.size()) EXPECT_LE(rel_error(gpu.anchors, cpu.anchors), 1e-4);
    EXPECT_EQ(gpu.hidden_weight.size(), cpu.hidden_weight.size());
    if (cpu.hidden_weight.size()) {
      EXPECT_LE(rel_error(gpu.hidden_weight, cpu.hidden_weight), 1e-4);
      EXPECT_LE(rel_error(MatF(gpu.hidden_bias.transpose()), MatF(cpu.hidden_bias.transpose())), 1e-4);
    }
    EXPECT_EQ(gpu.tokens.size(), cpu.tokens.size());
    if (cpu.tokens.size()) EXPECT_LE(rel_error(gpu.tokens, cpu.tokens), 1e-4);
    EXPECT_EQ(gpu.conv_weight.size(), cpu.conv_weight.size());
    if (cpu.conv_weight.size()) {
      EXPECT_LE(rel_error(gpu.conv_weight, cpu.conv_weight), 1e-4);
      EXPECT_LE(rel_error(MatF(gpu.conv_bias.transpose()), MatF(cpu.conv_bias.transpose())), 1e-4);
    }
    // Embeddings and logits of the same parameters match the CPU's.
    EXPECT_LE(rel_error(stepper.embed(x), model.embed(x)), 1e-5);
    EXPECT_LE(rel_error(stepper.logits(x), model.predict(model.embed(x))), 1e-5);
  }
}

TEST(CudaOtkeStepper, ModelsWithoutAHeadEmbedButDoNotPredict) {
  REQUIRE_CUDA_DEVICE();
  OtkeModel model = make_model({"nystrom", 2, 0.1f, OtkScale::kPaper, 5, 6}, 8, 2, 1300);
  model.config.classes = 0;
  model.head = LinearHead{};
  Adam adam;
  cuda::CudaOtkeStepper stepper(0, model, adam, OtkeLossOptions{});
  const SetBatch x = make_sets(9, 30, 8, 1301);
  EXPECT_LE(rel_error(stepper.embed(x), model.embed(x)), 1e-5);
  expect_error([&] { stepper.logits(x); }, ErrorCode::kInvalidArgument, "no classifier head");
  SetBatch wrong = make_sets(2, 4, 7, 1302);
  expect_error([&] { stepper.embed(wrong); }, ErrorCode::kShapeMismatch, "dimension 7, expected 8");
}

// The implicit gradient keeps no tape: the stepper's device memory after a step is the same at 10 and 200
// Sinkhorn iterations (the unrolled gradient's grows with them), and both steps still match the CPU.
TEST(CudaOtkeStepper, ImplicitGradientDeviceMemoryDoesNotGrowWithTheIterations) {
  REQUIRE_CUDA_DEVICE();
  const SetBatch x = make_sets(6, 40, 8, 1400);
  const std::vector<int32_t> y = make_labels(6, 2, 1401);
  size_t bytes[2][2] = {};
  for (int g = 0; g < 2; ++g)
    for (int it = 0; it < 2; ++it) {
      OtkeModel model = make_model({"q2", 2, 0.0f, OtkScale::kPaper, 8}, 8, 2, 1402);
      model.config.otk.iters = it == 0 ? 10 : 200;
      model.pooling = OtkPooling(model.pooling.references(), model.config.otk);
      OtkeLossOptions lo;
      lo.sinkhorn_gradient = g == 0 ? SinkhornGradient::kImplicit : SinkhornGradient::kUnrolled;
      OtkeGradients cpu, gpu;
      const double loss_cpu = otke_loss(model, x, y, &cpu, lo);
      Adam adam;
      cuda::CudaOtkeStepper stepper(0, model, adam, lo);
      EXPECT_NEAR(stepper.loss_and_gradients(x, y, &gpu), loss_cpu, 1e-5 * std::max(1.0, std::fabs(loss_cpu)));
      for (size_t r = 0; r < cpu.references.size(); ++r)
        EXPECT_LE(rel_error(gpu.references[r], cpu.references[r]), 1e-4);
      bytes[g][it] = stepper.device_bytes();
    }
  EXPECT_EQ(bytes[0][0], bytes[0][1]) << "implicit: 10 vs 200 iterations";
  EXPECT_GT(bytes[1][1], bytes[1][0]) << "unrolled: the tape grows with the iterations";
}

// Adam on every trained block (references and head; anchors on the host; conv filters on the device), moments pulled
// by the CPU's block names in its order.
TEST(CudaOtkeStepper, AdamStepsMatchTheCpuStepperAndPullGivesTheCpuLayout) {
  REQUIRE_CUDA_DEVICE();
  const Variant variants[] = {
      {"q2 nystrom", 2, 0.1f, OtkScale::kPaper, 6, 5},
      {"conv q2", 2, 0.0f, OtkScale::kPaper, 4, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk, 7},
      {"conv mean", 1, 0.0f, OtkScale::kPaper, 1, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kMean, 9},
      // Dropout in every step: the device must draw the CPU stepper's masks (same seed, step count, entry order).
      {"mlp dropout q2", 2, 0.0f, OtkScale::kPaper, 4, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk, 0, 0,
       12, 0.25f},
      {"multilabel conv mlp dropout", 1, 0.0f, OtkScale::kPaper, 4, 0, false, SinkhornGradient::kUnrolled,
       OtkePooling::kOtk, 6, 0, 8, 0.2f, true},
      // The token table (on the device) and the anchors (on the host) both step.
      {"tokens nystrom keep-norm", 1, 0.0f, OtkScale::kPaper, 4, 5, true, SinkhornGradient::kUnrolled,
       OtkePooling::kOtk, 0, 10}};
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    OtkeModel cpu_model = make_model(v, 8, 2, 900);
    const OtkeModel start = cpu_model;
    AdamOptions ao{0.01};
    ao.weight_decay = 0.01;
    Adam cpu_adam(ao), gpu_adam(ao);
    const std::unique_ptr<OtkeStepper> cpu = make_cpu_otke_stepper(cpu_model, cpu_adam, OtkeLossOptions{});
    cuda::CudaOtkeStepper gpu(0, start, gpu_adam, OtkeLossOptions{});
    for (int s = 0; s < 4; ++s) {
      const SetBatch x = v.vocab > 0 ? make_token_sets(5, 19, v.vocab, 910 + s) : make_sets(5, 19, 8, 910 + s);
      const std::vector<int32_t> y = make_labels(v, 5, 2, 920 + s);
      const double lc = cpu->step(x, y, 0.01), lg = gpu.step(x, y, 0.01);
      EXPECT_NEAR(lg, lc, 1e-4 * std::max(1.0, std::fabs(lc))) << "step " << s;
    }
    OtkeModel pulled = start;
    gpu.pull(pulled, gpu_adam);
    EXPECT_EQ(gpu_adam.steps(), cpu_adam.steps());
    ASSERT_EQ(gpu_adam.moments().size(), cpu_adam.moments().size());
    for (size_t i = 0; i < cpu_adam.moments().size(); ++i) {
      EXPECT_EQ(gpu_adam.moments()[i].name, cpu_adam.moments()[i].name);
      const auto& a = gpu_adam.moments()[i].m;
      const auto& b = cpu_adam.moments()[i].m;
      ASSERT_EQ(a.size(), b.size());
      EXPECT_LE(rel_error(a.data(), b.data(), a.size()), 1e-3) << cpu_adam.moments()[i].name;
    }
    EXPECT_LE(rel_error(pulled.head.weight, cpu_model.head.weight), 1e-4);
    if (v.pooling == OtkePooling::kOtk)
      for (int r = 0; r < v.q; ++r)
        EXPECT_LE(rel_error(pulled.pooling.references()[r], cpu_model.pooling.references()[r]), 1e-4);
    if (v.anchors > 0) {
      EXPECT_LE(rel_error(pulled.nystrom.anchors(), cpu_model.nystrom.anchors()), 1e-4);
      EXPECT_LE(rel_error(pulled.nystrom.factor(), cpu_model.nystrom.factor()), 1e-3);
    }
    if (v.hidden > 0) EXPECT_LE(rel_error(pulled.hidden.weight, cpu_model.hidden.weight), 1e-4);
    if (v.filters > 0) {
      EXPECT_LE(rel_error(pulled.conv_weight, cpu_model.conv_weight), 1e-4);
      EXPECT_LE(rel_error(MatF(pulled.conv_bias.transpose()), MatF(cpu_model.conv_bias.transpose())), 1e-4);
    }
    // A model file written from the pulled parameters reads back as the CPU's model kind with the same predictions.
    const std::vector<uint8_t> bytes = pulled.to_bytes();
    const OtkeModel loaded = OtkeModel::from_bytes(bytes.data(), bytes.size());
    if (v.vocab > 0) EXPECT_LE(rel_error(pulled.token_table, cpu_model.token_table), 1e-4);
    const SetBatch x = v.vocab > 0 ? make_token_sets(6, 11, v.vocab, 999) : make_sets(6, 11, 8, 999);
    EXPECT_LE(rel_error(loaded.predict(loaded.embed(x)), gpu.logits(x)), 1e-4);
  }
}

TEST(CudaOtkeStepper, ResidentAndStreamedStepsAgreeWithTheCpu) {
  REQUIRE_CUDA_DEVICE();
  const Variant v{"q2 positional", 2, 0.2f, OtkScale::kPaper, 6};
  const OtkeModel start = make_model(v, 8, 2, 1200);
  const SetBatch data = make_sets(30, 21, 8, 1201);
  const std::vector<int32_t> y_all = make_labels(30, 2, 1202);
  OtkeModel cpu_model = start;
  Adam cpu_adam, resident_adam, streamed_adam;
  const auto cpu = make_cpu_otke_stepper(cpu_model, cpu_adam, OtkeLossOptions{});
  cuda::CudaOtkeStepper resident(0, start, resident_adam, OtkeLossOptions{});
  cuda::CudaOtkeStepper streamed(0, start, streamed_adam, OtkeLossOptions{});
  streamed.set_resident_limit(0);
  cpu->bind(data);
  resident.bind(data);
  streamed.bind(data);
  EXPECT_TRUE(resident.resident());
  EXPECT_FALSE(streamed.resident());
  const std::vector<std::vector<int>> batches = {{3, 17, 0, 29, 8}, {1, 2}, {28, 5, 5, 11, 20, 7, 19}};
  for (const auto& idx : batches) {
    std::vector<int32_t> y;
    for (int i : idx) y.push_back(y_all[i]);
    const double lc = cpu->step_on(idx, y, 0.05), lr = resident.step_on(idx, y, 0.05),
                 ls = streamed.step_on(idx, y, 0.05);
    EXPECT_NEAR(lr, lc, 1e-4 * std::max(1.0, std::fabs(lc)));
    EXPECT_EQ(lr, ls) << "the resident and streamed paths run the same kernels on the same batch";
  }
  expect_error([&] { resident.step_on({0, 30}, {0, 1}, 0.1); }, ErrorCode::kInvalidArgument, "set index 30");
  expect_error([&] { resident.step_on({0, 1}, {0, 2}, 0.1); }, ErrorCode::kInvalidArgument, "label of set 1");
}

// A small separable problem: class 1 sets hold a shifted cluster.
void make_dataset(int count, uint32_t seed, SetBatch& x, std::vector<int32_t>& y) {
  x = make_sets(count, 15, 6, seed);
  y = make_labels(count, 2, seed + 1);
  for (int b = 0; b < count; ++b)
    for (int i = 0; i < x.n[b]; ++i) *(x.row(b, i) + (y[b] ? 0 : 1)) += 1.5f;
}

OtkeTrainReport train_on(const std::string& backend, OtkeModel& model, int epochs, const std::string& checkpoint = "") {
  SetBatch tr, va;
  std::vector<int32_t> ytr, yva;
  make_dataset(48, 500, tr, ytr);
  make_dataset(16, 600, va, yva);
  OtkeTrainOptions o;
  o.epochs = epochs;
  o.batch_size = 8;
  const std::unique_ptr<Backend> be = make_backend(backend);
  o.backend = be.get();
  o.checkpoint_path = checkpoint;
  o.seed = 3;
  return train_otke_supervised(model, tr, ytr, va, yva, o);
}

// The data-parallel tests' models (Nystrom with positional weighting, conv + MLP head, tokens under Nystrom) and
// steps: batches of 7, 7, 2 and 1 sets (with 3 ranks the last two leave ranks without sets).
const Variant kDataParallelVariants[] = {
    {"nystrom q2 positional", 2, 0.1f, OtkScale::kPaper, 4, 5},
    {"conv mlp", 1, 0.0f, OtkScale::kPaper, 6, 0, false, SinkhornGradient::kUnrolled, OtkePooling::kOtk, 7, 0, 5},
    {"tokens nystrom keep-norm", 1, 0.0f, OtkScale::kPaper, 4, 5, true, SinkhornGradient::kUnrolled, OtkePooling::kOtk,
     0, 10}};
const std::vector<std::vector<int>> kDataParallelBatches = {
    {0, 1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12, 13}, {14, 15}, {16}};

// `mpirun -np N inductive otke train --backend cuda`'s steps, with ranks played by threads on one device: each rank's
// CUDA stepper computes its share's gradients, the wrapper sums them on the host, every rank steps on the device.
// Held to the CPU stepper's one-process steps (batches of 7, 7, 2 and 1 sets: 3 ranks leave ranks without sets).
TEST(CudaOtkeStepper, DataParallelStepsOverRanksAreTheOneProcessSteps) {
  REQUIRE_CUDA_DEVICE();
  for (const Variant& v : kDataParallelVariants) {
    SCOPED_TRACE(v.name);
    const OtkeModel start = make_model(v, 8, 2, 1500);
    const SetBatch data = v.vocab > 0 ? make_token_sets(17, 21, v.vocab, 1501) : make_sets(17, 21, 8, 1501);
    const std::vector<int32_t> labels = make_labels(v, 17, 2, 1502);
    const auto run = [&](OtkeStepper& stepper, std::vector<double>& losses) {
      stepper.bind(data);
      for (const auto& b : kDataParallelBatches) {
        std::vector<int32_t> y;
        for (int i : b) y.push_back(labels[i]);
        losses.push_back(stepper.step_on(b, y, 0.02));
      }
    };
    OtkeModel one = start;
    Adam one_adam(AdamOptions{0.02});
    std::vector<double> one_losses;
    run(*make_cpu_otke_stepper(one, one_adam, OtkeLossOptions{}), one_losses);
    for (const int size : {2, 3}) {
      SCOPED_TRACE(::testing::Message() << size << " ranks");
      testing::ThreadRanks ranks(size);
      std::vector<OtkeModel> models(size, start);
      std::vector<std::vector<double>> losses(size);
      std::vector<std::string> errors(size);
      std::vector<std::thread> threads;
      for (int r = 0; r < size; ++r)
        threads.emplace_back([&, r] {
          try {
            testing::ThreadCommunicator comm(ranks, r);
            Adam adam(AdamOptions{0.02});
            const auto stepper = make_data_parallel_otke_stepper(
                std::make_unique<cuda::CudaOtkeStepper>(0, start, adam, OtkeLossOptions{}, cuda::RankSums::kHost),
                comm);
            run(*stepper, losses[r]);
            stepper->pull(models[r], adam);
          } catch (const std::exception& e) {
            errors[r] = e.what();
          }
        });
      for (auto& t : threads) t.join();
      for (int r = 0; r < size; ++r) {
        ASSERT_EQ(errors[r], "") << "rank " << r;
        for (size_t s = 0; s < one_losses.size(); ++s)
          EXPECT_NEAR(losses[r][s], one_losses[s], 1e-4 * (1 + std::fabs(one_losses[s])))
              << "rank " << r << " step " << s;
        EXPECT_LE(rel_error(models[r].head.weight, one.head.weight), 1e-4) << "rank " << r;
        for (int q = 0; q < v.q; ++q)
          EXPECT_LE(rel_error(models[r].pooling.references()[q], one.pooling.references()[q]), 1e-4) << "rank " << r;
        if (v.anchors > 0) EXPECT_LE(rel_error(models[r].nystrom.anchors(), one.nystrom.anchors()), 1e-4);
        if (v.filters > 0) EXPECT_LE(rel_error(models[r].conv_weight, one.conv_weight), 1e-4);
        if (v.hidden > 0) EXPECT_LE(rel_error(models[r].hidden.weight, one.hidden.weight), 1e-4);
        if (v.vocab > 0) EXPECT_LE(rel_error(models[r].token_table, one.token_table), 1e-4);
      }
    }
  }
}

// The 1-GPU NCCL smoke test of the GPU check for OTKE: the data-parallel wrapper over one rank whose gradients are
// summed by NCCL on the device (the identity for one rank, the scale 1), Adam on the device: the plain one-GPU steps.
// Several GPUs run the same calls with each rank's share as the scale.
TEST(CudaOtkeDataParallel, OneGpuThroughNcclStepsThePlainOneGpuSteps) {
  REQUIRE_CUDA_DEVICE();
  try {
    std::printf("NCCL %s\n", cuda::nccl_version().c_str());
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  for (const Variant& v : kDataParallelVariants) {
    SCOPED_TRACE(v.name);
    const OtkeModel start = make_model(v, 8, 2, 1600);
    const SetBatch data = v.vocab > 0 ? make_token_sets(17, 21, v.vocab, 1601) : make_sets(17, 21, 8, 1601);
    const std::vector<int32_t> labels = make_labels(v, 17, 2, 1602);
    const auto run = [&](OtkeStepper& stepper, std::vector<double>& losses, OtkeModel& out, Adam& adam) {
      stepper.bind(data);
      for (const auto& b : kDataParallelBatches) {
        std::vector<int32_t> y;
        for (int i : b) y.push_back(labels[i]);
        losses.push_back(stepper.step_on(b, y, 0.02));
      }
      stepper.pull(out, adam);
    };
    OtkeModel plain = start, nccl = start;
    Adam plain_adam(AdamOptions{0.02}), nccl_adam(AdamOptions{0.02});
    std::vector<double> plain_losses, nccl_losses;
    cuda::CudaOtkeStepper one(0, start, plain_adam, OtkeLossOptions{});
    run(one, plain_losses, plain, plain_adam);
    const std::unique_ptr<Communicator> serial = make_serial_communicator();
    const auto wrapped = make_data_parallel_otke_stepper(
        std::make_unique<cuda::CudaOtkeStepper>(0, start, nccl_adam, OtkeLossOptions{}, cuda::RankSums::kNcclAlone),
        *serial);
    run(*wrapped, nccl_losses, nccl, nccl_adam);
    EXPECT_GT(wrapped->stats().allreduce_bytes, static_cast<int64_t>(sizeof(double)));
    for (size_t s = 0; s < plain_losses.size(); ++s)
      EXPECT_NEAR(nccl_losses[s], plain_losses[s], 1e-6 * (1 + std::fabs(plain_losses[s]))) << "step " << s;
    EXPECT_LE(rel_error(nccl.head.weight, plain.head.weight), 1e-6);
    for (int q = 0; q < v.q; ++q)
      EXPECT_LE(rel_error(nccl.pooling.references()[q], plain.pooling.references()[q]), 1e-6);
    if (v.anchors > 0) EXPECT_LE(rel_error(nccl.nystrom.anchors(), plain.nystrom.anchors()), 1e-6);
    if (v.filters > 0) EXPECT_LE(rel_error(nccl.conv_weight, plain.conv_weight), 1e-6);
    if (v.hidden > 0) EXPECT_LE(rel_error(nccl.hidden.weight, plain.hidden.weight), 1e-6);
    if (v.vocab > 0) EXPECT_LE(rel_error(nccl.token_table, plain.token_table), 1e-6);
  }
}

TEST(CudaOtkeTraining, ThreeEpochsMatchTheCpuLossesAndResumeFromTheCheckpoint) {
  REQUIRE_CUDA_DEVICE();
  cuda::register_cuda_backend();
  const Variant v{"q2 nystrom", 2, 0.0f, OtkScale::kPaper, 5, 4};
  const OtkeModel start = make_model(v, 6, 2, 700);
  OtkeModel on_cpu = start, on_gpu = start;
  const OtkeTrainReport rc = train_on("cpu", on_cpu, 3);
  const OtkeTrainReport rg = train_on("cuda", on_gpu, 3);
  ASSERT_EQ(rc.history.size(), 3u);
  ASSERT_EQ(rg.history.size(), 3u);
  for (int e = 0; e < 3; ++e) {
    EXPECT_NEAR(rg.history[e].train_loss, rc.history[e].train_loss, 1e-3) << "epoch " << e + 1;
    EXPECT_NEAR(rg.history[e].val_loss, rc.history[e].val_loss, 1e-3) << "epoch " << e + 1;
  }
  EXPECT_EQ(rg.best_epoch, rc.best_epoch);
  // Interrupted after 2 epochs on the GPU, resumed to 3: the same run.
  const std::string ck = ::testing::TempDir() + "/otke_cuda_resume.ckpt";
  std::remove(ck.c_str());
  OtkeModel part = start;
  train_on("cuda", part, 2, ck);
  OtkeModel resumed = start;
  const OtkeTrainReport rr = train_on("cuda", resumed, 3, ck);
  EXPECT_TRUE(rr.resumed);
  ASSERT_EQ(rr.history.size(), 3u);
  EXPECT_NEAR(rr.history[2].val_loss, rg.history[2].val_loss, 1e-4);
  std::remove(ck.c_str());
}

// ---- errors -----------------------------------------------------------------------------------------------------

TEST(CudaOtkeStepper, ConfigurationsItCannotRunAreBackendErrorsNamingThePart) {
  OtkeConfig c;
  c.input_type = OtkeInput::kVectors;
  c.input_dim = 4;
  c.embedding = OtkeEmbedding::kConv;
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));
  c.embedding = OtkeEmbedding::kIdentity;
  c.multilabel = true;
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));
  c.multilabel = false;
  c.hidden = 16;
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));
  c.hidden = 0;
  c.pooling = OtkePooling::kMax;
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));
  c.pooling = OtkePooling::kOtk;
  c.otk.sinusoidal = true;
  expect_error([&] { cuda::check_cuda_otke_support(c, {}); }, ErrorCode::kBackend, "sinusoidal");
  c.pooling = OtkePooling::kMean;
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));  // the ablation flags belong to OT pooling only
  c.otk.sinusoidal = false;
  c.pooling = OtkePooling::kOtk;
  c.input_type = OtkeInput::kTokens;
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));
  c.embedding = OtkeEmbedding::kNystrom;  // the table learns through Nystrom's input gradient
  EXPECT_NO_THROW(cuda::check_cuda_otke_support(c, {}));
}

TEST(CudaOtkeTraining, WithoutADeviceTrainingOnCudaIsABackendErrorNotACpuRun) {
  if (cuda_device_present()) GTEST_SKIP() << "a CUDA device is present; covered by the tests that use it";
  cuda::register_cuda_backend();
  OtkeModel m = make_model({"q1", 1, 0.0f, OtkScale::kPaper, 3}, 6, 2, 1);
  expect_error([&] { train_on("cuda", m, 1); }, ErrorCode::kBackend, "no CUDA device");
}

TEST(CudaOtkeTraining, OutOfDeviceMemoryIsABackendErrorAndLeavesTheCheckpointIntact) {
  REQUIRE_CUDA_DEVICE();
  cuda::register_cuda_backend();
  // 16 references of 512 supports on 1-d features: a batch of 64 sets of 40000 elements needs 2 x 168 GB of
  // similarities and plans on the device (more than any card), while its features take 10 MB on the host.
  const Variant v{"huge", 16, 0.0f, OtkScale::kPaper, 512};
  OtkeModel m = make_model(v, 1, 2, 5);
  m.config.otk.iters = 1;
  m.pooling = OtkPooling(m.pooling.references(), m.config.otk);
  const std::string ck = ::testing::TempDir() + "/otke_cuda_oom.ckpt";
  std::remove(ck.c_str());
  {
    SetBatch x = make_sets(4, 3, 1, 11), vx = make_sets(2, 3, 1, 12);
    OtkeModel small = m;
    OtkeTrainOptions o;
    o.epochs = 1;
    o.checkpoint_path = ck;
    train_otke_supervised(small, x, make_labels(4, 2, 13), vx, make_labels(2, 2, 14), o);
  }
  std::ifstream in(ck, std::ios::binary);
  const std::vector<char> before((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(before.empty());
  SetBatch big(64, 40000, 1);
  for (int b = 0; b < 64; ++b) big.n[b] = 40000;
  OtkeTrainOptions o;
  o.epochs = 2;
  o.batch_size = 64;
  o.checkpoint_path = ck;
  const std::unique_ptr<Backend> cuda = make_backend("cuda");
  o.backend = cuda.get();
  OtkeModel resumed = m;
  expect_error([&] { train_otke_supervised(resumed, big, make_labels(64, 2, 15), big, make_labels(64, 2, 16), o); },
               ErrorCode::kBackend, "cudaMalloc");
  std::ifstream again(ck, std::ios::binary);
  const std::vector<char> after((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, before) << "the checkpoint changed";
  std::remove(ck.c_str());
}

}  // namespace
}  // namespace inductive
