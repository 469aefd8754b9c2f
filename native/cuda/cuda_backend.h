// native/cuda/cuda_backend.h - the "cuda" Backend: whole operations on one CUDA device, host pointers in and out.
//
// make_backend("cuda") / make_backend("cuda:<device>") reach it once register_cuda_backend() has run (the CLI does
// so at start-up). Constructing it on a machine without a usable device throws Error{kBackend} naming the reason;
// there is no CPU fallback. One instance serves one host thread at a time (it owns one stream).
#pragma once

#include <memory>
#include <string>

#include "cuda_util.h"
#include "inductive/backend_registry.h"

namespace inductive::cuda {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);  // throws Error{kBackend}: no device, no such device, or a failed call
  ~CudaBackend() override;

  std::string name() const override { return name_; }  // "cuda:0 (NVIDIA H100 80GB HBM3)"
  int device() const { return device_; }

  // Validates exactly like the CPU (same errors, before any output is written), then copies the batch to the
  // device, runs sinkhorn_log_device and copies the requested outputs back.
  void sinkhorn_log(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                    const SinkhornOutput<float>& out) override;

  // Supervised OTKE steps on this device (otke_stepper_cuda.h); Error{kBackend} for configurations it cannot run.
  std::unique_ptr<OtkeStepper> otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) override;
  // GraphiT training on this device (graphit_stepper_cuda.h); data parallel over NCCL with several ranks.
  std::unique_ptr<GraphitStepper> graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                  const GraphitTrainOptions& options) override;
  // GraphiT inference on this device (graphit_stepper_cuda.h).
  MatF graphit_predict(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size) override;
  std::vector<MatF> graphit_attention_maps(const GraphitModel& model, const GraphitGraph& graph,
                                           MatF* outputs) override;

 private:
  int device_;
  std::string name_;
  std::unique_ptr<Stream> stream_;  // created after the device is selected
};

std::unique_ptr<Backend> make_cuda_backend(int device);

// Registers the "cuda" factory with inductive::make_backend. Idempotent, thread-safe.
void register_cuda_backend();

}  // namespace inductive::cuda
