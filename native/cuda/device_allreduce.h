// native/cuda/device_allreduce.h - sums over ranks of buffers in an executor's memory: what a data-parallel device
// pass needs (BatchNorm's statistics inside the forward and backward passes, and the gradients, bucket by bucket as
// the backward pass finishes them).
//
// Two implementations: StagedAllreduce (here) goes through host memory and the run's Communicator (MPI); it serves
// the host executor, so that the CPU test suite runs the data-parallel device pass across real MPI processes. On
// CUDA, NcclAllreduce (nccl_allreduce.h) sums on the devices, the gradients on a stream of their own so that a
// bucket's sum overlaps the backward pass of the layers before it.
#pragma once

#include <cstdint>
#include <vector>

#include "inductive/communicator.h"

namespace inductive::device {

class DeviceAllreduce {
 public:
  virtual ~DeviceAllreduce() = default;
  virtual int ranks() const = 0;
  // Sums `count` doubles at `data` (executor memory) over the ranks, in the executor's order of operations: its next
  // operation sees the sums, the same bits on every rank.
  virtual void sum(double* data, int64_t count) = 0;
  // Starts the sum of a bucket of gradients; it may run while the executor goes on, so the caller leaves the bucket
  // alone until finish_gradients(), after which the executor's next operation sees every bucket summed.
  virtual void start_gradient_sum(float* data, int64_t count) = 0;
  virtual void finish_gradients() = 0;
};

// Gradients that the backward pass finishes from the end of the flat buffer towards its start (it runs the head,
// then the layers last to first, then the input embedding, while the buffer is in model-file order: inputs, layers
// first to last, head). ready(begin) says every gradient at >= begin is final: once the unsummed span above it
// holds `bucket` values, and the `begin` values still to come are a bucket's worth too, the span is started as one
// bucket (a last bucket smaller than that would pay a whole all-reduce latency for little: it joins the one before).
// finish() starts what is left and waits for all of them.
class GradientBuckets {
 public:
  GradientBuckets(DeviceAllreduce& allreduce, int64_t bucket) : allreduce_(allreduce), bucket_(bucket) {}

  // A new backward pass over `count` gradients at `grads`.
  void begin(float* grads, int64_t count) {
    grads_ = grads;
    pending_end_ = count;
  }
  void ready(int64_t begin) {
    if (pending_end_ - begin >= bucket_ && begin >= bucket_) start(begin);
  }
  void finish() {
    if (pending_end_ > 0) start(0);
    allreduce_.finish_gradients();
  }

 private:
  void start(int64_t begin) {
    allreduce_.start_gradient_sum(grads_ + begin, pending_end_ - begin);
    pending_end_ = begin;
  }

  DeviceAllreduce& allreduce_;
  int64_t bucket_;
  float* grads_ = nullptr;
  int64_t pending_end_ = 0;
};

// 128 K gradients (512 KB) per bucket. Each bucket pays the all-reduce's latency (2 (N - 1) hops of a ring), which
// for models of GraphiT's size is as large as the bytes' time, so buckets are few. bench/allreduce_model.py: config
// (b) of bench/graphit_bench (297 K parameters) sums in two buckets, the last five layers' while the backward pass
// runs the first five, which at 8-16 GPUs exposes 30-45 % less time than one message (and 10 % more at 64 GPUs,
// where the latency term rules); config (a) (92 K) is one bucket.
constexpr int64_t kGradientBucketValues = int64_t{1} << 17;

// Through host memory: download, Communicator::allreduce_sum (gradients in float, as the CPU steppers sum them and
// NCCL does; other sums in double), upload. Every call completes before it returns.
template <class Exec>
class StagedAllreduce final : public DeviceAllreduce {
 public:
  StagedAllreduce(Exec& exec, Communicator& comm) : exec_(exec), comm_(comm) {}
  int ranks() const override { return comm_.size(); }

  void sum(double* data, int64_t count) override {
    host_.resize(static_cast<size_t>(count));
    if (count > 0) exec_.download(host_.data(), data, host_.size() * sizeof(double));
    comm_.allreduce_sum(host_.data(), count);
    if (count > 0) exec_.upload(data, host_.data(), host_.size() * sizeof(double));
  }
  void start_gradient_sum(float* data, int64_t count) override {
    floats_.resize(static_cast<size_t>(count));
    exec_.download(floats_.data(), data, floats_.size() * sizeof(float));
    comm_.allreduce_sum_float(floats_.data(), count);
    exec_.upload(data, floats_.data(), floats_.size() * sizeof(float));
  }
  void finish_gradients() override {}

 private:
  Exec& exec_;
  Communicator& comm_;
  std::vector<double> host_;
  std::vector<float> floats_;
};

}  // namespace inductive::device
