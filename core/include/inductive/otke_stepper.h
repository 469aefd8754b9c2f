// inductive/otke_stepper.h - the seam between supervised OTKE training and where its arithmetic runs.
//
// train_otke_supervised (otke_train.h) owns the protocol: epochs, shuffling, the lr schedule, early stopping, head
// refits, checkpoints. Every step and every evaluation goes through an OtkeStepper, which owns the parameters,
// their gradients and Adam's moments on its backend for the whole run. The CPU stepper trains the host model in
// place (it is the reference); a device stepper (native/cuda) keeps everything on the GPU and copies parameters
// back only when pull() asks for them (best model, checkpoints, head refits). Across ranks, one wrapper
// (make_data_parallel_otke_stepper) splits the steps of either.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "inductive/adam.h"
#include "inductive/otke_train.h"

namespace inductive {

class Communicator;

// Where a data-parallel run's step time goes (zero for one process).
struct OtkeStepStats {
  int64_t steps = 0;
  double compute_seconds = 0;    // forward and backward on this rank's share
  double allreduce_seconds = 0;  // summing the gradients across ranks (waiting for the slowest rank included)
  int64_t allreduce_bytes = 0;   // per step: what each rank contributes to the sum
};

class OtkeStepper {
 public:
  virtual ~OtkeStepper() = default;
  // Mean cross-entropy of the batch under the current parameters, then one Adam step at learning rate `lr`.
  virtual double step(const SetBatch& features, const std::vector<int32_t>& labels, double lr) = 0;
  // The training set later steps draw from (validated by the caller; it must outlive the stepper). A device stepper
  // keeps a copy on the device when it fits, so that a step moves only indices and labels; by default the sets are
  // gathered on the host and passed to step().
  virtual void bind(const SetBatch& data) { bound_ = &data; }
  // step() on the sets `indices` of the bound data, in that order.
  virtual double step_on(const std::vector<int>& indices, const std::vector<int32_t>& labels, double lr) {
    INDUCTIVE_CHECK(bound_ != nullptr, ErrorCode::kInternal, "otke stepper: step_on before bind");
    return step(bound_->gather(indices), labels, lr);
  }
  // Head logits (batch x classes) under the current parameters.
  virtual MatF logits(const SetBatch& features) = 0;
  // The embeddings Phi (batch x output_dim) under the current parameters; models without a head too.
  virtual MatF embed(const SetBatch& features) = 0;
  // Copies the current parameters into `model` and the optimiser state into `adam` (no-op for the CPU stepper,
  // which trains them in place).
  virtual void pull(OtkeModel& model, Adam& adam) = 0;
  // The host changed `model` or `adam` (resumed checkpoint, refitted head): take them over.
  virtual void push(const OtkeModel& model, const Adam& adam) = 0;
  virtual OtkeStepStats stats() const { return {}; }

  // A data-parallel step's two halves (make_data_parallel_otke_stepper). share_gradients: the mean loss of the sets
  // `indices` of the bound data and its gradients (the layers this stepper trains, shaped as otke_loss gives them;
  // zeros for no sets), with the dropout masks of the next step on rank `rank`; nothing changes. apply_gradients: one
  // Adam step from `grads` (the ranks' mean). A stepper that cannot split its step throws Error{kBackend} (the
  // default).
  virtual double share_gradients(const std::vector<int>& indices, const std::vector<int32_t>& labels, int rank,
                                 OtkeGradients* grads);
  virtual void apply_gradients(OtkeGradients& grads, double lr);

  // Ranks that sum where the gradients are (NCCL between GPUs). A stepper that can returns true from
  // sums_on_device(comm) (a collective call: every rank makes it at the same step); then share_gradients(..., nullptr)
  // leaves this rank's gradients in place, sum_gradients_on_device(scale) replaces them by the ranks' sum of scale x
  // their gradients (scale = this rank's share of the batch) and returns the bytes each rank sent, and
  // apply_gradients_on_device(lr) takes the Adam step with them. By default false: the sums go through the host.
  virtual bool sums_on_device(Communicator& comm) { return false; }
  virtual int64_t sum_gradients_on_device(float scale);
  virtual void apply_gradients_on_device(double lr);

 protected:
  const SetBatch* bound_ = nullptr;
};

// The reference stepper: otke_loss and Adam on the host model and optimiser, which must outlive it.
std::unique_ptr<OtkeStepper> make_cpu_otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss);

// Data parallelism over `comm` (which must outlive it) for any stepper that splits its steps (share_gradients,
// apply_gradients): step_on() gives each rank its contiguous share of the batch, sums the ranks' gradients (in float,
// Communicator::allreduce_sum_float) and loss, and takes the same Adam step everywhere, so N ranks train the
// one-process model up to float rounding (a stepper that sums_on_device sums there instead). Everything else goes to
// `inner`; stats() times the two parts.
std::unique_ptr<OtkeStepper> make_data_parallel_otke_stepper(std::unique_ptr<OtkeStepper> inner, Communicator& comm);

// Zero gradients with the shapes otke_loss gives `model` under `loss` (a rank whose share of a batch is empty).
OtkeGradients zero_otke_gradients(const OtkeModel& model, const OtkeLossOptions& loss);

// `loss` restricted to the layers this model has (a default OtkeLossOptions asks for all of them): every stepper
// trains exactly these.
OtkeLossOptions learning_layers(const OtkeConfig& config, OtkeLossOptions loss);

// What the trainer asks of the layers, from its options and the model's configuration.
OtkeLossOptions otke_loss_options(const OtkeConfig& config, const OtkeTrainOptions& options);

}  // namespace inductive
