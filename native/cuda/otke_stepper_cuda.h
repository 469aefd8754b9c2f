// native/cuda/otke_stepper_cuda.h - supervised OTKE training steps on one CUDA device (the "cuda" backend's
// OtkeStepper, inductive/otke_stepper.h).
//
// Parameters, gradients and Adam's moments live on the device for the whole run. The training set is uploaded
// once when it fits (bind), and a step then sends only indices and labels; otherwise each step uploads its batch
// through a pinned staging buffer. A step brings back one number, the loss. pull() copies the
// parameters and moments back into the host model and Adam, in the CPU's layout, so checkpoints and model files
// are the CPU's files.
//
// Supported today: every configuration the CPU trains but the attention-plan and sinusoidal ablations. Inputs:
// vectors, k-mers or tokens (the table learns on the device, under any embedding). Embeddings: identity, conv (filters
// on the device), Nystrom (anchors learnt: the device computes both parts of their gradient, the host finishes it
// with one K x K eigendecomposition, steps them and refactors, as the CPU does). Pooling: OT (any p, q, eps, iters,
// positional weighting, scale; the unrolled or the implicit Sinkhorn gradient), mean or max. Heads: linear, MLP with
// dropout (the CPU's masks), multilabel. Models without a head can embed. Anything else throws Error{kBackend} at
// construction (check_cuda_otke_support), naming what is not supported, so the caller can run it on the CPU.
#pragma once

#include <memory>
#include <vector>

#include "inductive/otke_stepper.h"

namespace inductive::cuda {

// How data-parallel ranks sum this stepper's gradients (make_data_parallel_otke_stepper).
enum class RankSums {
  kNccl,       // on the devices through NCCL when there are several ranks (one GPU each): the default
  kNcclAlone,  // through NCCL even for one rank (the GPU check's 1-GPU NCCL smoke test)
  kHost,       // through the host and the Communicator (ranks sharing one GPU, as threads in the tests)
};

class CudaOtkeStepper final : public OtkeStepper {
 public:
  // Copies the model's parameters and Adam's moments (if any) to the device `device` (already validated).
  CudaOtkeStepper(int device, const OtkeModel& model, const Adam& adam, const OtkeLossOptions& loss,
                  RankSums sums = RankSums::kNccl);
  ~CudaOtkeStepper() override;

  double step(const SetBatch& features, const std::vector<int32_t>& labels, double lr) override;
  // Uploads the training set once when it fits in half of the device's free memory (then a step moves only its
  // indices and labels); otherwise steps gather on the host and upload each batch. resident() says which.
  void bind(const SetBatch& data) override;
  double step_on(const std::vector<int>& indices, const std::vector<int32_t>& labels, double lr) override;
  bool resident() const;
  // Caps the size of a dataset bind() may keep on the device (tests use 0 to exercise the streamed path).
  void set_resident_limit(size_t bytes);
  MatF logits(const SetBatch& features) override;
  MatF embed(const SetBatch& features) override;
  void pull(OtkeModel& model, Adam& adam) override;
  void push(const OtkeModel& model, const Adam& adam) override;

  // The mean loss of a batch and the gradients otke_loss would give (head, references), without a step: the
  // CUDA tests compare them with the CPU's.
  double loss_and_gradients(const SetBatch& features, const std::vector<int32_t>& labels, OtkeGradients* grads);
  // A data-parallel step's halves (make_data_parallel_otke_stepper). Through NCCL (RankSums): the gradients stay on
  // the device, each buffer scaled by the rank's share and summed on the NCCL stream (the Nystrom anchors' gradient,
  // which the host finishes, through the Communicator), then Adam on the device. Through the host: the gradients
  // come to the host, the ranks' sum goes through the Communicator, and the mean goes back for the Adam step.
  double share_gradients(const std::vector<int>& indices, const std::vector<int32_t>& labels, int rank,
                         OtkeGradients* grads) override;
  void apply_gradients(OtkeGradients& grads, double lr) override;
  bool sums_on_device(Communicator& comm) override;
  int64_t sum_gradients_on_device(float scale) override;
  void apply_gradients_on_device(double lr) override;

  // Device memory of a step, in bytes: parameters, optimiser state and batch buffers (not the resident dataset).
  size_t device_bytes() const;

 private:
  // Checks `features`, uploads them and runs the forward pass without a tape (embed, logits).
  void forward_inference(const SetBatch& features);
  // Checks and uploads a batch, then forward and backward (and with `grads`, brings them back); dropout_rank >= 0:
  // with the next Adam step's dropout mask on that rank (a training step), else as loss_and_gradients (otke_loss's
  // options).
  double run_batch(const SetBatch& features, const std::vector<int32_t>& labels, OtkeGradients* grads,
                   int dropout_rank);
  // A resident batch's indices and labels (the host batch checks' counterpart).
  void check_resident_batch(const std::vector<int>& indices, const std::vector<int32_t>& labels) const;
  struct State;
  std::unique_ptr<State> s_;
};

// Throws Error{kBackend} naming the first part of this configuration the CUDA stepper does not run.
void check_cuda_otke_support(const OtkeConfig& config, const OtkeLossOptions& loss);

}  // namespace inductive::cuda
