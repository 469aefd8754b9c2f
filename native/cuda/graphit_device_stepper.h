// native/cuda/graphit_device_stepper.h - the GraphitStepper of a device backend (inductive/graphit_stepper.h), over
// any executor of GraphitDevicePass: the CUDA backend's (graphit_stepper_cuda.cpp) and, in the CPU test suite, the
// host executor's, so that the stepper's protocol (batches, sign flips, dropout draws, Adam's count and constants,
// pull/push for checkpoints, shares of a data-parallel step) is checked through train_graphit against the CPU
// stepper where there is no GPU.
//
// Parameters, gradients, Adam's moments and BatchNorm's running statistics live in the executor's memory for the
// whole run; a step packs its batch on the host (LapPE sign flips and the batch hook as the CPU does), uploads it and
// brings back one loss per graph and the outputs (for the metric). pull() copies parameters, statistics and moments
// back in the CPU's layout, so checkpoints and model files are the CPU's files.
//
// Data parallel (given a DeviceAllreduce over the run's communicator): each rank takes its contiguous share of the
// batch with the CPU stepper's protocol (graphit_stepper_cpu.cpp: the serial run's sign-flip draws skipped around
// the share, its dropout masks those of its place in the batch, the share's loss weighted by its fraction of the
// batch, BatchNorm over the whole batch, a rank without graphs summing zeros); the gradients are summed bucket by
// bucket during the backward pass, the loss and metric on the host; then every rank takes the same Adam step.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>

#include "device_allreduce.h"
#include "graphit_device_pass.h"
#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/graphit_stepper.h"
#include "inductive/graphit_train.h"

namespace inductive::graphit_device {

template <class Exec>
class DeviceGraphitStepper : public GraphitStepper {
 public:
  // `exec` (which must outlive the stepper) is made current before every call (exec.activate()). `allreduce`
  // (which must outlive it too) makes the steps data parallel over o.communicator; it is required when that
  // communicator has several ranks. `bucket`: gradients per bucket of the sum over ranks.
  DeviceGraphitStepper(Exec& exec, GraphitModel& model, Adam& adam, const GraphitDataset& train,
                       const GraphitTrainOptions& o, device::DeviceAllreduce* allreduce = nullptr,
                       int64_t bucket = device::kGradientBucketValues)
      : exec_(exec), config_(model.config), train_(train), o_(o), adam_options_(adam.options()) {
    const bool several = o.communicator && o.communicator->size() > 1;
    INDUCTIVE_CHECK(!several || allreduce, ErrorCode::kInternal,
                    "graphit device stepper: a run over several ranks without a device allreduce");
    INDUCTIVE_CHECK(!allreduce || (o.communicator && allreduce->ranks() == o.communicator->size()),
                    ErrorCode::kInternal,
                    "graphit device stepper: the device allreduce and the run's communicator disagree on the ranks");
    if (allreduce) {
      comm_ = o.communicator;
      buckets_ = std::make_unique<device::GradientBuckets>(*allreduce, bucket);
    }
    exec_.activate();
    pass_ = std::make_unique<GraphitDevicePass<Exec>>(exec_, model);
    pass_->set_allreduce(allreduce);
    push(model, adam);
  }

  // This rank's share of the batch (all of it in one process), taken as the CPU stepper takes it.
  GraphitStepSums step(const std::vector<int>& order, int begin, int end, double lr, std::mt19937_64& rng) override {
    exec_.activate();
    const Shard share = comm_ ? shard_of(end - begin, comm_->rank(), comm_->size()) : Shard{0, end - begin};
    const int lo = begin + static_cast<int>(share.begin), hi = begin + static_cast<int>(share.end);
    const auto flips = static_cast<unsigned long long>(config_.pe_dim);
    double loss = 0, metric = 0;
    if (hi > lo) {
      const std::vector<int> idx(order.begin() + lo, order.begin() + hi);
      GraphitBatch b = pack_graphit_batch(config_, train_, idx);
      // The serial run's sign flips: the draws of the graphs before this share are skipped, those after it too.
      if (o_.flip_pe_signs) rng.discard(flips * (lo - begin));
      if (o_.flip_pe_signs) b.flip_pe_signs(rng);
      if (o_.flip_pe_signs) rng.discard(flips * (end - hi));
      if (o_.batch_hook) o_.batch_hook(b, rng);
      pass_->upload_batch(b, true);
      const GraphitSharePosition at = graphit_share_position(train_, order, begin, lo);  // one-process masks
      pass_->set_batch_position(at.nodes, at.squares);
      loss = pass_->loss(true, &rng, true, &out_, static_cast<float>(static_cast<double>(hi - lo) / (end - begin)),
                         buckets_.get());
      metric = graphit_batch_metric(config_, out_, b);
    } else {
      if (o_.flip_pe_signs) rng.discard(flips * (end - begin));
      pass_->clear_batch();  // still takes part in BatchNorm's sums and in the gradients' (zeros); draws the key
      pass_->loss(true, &rng, true, nullptr, 0.0f, buckets_.get());
    }
    // The step's sums (loss and metric times graphs; in one process, this share's) on every rank.
    double sums[2] = {loss * (hi - lo), metric * (hi - lo)};
    if (comm_) comm_->allreduce_sum(sums, 2);
    // Checked on the sum, so that every rank stops together; then the same Adam step on every rank.
    INDUCTIVE_CHECK(std::isfinite(sums[0]), ErrorCode::kInternal, "graphit train: loss became non-finite at step ",
                    steps_ + 1, " (lower the learning rate)");
    ++steps_;
    pass_->adam_step(elementwise::adam_coefficients(lr, adam_options_.beta1, adam_options_.beta2, adam_options_.eps,
                                                    adam_options_.weight_decay, steps_));
    GraphitStepSums s;
    s.loss = sums[0];
    s.metric = sums[1];
    s.weight = 1;
    return s;
  }

  int64_t steps() const override { return steps_; }

  GraphitEvaluation evaluate(const GraphitDataset& data) override {
    exec_.activate();
    return evaluate_graphit_batches(config_, data, std::max(1, o_.eval_batch_size),
                                    [&](const GraphitBatch& b, MatF& out) {
                                      pass_->upload_batch(b, true);
                                      return pass_->loss(false, nullptr, false, &out);
                                    });
  }

  uint64_t parameter_hash() override {
    exec_.activate();
    return hash_floats(pass_->download_parameters().data(), pass_->parameter_count());
  }

  void pull(GraphitModel& model, Adam& adam) override {
    exec_.activate();
    pass_->pull_model(model);
    adam.options() = adam_options_;
    adam.restore(pass_->pull_moments(), steps_);
  }

  void push(const GraphitModel& model, const Adam& adam) override {
    exec_.activate();
    pass_->push_model(model);
    pass_->push_moments(adam);
    adam_options_ = adam.options();
    steps_ = adam.steps();
  }

 private:
  Exec& exec_;
  GraphitConfig config_;
  const GraphitDataset& train_;
  const GraphitTrainOptions& o_;
  AdamOptions adam_options_;
  int64_t steps_ = 0;
  std::unique_ptr<GraphitDevicePass<Exec>> pass_;
  Communicator* comm_ = nullptr;  // data parallel: the run's ranks
  std::unique_ptr<device::GradientBuckets> buckets_;
  MatF out_;
};

}  // namespace inductive::graphit_device
