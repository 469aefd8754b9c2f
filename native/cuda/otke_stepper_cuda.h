// native/cuda/otke_stepper_cuda.h - supervised OTKE training steps on one CUDA device (the "cuda" backend's
// OtkeStepper, inductive/otke_stepper.h).
//
// Parameters, gradients and Adam's moments live on the device for the whole run; each step uploads one batch
// (through a pinned staging buffer) and its labels, and brings back one number, the loss. pull() copies the
// parameters and moments back into the host model and Adam, in the CPU's layout, so checkpoints and model files
// are the CPU's files.
//
// Supported today: identity embedding (vector or k-mer inputs) with OT pooling (any p, q, eps, iters, positional
// weighting, scale) and the unrolled Sinkhorn gradient; a linear head. Anything else throws Error{kBackend} at
// construction, naming what is not supported, so the caller can train it on the CPU.
#pragma once

#include <memory>
#include <vector>

#include "inductive/otke_stepper.h"

namespace inductive::cuda {

class CudaOtkeStepper final : public OtkeStepper {
 public:
  // Copies the model's parameters and Adam's moments (if any) to the device `device` (already validated).
  CudaOtkeStepper(int device, const OtkeModel& model, const Adam& adam, const OtkeLossOptions& loss);
  ~CudaOtkeStepper() override;

  double step(const SetBatch& features, const std::vector<int32_t>& labels, double lr) override;
  MatF logits(const SetBatch& features) override;
  void pull(OtkeModel& model, Adam& adam) override;
  void push(const OtkeModel& model, const Adam& adam) override;

  // The mean loss of a batch and the gradients otke_loss would give (head, references), without a step: the
  // CUDA tests compare them with the CPU's.
  double loss_and_gradients(const SetBatch& features, const std::vector<int32_t>& labels, OtkeGradients* grads);

  // Peak device memory this stepper has allocated, in bytes (parameters, optimiser state, batch buffers).
  size_t device_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Throws Error{kBackend} naming the first part of this configuration the CUDA stepper does not run.
void check_cuda_otke_support(const OtkeConfig& config, const OtkeLossOptions& loss);

}  // namespace inductive::cuda
