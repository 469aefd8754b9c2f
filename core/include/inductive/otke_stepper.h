// inductive/otke_stepper.h - the seam between supervised OTKE training and where its arithmetic runs.
//
// train_otke_supervised (otke_train.h) owns the protocol: epochs, shuffling, the lr schedule, early stopping, head
// refits, checkpoints. Every step and every evaluation goes through an OtkeStepper, which owns the parameters,
// their gradients and Adam's moments on its backend for the whole run. The CPU stepper trains the host model in
// place (it is the reference); a device stepper (native/cuda) keeps everything on the GPU and copies parameters
// back only when pull() asks for them (best model, checkpoints, head refits).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "inductive/adam.h"
#include "inductive/otke_train.h"

namespace inductive {

class OtkeStepper {
 public:
  virtual ~OtkeStepper() = default;
  // Mean cross-entropy of the batch under the current parameters, then one Adam step at learning rate `lr`.
  virtual double step(const SetBatch& features, const std::vector<int32_t>& labels, double lr) = 0;
  // Head logits (batch x classes) under the current parameters.
  virtual MatF logits(const SetBatch& features) = 0;
  // Copies the current parameters into `model` and the optimiser state into `adam` (no-op for the CPU stepper,
  // which trains them in place).
  virtual void pull(OtkeModel& model, Adam& adam) = 0;
  // The host changed `model` or `adam` (resumed checkpoint, refitted head): take them over.
  virtual void push(const OtkeModel& model, const Adam& adam) = 0;
};

// The reference stepper: otke_loss and Adam on the host model and optimiser, which must outlive it.
std::unique_ptr<OtkeStepper> make_cpu_otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss);

// What the trainer asks of the layers, from its options and the model's configuration.
OtkeLossOptions otke_loss_options(const OtkeConfig& config, const OtkeTrainOptions& options);

}  // namespace inductive
