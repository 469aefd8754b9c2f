// tests/device/host_pass_backend.h - a Backend whose GraphiT steps run the device stepper
// (native/cuda/graphit_device_stepper.h) on the host executor, as `--backend cuda` runs it on a GPU; under a
// communicator of several ranks, data parallel through StagedAllreduce (what NCCL does on GPUs). Sinkhorn runs on
// the CPU; OTKE is not its concern.
#pragma once

#include <memory>
#include <string>

#include "device_allreduce.h"
#include "graphit_device_stepper.h"
#include "graphit_exec_host.h"
#include "inductive/backend_registry.h"
#include "inductive/error.h"

namespace inductive::testing {

class HostPassBackend final : public Backend {
 public:
  // `bucket`: gradients per bucket of the sum over ranks (small ones give several buckets on a small model).
  explicit HostPassBackend(int64_t bucket = device::kGradientBucketValues) : bucket_(bucket) {}
  using Stepper = graphit_device::DeviceGraphitStepper<graphit_device::HostExec>;
  // Whether the steppers it makes prefetch the next batch (the default, as on CUDA).
  bool prefetch = true;
  // The last stepper it made (alive while its training run is).
  const Stepper* last_stepper = nullptr;
  std::string name() const override { return "host-pass"; }
  void sinkhorn_log(const SinkhornProblem<float>& p, const SinkhornOptions& o,
                    const SinkhornOutput<float>& out) override {
    make_cpu_backend()->sinkhorn_log(p, o, out);
  }
  std::unique_ptr<OtkeStepper> otke_stepper(OtkeModel&, Adam&, const OtkeLossOptions&) override {
    INDUCTIVE_FAIL(ErrorCode::kBackend, "host-pass: no OTKE");
  }
  std::unique_ptr<GraphitStepper> graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                  const GraphitTrainOptions& options) override {
    allreduce_.reset();
    if (options.communicator && options.communicator->size() > 1)
      allreduce_ = std::make_unique<device::StagedAllreduce<graphit_device::HostExec>>(exec_, *options.communicator);
    auto stepper = std::make_unique<Stepper>(exec_, model, adam, train, options, allreduce_.get(), bucket_);
    stepper->set_prefetch(prefetch);
    last_stepper = stepper.get();
    return stepper;
  }

 private:
  graphit_device::HostExec exec_;
  int64_t bucket_;
  std::unique_ptr<device::DeviceAllreduce> allreduce_;
};

}  // namespace inductive::testing
