// Data-parallel OTKE steps (make_data_parallel_otke_stepper) with ranks played by threads: N ranks, each with its
// own copy of the model and its own stepper, take the one-process steps. The same wrapper runs under mpirun
// (tests/native/test_mpi_otke.py, real processes) and over CUDA steppers (tests/cuda/otke_cuda_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "../test_util.h"
#include "../thread_ranks.h"
#include "inductive/communicator.h"
#include "inductive/otke_stepper.h"
#include "motif_sets.h"

namespace inductive {
namespace {

#ifndef __EMSCRIPTEN__  // the wasm test build has no threads

double rel(const MatF& a, const MatF& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  return (a - b).norm() / std::max(static_cast<double>(b.norm()), 1e-30);
}

OtkeModel small_model(const std::string& embedding, const SetBatch& feats) {
  OtkeModel m;
  m.config.kmer = 3;
  m.config.embedding = parse_enum(kOtkeEmbeddings, embedding, "embedding");
  m.config.anchors = 6;
  m.config.filters = 5;
  m.config.otk.p = 3;
  m.config.otk.q = 2;
  m.config.otk.iters = 5;
  m.config.otk.sigma_pos = 0.5f;
  m.config.classes = 2;
  m.config.hidden = 4;  // an MLP head (no dropout: ranks draw their own masks)
  fit_otke_unsupervised(m, feats, OtkeFitOptions{});
  m.hidden.weight = testing::random_mat(4, m.config.output_dim(), 5) * 0.3f;
  m.hidden.bias = VecF::Constant(4, 0.05f);
  m.head.weight = testing::random_mat(2, 4, 6) * 0.3f;
  m.head.bias = VecF::Constant(2, 0.1f);
  return m;
}

struct Trained {
  OtkeModel model;
  std::vector<double> losses;
};

// Four steps over batches of 7, 7, 2 and 1 sets (with 3 ranks the last two leave ranks without sets).
const std::vector<std::vector<int>> kBatches = {{0, 1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12, 13}, {14, 15}, {16}};

Trained train(const OtkeModel& start, const SetBatch& data, const std::vector<int32_t>& labels, Communicator* comm) {
  Trained r{start, {}};
  Adam adam(AdamOptions{0.02});
  std::unique_ptr<OtkeStepper> stepper = make_cpu_otke_stepper(r.model, adam, OtkeLossOptions{});
  if (comm) stepper = make_data_parallel_otke_stepper(std::move(stepper), *comm);
  stepper->bind(data);
  for (const auto& batch : kBatches) {
    std::vector<int32_t> y;
    for (int i : batch) y.push_back(labels[i]);
    r.losses.push_back(stepper->step_on(batch, y, 0.02));
  }
  stepper->pull(r.model, adam);
  return r;
}

class OtkeDataParallel : public ::testing::TestWithParam<const char*> {};

TEST_P(OtkeDataParallel, ThreadRanksTakeTheOneProcessSteps) {
  const auto sets = testing::motif_sets(17, 3, 20, 15, {{"GATTACA"}});
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch data = probe.sequence_features(sets.seqs);
  const OtkeModel start = small_model(GetParam(), data);
  const Trained one = train(start, data, sets.labels, nullptr);
  for (const int size : {2, 3}) {
    SCOPED_TRACE(::testing::Message() << size << " ranks");
    testing::ThreadRanks ranks(size);
    std::vector<Trained> runs(size);
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
      threads.emplace_back([&, r] {
        testing::ThreadCommunicator comm(ranks, r);
        runs[r] = train(start, data, sets.labels, &comm);
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < size; ++r) {
      for (size_t s = 0; s < one.losses.size(); ++s)
        EXPECT_NEAR(runs[r].losses[s], one.losses[s], 1e-5 * (1 + std::fabs(one.losses[s]))) << "step " << s;
      EXPECT_LE(rel(runs[r].model.head.weight, one.model.head.weight), 1e-5);
      EXPECT_LE(rel(runs[r].model.hidden.weight, one.model.hidden.weight), 1e-5);
      for (int q = 0; q < 2; ++q)
        EXPECT_LE(rel(runs[r].model.pooling.references()[q], one.model.pooling.references()[q]), 1e-5);
      if (start.config.embedding == OtkeEmbedding::kNystrom)
        EXPECT_LE(rel(runs[r].model.nystrom.anchors(), one.model.nystrom.anchors()), 1e-5);
      if (start.config.embedding == OtkeEmbedding::kConv)
        EXPECT_LE(rel(runs[r].model.conv_weight, one.model.conv_weight), 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Embeddings, OtkeDataParallel, ::testing::Values("nystrom", "conv"));

#endif  // __EMSCRIPTEN__

// A stepper that cannot split its step says so before any rank waits in a sum.
TEST(OtkeDataParallelStepper, AStepperThatCannotSplitItsStepIsABackendError) {
  class Whole final : public OtkeStepper {
   public:
    double step(const SetBatch&, const std::vector<int32_t>&, double) override { return 0; }
    MatF logits(const SetBatch&) override { return {}; }
    MatF embed(const SetBatch&) override { return {}; }
    void pull(OtkeModel&, Adam&) override {}
    void push(const OtkeModel&, const Adam&) override {}
  };
  const std::unique_ptr<Communicator> serial = make_serial_communicator();
  const std::unique_ptr<OtkeStepper> s = make_data_parallel_otke_stepper(std::make_unique<Whole>(), *serial);
  SetBatch data(2, 1, 1);
  s->bind(data);
  try {
    s->step_on({0, 1}, {0, 1}, 0.1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_NE(std::string(e.what()).find("cannot split a step across ranks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace inductive
