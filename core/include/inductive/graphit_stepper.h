// inductive/graphit_stepper.h - the seam between GraphiT training and where its arithmetic runs.
//
// train_graphit (graphit_train.h) owns the protocol: epochs, the shuffle and every random draw of an epoch, the lr
// schedule, metrics, checkpoints, keep-best and the check that ranks agree. Every training step and every
// evaluation goes through a GraphitStepper, which owns the parameters, their gradients and Adam's moments on its
// backend for the whole run. The CPU stepper trains the host model in place and is the reference; a device stepper
// (the GPU issue) keeps everything on the device and copies parameters back only when pull() asks (checkpoints,
// keep-best, the end of the run). Backend::graphit_stepper makes one (inductive/backend.h).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "inductive/adam.h"
#include "inductive/graphit_train.h"

namespace inductive {

// What a training batch adds to its epoch's sums: loss * weight and metric * weight (one process: the batch's mean
// loss and metric and its graph count; data parallel: the sums across ranks and weight 1).
struct GraphitStepSums {
  double loss = 0, metric = 0, weight = 0;
};

class GraphitStepper {
 public:
  virtual ~GraphitStepper() = default;
  // One training step on the graphs order[begin, end) of the training set the stepper was made with: training-mode
  // forward and backward (LapPE sign flips, dropout and the batch hook draw from `rng`, the epoch's generator, as
  // the one-process run draws them), then an Adam step at `lr`. Data parallel with a communicator: each rank takes
  // its share and the sums and gradients are added across ranks, so every rank returns the same sums.
  virtual GraphitStepSums step(const std::vector<int>& order, int begin, int end, double lr, std::mt19937_64& rng) = 0;
  // Adam steps taken so far (the schedule's global step).
  virtual int64_t steps() const = 0;
  // Evaluation-mode loss, metric and outputs under the current parameters (inductive::evaluate_graphit).
  virtual GraphitEvaluation evaluate(const GraphitDataset& data) = 0;
  // A hash of the current parameters (hash_floats over every tensor, in model-file order): ranks compare it.
  virtual uint64_t parameter_hash() = 0;
  // Copies the current parameters and BatchNorm statistics into `model` and the optimiser state into `adam`
  // (no-op for the CPU stepper, which trains them in place).
  virtual void pull(GraphitModel& model, Adam& adam) = 0;
  // The host changed `model` or `adam` (a resumed checkpoint): take them over.
  virtual void push(const GraphitModel& model, const Adam& adam) = 0;
};

// The reference stepper: GraphitModel::loss and Adam on the host model and optimiser, which must outlive it, as must
// `train`. options.communicator (several ranks) makes step() data parallel.
std::unique_ptr<GraphitStepper> make_cpu_graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                         const GraphitTrainOptions& options);

}  // namespace inductive
