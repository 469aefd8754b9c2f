// native/cuda/graphit_device_stepper.h - the GraphitStepper of a device backend (inductive/graphit_stepper.h), over
// any executor of GraphitDevicePass: the CUDA backend's (graphit_stepper_cuda.cpp) and, in the CPU test suite, the
// host executor's, so that the stepper's protocol (batches, sign flips, dropout draws, Adam's count and constants,
// pull/push for checkpoints, shares of a data-parallel step) is checked through train_graphit against the CPU
// stepper where there is no GPU.
//
// Parameters, gradients, Adam's moments and BatchNorm's running statistics live in the executor's memory for the
// whole run; a step packs its batch on the host (LapPE sign flips and the batch hook as the CPU does), uploads it and
// brings back one loss per graph and the outputs (for the metric). While the device runs a step's passes, the host
// packs the next batch of the same size from the same order, with a copy of the epoch's generator, and stages it
// (page-locked memory and a copy stream on CUDA, into the batch slot the passes are not reading); the next step takes
// it when it asks for exactly those graphs from exactly that generator state, so a guess never changes the run. pull()
// copies parameters, statistics and moments back in the CPU's layout, so checkpoints and model files are the CPU's
// files.
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
    // The batch: prefetched during the last step when that step guessed this one (then it is already on its way to
    // the device, and `rng` moves on by the draws its packing took), else packed and staged now.
    if (!take_ahead(order, begin, end, rng)) {
      now_ = pack(order, begin, end, rng);
      if (now_.hi > now_.lo) pass_->stage_batch(now_.batch, true);
    }
    const int lo = now_.lo, hi = now_.hi;
    if (hi > lo) {
      pass_->use_staged();
      const GraphitSharePosition at = graphit_share_position(train_, order, begin, lo);  // one-process masks
      pass_->set_batch_position(at.nodes, at.squares);
      pass_->enqueue_loss(true, &rng, true, static_cast<float>(static_cast<double>(hi - lo) / (end - begin)),
                          buckets_.get());
    } else {
      pass_->clear_batch();  // still takes part in BatchNorm's sums and in the gradients' (zeros); draws the key
      pass_->enqueue_loss(true, &rng, true, 0.0f, buckets_.get());
    }
    // While the device runs this step's passes, the host packs the next batch of the same size and stages it.
    prefetch(order, end, end + (end - begin), rng);
    double loss = 0, metric = 0;
    if (hi > lo) {
      loss = pass_->finish_loss(&out_);
      metric = graphit_batch_metric(config_, out_, now_.batch);
    } else {
      pass_->finish_loss(nullptr);
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

  // Steps whose batch had been prefetched during the step before (the others were packed when they came).
  int64_t prefetched_steps() const { return prefetched_; }
  // Off: every batch is packed when its step comes (the same arithmetic, no overlap; for comparisons).
  void set_prefetch(bool on) { prefetch_on_ = on; }

  int64_t steps() const override { return steps_; }

  GraphitEvaluation evaluate(const GraphitDataset& data) override {
    exec_.activate();
    ahead_.valid = false;  // its batches take the staging slot
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
    ahead_.valid = false;
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

  // A step's share of its batch, packed: the graphs order[lo, hi) of order[begin, end).
  struct Packed {
    int lo = 0, hi = 0;
    GraphitBatch batch;
  };
  // The guess made during the last step: the batch order[begin, end) (its graph ids), packed and staged from the
  // generator's state `before`, which its draws left at `after`.
  struct Ahead {
    bool valid = false;
    std::vector<int> graphs;
    std::mt19937_64 before, after;
    Packed packed;
  };
  Packed now_;
  Ahead ahead_;
  int64_t prefetched_ = 0;
  bool prefetch_on_ = true;

  // Packs this rank's share of order[begin, end) with the CPU stepper's draws from `rng`: the serial run's sign
  // flips (the draws of the graphs before the share skipped, those after it too), then the batch hook.
  Packed pack(const std::vector<int>& order, int begin, int end, std::mt19937_64& rng) const {
    const Shard share = comm_ ? shard_of(end - begin, comm_->rank(), comm_->size()) : Shard{0, end - begin};
    Packed p;
    p.lo = begin + static_cast<int>(share.begin);
    p.hi = begin + static_cast<int>(share.end);
    const auto flips = static_cast<unsigned long long>(config_.pe_dim);
    if (p.hi == p.lo) {
      if (o_.flip_pe_signs) rng.discard(flips * (end - begin));
      return p;
    }
    p.batch = pack_graphit_batch(config_, train_, std::vector<int>(order.begin() + p.lo, order.begin() + p.hi));
    if (o_.flip_pe_signs) rng.discard(flips * (p.lo - begin));
    if (o_.flip_pe_signs) p.batch.flip_pe_signs(rng);
    if (o_.flip_pe_signs) rng.discard(flips * (end - p.hi));
    if (o_.batch_hook) o_.batch_hook(p.batch, rng);
    return p;
  }

  // Packs and stages order[begin, min(end, size)) from a copy of `rng`, as the next step would, in case it is the
  // next step's batch. Not with a batch hook (user code, which a guess must not run twice), nor past the order's end
  // (the epoch's last step: the next order is another shuffle).
  void prefetch(const std::vector<int>& order, int begin, int end, const std::mt19937_64& rng) {
    ahead_.valid = false;
    end = std::min(end, static_cast<int>(order.size()));
    if (!prefetch_on_ || o_.batch_hook || begin >= end) return;
    ahead_.graphs.assign(order.begin() + begin, order.begin() + end);
    ahead_.before = rng;
    ahead_.after = rng;
    ahead_.packed = pack(order, begin, end, ahead_.after);
    if (ahead_.packed.hi > ahead_.packed.lo) pass_->stage_batch(ahead_.packed.batch, true);
    ahead_.valid = true;
  }

  // Takes the prefetched batch when it is order[begin, end) packed from this state of `rng` (then moves `rng` on
  // as packing it did); a wrong guess is dropped.
  bool take_ahead(const std::vector<int>& order, int begin, int end, std::mt19937_64& rng) {
    const bool hit = ahead_.valid && static_cast<int>(ahead_.graphs.size()) == end - begin &&
                     std::equal(ahead_.graphs.begin(), ahead_.graphs.end(), order.begin() + begin) &&
                     ahead_.before == rng;
    ahead_.valid = false;
    if (!hit) return false;
    rng = ahead_.after;
    now_ = std::move(ahead_.packed);
    ++prefetched_;
    return true;
  }
};

}  // namespace inductive::graphit_device
