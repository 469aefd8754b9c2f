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

// The wrapper's other path, where the gradients stay where the stepper computed them and are summed there (a GPU's,
// through NCCL): the CPU stepper's gradients, kept between the step's halves and summed in place, tensor by tensor,
// over the communicator.
class InPlaceSums final : public OtkeStepper {
 public:
  explicit InPlaceSums(std::unique_ptr<OtkeStepper> cpu) : cpu_(std::move(cpu)) {}
  double step(const SetBatch& x, const std::vector<int32_t>& y, double lr) override { return cpu_->step(x, y, lr); }
  void bind(const SetBatch& data) override { cpu_->bind(data); }
  MatF logits(const SetBatch& x) override { return cpu_->logits(x); }
  MatF embed(const SetBatch& x) override { return cpu_->embed(x); }
  void pull(OtkeModel& m, Adam& a) override { cpu_->pull(m, a); }
  void push(const OtkeModel& m, const Adam& a) override { cpu_->push(m, a); }

  bool sums_on_device(Communicator& comm) override {
    comm_ = &comm;
    return true;
  }
  double share_gradients(const std::vector<int>& indices, const std::vector<int32_t>& labels, int rank,
                         OtkeGradients* grads) override {
    EXPECT_EQ(grads, nullptr) << "the gradients should stay in place";
    return cpu_->share_gradients(indices, labels, rank, &kept_);
  }
  int64_t sum_gradients_on_device(float scale) override {
    int64_t values = 0;
    const auto sum = [&](float* data, Eigen::Index size) {
      for (Eigen::Index i = 0; i < size; ++i) data[i] *= scale;
      comm_->allreduce_sum_float(data, size);
      values += size;
    };
    for (MatF* m : {&kept_.head_weight, &kept_.hidden_weight, &kept_.anchors, &kept_.conv_weight})
      sum(m->data(), m->size());
    for (VecF* v : {&kept_.head_bias, &kept_.hidden_bias, &kept_.conv_bias}) sum(v->data(), v->size());
    for (MatF& z : kept_.references) sum(z.data(), z.size());
    return values * static_cast<int64_t>(sizeof(float));
  }
  void apply_gradients_on_device(double lr) override { cpu_->apply_gradients(kept_, lr); }

 private:
  std::unique_ptr<OtkeStepper> cpu_;
  Communicator* comm_ = nullptr;
  OtkeGradients kept_;
};

Trained train(const OtkeModel& start, const SetBatch& data, const std::vector<int32_t>& labels, Communicator* comm,
              bool in_place = false) {
  Trained r{start, {}};
  Adam adam(AdamOptions{0.02});
  std::unique_ptr<OtkeStepper> stepper = make_cpu_otke_stepper(r.model, adam, OtkeLossOptions{});
  if (in_place) stepper = std::make_unique<InPlaceSums>(std::move(stepper));
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

void expect_one_process_steps(const char* embedding, bool in_place) {
  const auto sets = testing::motif_sets(17, 3, 20, 15, {{"GATTACA"}});
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch data = probe.sequence_features(sets.seqs);
  const OtkeModel start = small_model(embedding, data);
  const Trained one = train(start, data, sets.labels, nullptr);
  for (const int size : {2, 3}) {
    SCOPED_TRACE(::testing::Message() << size << " ranks");
    testing::ThreadRanks ranks(size);
    std::vector<Trained> runs(size);
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
      threads.emplace_back([&, r] {
        testing::ThreadCommunicator comm(ranks, r);
        runs[r] = train(start, data, sets.labels, &comm, in_place);
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < size; ++r) {
      for (size_t s = 0; s < one.losses.size(); ++s)
        EXPECT_NEAR(runs[r].losses[s], one.losses[s], 1e-5 * (1 + std::fabs(one.losses[s]))) << "step " << s;
      EXPECT_LE(rel(runs[r].model.head.weight, one.model.head.weight), 1e-5);
      EXPECT_LE(rel(runs[r].model.hidden.weight, one.model.hidden.weight), 1e-5);
      for (int q = 0; q < 2; ++q)
        EXPECT_LE(rel(runs[r].model.pooling.references()[q], one.model.pooling.references()[q]), 1e-5);
      if (start.config.embedding == OtkeEmbedding::kNystrom) {
        EXPECT_LE(rel(runs[r].model.nystrom.anchors(), one.model.nystrom.anchors()), 1e-5);
      }
      if (start.config.embedding == OtkeEmbedding::kConv) {
        EXPECT_LE(rel(runs[r].model.conv_weight, one.model.conv_weight), 1e-5);
      }
    }
  }
}

TEST_P(OtkeDataParallel, ThreadRanksTakeTheOneProcessSteps) { expect_one_process_steps(GetParam(), false); }

// Sums where the gradients are (sums_on_device): each rank's scaled by its share, then summed and stepped in place.
TEST_P(OtkeDataParallel, SumsWhereTheGradientsAreTakeTheOneProcessStepsToo) {
  expect_one_process_steps(GetParam(), true);
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
