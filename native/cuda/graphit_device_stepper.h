// native/cuda/graphit_device_stepper.h - the GraphitStepper of a device backend (inductive/graphit_stepper.h), over
// any executor of GraphitDevicePass: the CUDA backend's (graphit_stepper_cuda.cpp) and, in the CPU test suite, the
// host executor's, so that the stepper's protocol (batches, sign flips, dropout draws, Adam's count and constants,
// pull/push for checkpoints) is checked through train_graphit against the CPU stepper where there is no GPU.
//
// Parameters, gradients, Adam's moments and BatchNorm's running statistics live in the executor's memory for the
// whole run; a step packs its batch on the host (LapPE sign flips and the batch hook as the CPU does), uploads it and
// brings back one loss per graph and the outputs (for the metric). pull() copies parameters, statistics and moments
// back in the CPU's layout, so checkpoints and model files are the CPU's files.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>

#include "graphit_device_pass.h"
#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/graphit_stepper.h"
#include "inductive/graphit_train.h"

namespace inductive::graphit_device {

// Data-parallel runs (several ranks) are not supported by the device steppers yet: Error{kBackend} saying so.
inline void check_device_graphit_options(const GraphitTrainOptions& o) {
  INDUCTIVE_CHECK(!o.communicator || o.communicator->size() <= 1, ErrorCode::kBackend,
                  "cuda: data-parallel GraphiT training across ranks does not run on CUDA yet; "
                  "train with --backend cpu under MPI, or on one GPU without it");
}

template <class Exec>
class DeviceGraphitStepper : public GraphitStepper {
 public:
  // `exec` (which must outlive the stepper) is made current before every call (exec.activate()).
  DeviceGraphitStepper(Exec& exec, GraphitModel& model, Adam& adam, const GraphitDataset& train,
                       const GraphitTrainOptions& o)
      : exec_(exec), config_(model.config), train_(train), o_(o), adam_options_(adam.options()) {
    check_device_graphit_options(o);
    exec_.activate();
    pass_ = std::make_unique<GraphitDevicePass<Exec>>(exec_, model);
    push(model, adam);
  }

  GraphitStepSums step(const std::vector<int>& order, int begin, int end, double lr, std::mt19937_64& rng) override {
    exec_.activate();
    const std::vector<int> idx(order.begin() + begin, order.begin() + end);
    GraphitBatch b = pack_graphit_batch(config_, train_, idx);
    if (o_.flip_pe_signs) b.flip_pe_signs(rng);
    if (o_.batch_hook) o_.batch_hook(b, rng);
    pass_->upload_batch(b, true);
    GraphitStepSums s;
    s.loss = pass_->loss(true, &rng, true, &out_);
    s.metric = graphit_batch_metric(config_, out_, b);
    s.weight = end - begin;
    INDUCTIVE_CHECK(std::isfinite(s.loss), ErrorCode::kInternal, "graphit train: loss became non-finite at step ",
                    steps_ + 1, " (lower the learning rate)");
    ++steps_;
    pass_->adam_step(elementwise::adam_coefficients(lr, adam_options_.beta1, adam_options_.beta2, adam_options_.eps,
                                                    adam_options_.weight_decay, steps_));
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
  MatF out_;
};

}  // namespace inductive::graphit_device
