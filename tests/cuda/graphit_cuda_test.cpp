// GraphiT on the CUDA backend held to the CPU model: the device pass's loss, outputs and every gradient on each
// variant (kernels, norms, dropout from one seed, LapPE / path / dense inputs, regression), a 3-epoch training run
// against the CPU run and its checkpoint/resume, a CUDA-trained model predicted by the CPU, and the errors. The same
// pass runs on the host executor in tests/device everywhere; these need a device and skip without one.
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../core/graphit/graphit_test_util.h"
#include "../core/test_util.h"
#include "blas.h"
#include "cuda_backend.h"
#include "cuda_test_util.h"
#include "cuda_util.h"
#include "graphit_device_pass.h"
#include "graphit_exec_cuda.h"
#include "graphit_stepper_cuda.h"
#include "inductive/communicator.h"
#include "nccl_allreduce.h"
#include "inductive/backend_registry.h"
#include "inductive/graphit_train.h"
#include "inductive/otke_stepper.h"

namespace inductive {
namespace {

using testing::expect_error;

using testing::cuda_device_present;

GraphitConfig config_of(bool kernel, GraphitNorm norm, double dropout, int pe, int path, GraphitTask task) {
  testing::GraphitVariant v{"", kernel, norm, dropout, pe, path};
  v.task = task;
  v.d = 16;
  return testing::small_config(v);
}

GraphitDataset dataset(const GraphitConfig& c, int count, uint32_t seed) {
  return testing::random_dataset(c, count, 4, 30, seed);
}

// ||a - b|| / ||b||.
double rel_error(const float* a, const float* b, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

TEST(CudaGraphitPass, LossOutputsAndGradientsMatchTheCpuForEveryVariant) {
  REQUIRE_CUDA_DEVICE();
  struct V {
    const char* name;
    GraphitConfig c;
  };
  const std::vector<V> variants{
      {"kernel layer", config_of(true, GraphitNorm::kLayer, 0, 0, 0, GraphitTask::kClassification)},
      {"T batch", config_of(false, GraphitNorm::kBatch, 0, 0, 0, GraphitTask::kClassification)},
      {"dropout batch", config_of(true, GraphitNorm::kBatch, 0.2, 0, 0, GraphitTask::kClassification)},
      {"lappe paths", config_of(true, GraphitNorm::kLayer, 0.1, 3, 5, GraphitTask::kClassification)},
      {"regression", config_of(true, GraphitNorm::kLayer, 0, 2, 0, GraphitTask::kRegression)}};
  cuda::CudaExecResources device(0);
  cuda::CudaExec& exec = device.exec;
  for (const V& v : variants) {
    SCOPED_TRACE(v.name);
    const GraphitDataset data = dataset(v.c, 24, 3);
    std::vector<int> idx(data.size());
    std::iota(idx.begin(), idx.end(), 0);
    const GraphitBatch b = pack_graphit_batch(v.c, data, idx);
    GraphitModel cpu = GraphitModel::create(v.c, 5);
    graphit_device::GraphitDevicePass<cuda::CudaExec> pass(exec, cpu);
    GraphitParams grads = GraphitParams::zeros(v.c);
    std::mt19937_64 rng_cpu(9), rng_dev(9);
    GraphitRunOptions run;
    run.training = true;
    run.rng = &rng_cpu;
    run.running = v.c.norm == GraphitNorm::kBatch ? &cpu.norm_stats : nullptr;
    MatF out_cpu, out_dev;
    const double loss_cpu = cpu.loss(b, run, &grads, &out_cpu);
    pass.upload_batch(b, true);
    const double loss_dev = pass.loss(true, &rng_dev, true, &out_dev);
    EXPECT_NEAR(loss_dev, loss_cpu, 1e-4 * std::max(1.0, std::fabs(loss_cpu)));
    EXPECT_LE(rel_error(out_dev.data(), out_cpu.data(), out_cpu.size()), 1e-4);
    const std::vector<float> g = pass.download_gradients();
    const auto views = grads.tensors(v.c);
    for (size_t t = 0; t < views.size(); ++t)
      EXPECT_LE(rel_error(g.data() + pass.offset(t), views[t].data, views[t].size()), 1e-4) << views[t].name;
  }
}

GraphitTrainReport train_on(const std::string& backend, GraphitModel& model, const GraphitDataset& train,
                            const GraphitDataset& val, int epochs, const std::string& checkpoint = {}) {
  const std::unique_ptr<Backend> be = make_backend(backend);
  GraphitTrainOptions o;
  o.epochs = epochs;
  o.batch_size = 8;
  o.seed = 4;
  o.backend = be.get();
  o.checkpoint_path = checkpoint;
  return train_graphit(model, train, &val, nullptr, o);
}

TEST(CudaGraphitTraining, ThreeEpochsMatchTheCpuLossesAndResumeFromTheCheckpoint) {
  REQUIRE_CUDA_DEVICE();
  cuda::register_cuda_backend();
  const GraphitConfig c = config_of(true, GraphitNorm::kBatch, 0.1, 2, 0, GraphitTask::kClassification);
  const GraphitDataset train = dataset(c, 40, 11), val = dataset(c, 16, 12);
  const GraphitModel start = GraphitModel::create(c, 3);
  GraphitModel on_cpu = start, on_gpu = start;
  const GraphitTrainReport rc = train_on("cpu", on_cpu, train, val, 3);
  const GraphitTrainReport rg = train_on("cuda", on_gpu, train, val, 3);
  ASSERT_EQ(rg.history.size(), 3u);
  for (int e = 0; e < 3; ++e) {
    EXPECT_NEAR(rg.history[e].train_loss, rc.history[e].train_loss, 1e-3) << "epoch " << e + 1;
    EXPECT_NEAR(rg.history[e].val_loss, rc.history[e].val_loss, 1e-3) << "epoch " << e + 1;
  }
  // The CUDA-trained model file, predicted by the CPU: the CUDA run's own evaluation.
  const GraphitModel loaded = GraphitModel::from_bytes(on_gpu.to_bytes().data(), on_gpu.to_bytes().size());
  EXPECT_NEAR(evaluate_graphit(loaded, val).loss, rg.history[2].val_loss, 1e-4);
  // Inference on the device (`graphit predict --backend cuda`): the CPU's outputs, batches of 7 (the last partial).
  const MatF on_device = make_backend("cuda")->graphit_predict(on_gpu, val.graphs, 7);
  const MatF on_host = on_gpu.predict(val.graphs);
  EXPECT_LE(rel_error(on_device.data(), on_host.data(), on_host.size()), 1e-4);
  // Attention on the device (`graphit attention --backend cuda`): the CPU's maps, layer by layer.
  for (int g = 0; g < 3; ++g) {
    const std::vector<MatF> dev = make_backend("cuda")->graphit_attention_maps(on_gpu, val.graphs[g], nullptr);
    const std::vector<MatF> cpu = on_gpu.attention_maps(val.graphs[g]);
    ASSERT_EQ(dev.size(), cpu.size());
    for (size_t l = 0; l < cpu.size(); ++l) EXPECT_LE(rel_error(dev[l].data(), cpu[l].data(), cpu[l].size()), 1e-4);
  }
  // Interrupted after 2 epochs on the GPU, resumed to 3: the same run.
  const std::string ck = ::testing::TempDir() + "/graphit_cuda_resume.ckpt";
  std::remove(ck.c_str());
  GraphitModel part = start;
  train_on("cuda", part, train, val, 2, ck);
  GraphitModel resumed = start;
  const GraphitTrainReport rr = train_on("cuda", resumed, train, val, 3, ck);
  EXPECT_TRUE(rr.resumed);
  ASSERT_EQ(rr.history.size(), 3u);
  EXPECT_NEAR(rr.history[2].val_loss, rg.history[2].val_loss, 1e-4);
  std::remove(ck.c_str());
}

// The CUDA backend, but GraphiT steps summed through NCCL over the run's communicator even with one rank.
class NcclAloneBackend final : public Backend {
 public:
  std::string name() const override { return "cuda via nccl"; }
  void sinkhorn_log(const SinkhornProblem<float>& p, const SinkhornOptions& o,
                    const SinkhornOutput<float>& out) override {
    cuda_->sinkhorn_log(p, o, out);
  }
  std::unique_ptr<OtkeStepper> otke_stepper(OtkeModel& m, Adam& a, const OtkeLossOptions& l) override {
    return cuda_->otke_stepper(m, a, l);
  }
  std::unique_ptr<GraphitStepper> graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                  const GraphitTrainOptions& options) override {
    return cuda::make_cuda_graphit_stepper(0, model, adam, train, options, true);
  }

 private:
  std::unique_ptr<Backend> cuda_ = make_backend("cuda:0");
};

// The 1-GPU NCCL smoke test of the GPU check: BatchNorm's sums and the gradient buckets go through NCCL's
// all-reduce on the device (one rank: the identity), and the run is the plain one-GPU run, bit for bit. Several
// ranks run the same code path on the host executor across MPI processes (tests/device/mpi).
TEST(CudaGraphitDataParallel, OneGpuThroughNcclTrainsThePlainOneGpuModel) {
  REQUIRE_CUDA_DEVICE();
  cuda::register_cuda_backend();
  try {
    std::printf("NCCL %s\n", cuda::nccl_version().c_str());
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  const GraphitConfig c = config_of(true, GraphitNorm::kBatch, 0.0, 2, 0, GraphitTask::kClassification);
  const GraphitDataset train = dataset(c, 40, 11), val = dataset(c, 16, 12);
  const GraphitModel start = GraphitModel::create(c, 3);
  GraphitModel plain = start, nccl = start;
  const GraphitTrainReport rp = train_on("cuda:0", plain, train, val, 3);
  const std::unique_ptr<Communicator> one = make_serial_communicator();
  NcclAloneBackend backend;
  GraphitTrainOptions o;
  o.epochs = 3;
  o.batch_size = 8;
  o.seed = 4;
  o.backend = &backend;
  o.communicator = one.get();
  const GraphitTrainReport rn = train_graphit(nccl, train, &val, nullptr, o);
  ASSERT_EQ(rn.history.size(), 3u);
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(rn.history[e].train_loss, rp.history[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(rn.history[e].val_loss, rp.history[e].val_loss) << "epoch " << e + 1;
  }
  const auto a = plain.params.tensors(c), b = nccl.params.tensors(c);
  for (size_t t = 0; t < a.size(); ++t)
    EXPECT_EQ(std::vector<float>(a[t].data, a[t].data + a[t].size()),
              std::vector<float>(b[t].data, b[t].data + b[t].size()))
        << a[t].name;
}

TEST(CudaGraphitTraining, WithoutADeviceTrainingOnCudaIsABackendErrorNotACpuRun) {
  if (cuda_device_present()) GTEST_SKIP() << "a CUDA device is present; covered by the tests that use it";
  cuda::register_cuda_backend();
  const GraphitConfig c = config_of(true, GraphitNorm::kLayer, 0, 0, 0, GraphitTask::kClassification);
  const GraphitDataset train = dataset(c, 8, 1);
  GraphitModel m = GraphitModel::create(c, 1);
  expect_error([&] { train_on("cuda", m, train, train, 1); }, ErrorCode::kBackend, "no CUDA device");
}

}  // namespace
}  // namespace inductive
