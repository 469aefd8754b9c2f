#include "cuda_backend.h"

#include <cstdint>

#include "inductive/error.h"
#include "graphit_stepper_cuda.h"
#include "otke_stepper_cuda.h"
#include "sinkhorn_kernels.h"

namespace inductive::cuda {

CudaBackend::CudaBackend(int device) : device_(device) {
  const char* why = nullptr;
  const int count = device_count(&why);
  INDUCTIVE_CHECK(count > 0, ErrorCode::kBackend, "cuda: no CUDA device available (cudaGetDeviceCount: ", why, ")");
  INDUCTIVE_CHECK(device >= 0 && device < count, ErrorCode::kBackend, "cuda: device ", device,
                  " does not exist: this machine has ", count, " CUDA device(s), expected cuda:0..cuda:", count - 1);
  check(cudaSetDevice(device_), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
  name_ = "cuda:" + std::to_string(device_) + " (" + prop.name + ")";
  stream_ = std::make_unique<Stream>();
}

CudaBackend::~CudaBackend() {
  // The stream belongs to our device; destroy it there even if the thread switched devices meanwhile.
  (void)cudaSetDevice(device_);
  stream_.reset();
}

void CudaBackend::sinkhorn_log(const SinkhornProblem<float>& pr, const SinkhornOptions& o,
                               const SinkhornOutput<float>& out) {
  // The CPU's checks, in the CPU's order, so both backends reject the same input with the same Error.
  o.validate();
  pr.validate("sinkhorn");
  INDUCTIVE_CHECK(out.plan != nullptr, ErrorCode::kInvalidArgument, "sinkhorn: no plan buffer given");

  check(cudaSetDevice(device_), "cudaSetDevice");  // the current device is per host thread
  const cudaStream_t s = stream_->get();
  const size_t batch = static_cast<size_t>(pr.batch);
  const size_t matrix = batch * pr.n_max * pr.p_max * sizeof(float);
  const size_t rows = batch * pr.n_max * sizeof(float), cols = batch * pr.p_max * sizeof(float);

  // The cost goes straight into the plan buffer: the kernel turns it into logits and then into the plan in place.
  DeviceBuffer plan = upload(pr.cost, matrix, s);
  DeviceBuffer n = upload(pr.n, batch * sizeof(int32_t), s);
  DeviceBuffer p = upload(pr.p, batch * sizeof(int32_t), s);
  DeviceBuffer a = upload(pr.a, rows, s);
  DeviceBuffer b = upload(pr.b, cols, s);
  DeviceBuffer f(out.f ? rows : 0), g(out.g ? cols : 0);
  DeviceBuffer n_iter(out.n_iter ? batch * sizeof(int32_t) : 0);
  DeviceBuffer err(out.marginal_err ? batch * sizeof(float) : 0);
  DeviceBuffer conv(out.converged ? batch * sizeof(uint8_t) : 0);
  DeviceBuffer value(out.cost_value ? batch * sizeof(float) : 0);
  const SinkhornLaunch launch{s, true};
  DeviceBuffer workspace(sinkhorn_workspace_bytes(pr.batch, pr.n_max, pr.p_max, launch));

  SinkhornProblem<float> dp = pr;
  dp.cost = plan.as<float>();
  dp.n = n.as<int32_t>();
  dp.p = p.as<int32_t>();
  dp.a = a.as<float>();
  dp.b = b.as<float>();
  const SinkhornOutput<float> dout{plan.as<float>(), f.as<float>(),      g.as<float>(),    n_iter.as<int32_t>(),
                                   err.as<float>(),  conv.as<uint8_t>(), value.as<float>()};
  sinkhorn_log_device(dp, o, dout, workspace.data(), workspace.bytes(), launch);

  // Wait for the kernel before touching the caller's memory, so a failed run leaves every output as it was.
  check(cudaStreamSynchronize(s), "sinkhorn kernel");
  download(out.plan, plan, s);
  download(out.f, f, s);
  download(out.g, g, s);
  download(out.n_iter, n_iter, s);
  download(out.marginal_err, err, s);
  download(out.converged, conv, s);
  download(out.cost_value, value, s);
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

std::unique_ptr<OtkeStepper> CudaBackend::otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) {
  return std::make_unique<CudaOtkeStepper>(device_, model, adam, loss);
}

std::unique_ptr<GraphitStepper> CudaBackend::graphit_stepper(GraphitModel& model, Adam& adam,
                                                             const GraphitDataset& train,
                                                             const GraphitTrainOptions& options) {
  return make_cuda_graphit_stepper(device_, model, adam, train, options);
}

MatF CudaBackend::graphit_predict(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size) {
  return cuda_graphit_predict(device_, model, graphs, batch_size);
}

std::vector<MatF> CudaBackend::graphit_attention_maps(const GraphitModel& model, const GraphitGraph& graph,
                                                      MatF* outputs) {
  return cuda_graphit_attention_maps(device_, model, graph, outputs);
}

}  // namespace inductive::cuda
