// native/cuda/nccl_allreduce.h - DeviceAllreduce on CUDA devices through NCCL, one GPU per rank, bootstrapped over
// the run's Communicator (MPI): rank 0 makes NCCL's id and broadcasts it.
//
// Statistics (sum) are summed on the compute stream, in its order. Gradient buckets are summed on a stream of their
// own: each waits for an event recorded on the compute stream when the bucket was complete, so the sum of the last
// layers' gradients runs while the backward pass computes the earlier layers'; finish_gradients() makes the compute
// stream wait for the last one (the Adam step comes next). NCCL's ring sums give every rank the same bits.
//
// One NCCL communicator serves both streams, and NCCL runs a communicator's operations in the order they were issued
// (the same order on every rank, so no deadlock): with BatchNorm, the next statistics' sum of the backward pass waits
// for the bucket in flight, so BatchNorm models overlap a bucket only with the layers' work up to their next norm.
// A second communicator for the buckets would lift that, at the price of two communicators running concurrently,
// which NCCL documents as a deadlock risk when the GPU cannot host both kernels; not done without a GPU to test it.
//
// NCCL is loaded when first needed (dlopen of $INDUCTIVE_NCCL_LIBRARY, else libnccl.so.2), not linked: binaries
// start, and train on one GPU, on machines without it; a data-parallel GPU run there fails with Error{kBackend}
// saying what to install.
#pragma once

#include <memory>

#include "cuda_util.h"
#include "device_allreduce.h"
#include "inductive/communicator.h"

namespace inductive::cuda {

class NcclAllreduce final : public device::DeviceAllreduce {
 public:
  // Joins the NCCL communicator of every rank of `comm` (a collective call: every rank constructs one) on `device`,
  // ordering its statistics' sums on `compute`.
  NcclAllreduce(Communicator& comm, int device, cudaStream_t compute);
  ~NcclAllreduce() override;
  NcclAllreduce(const NcclAllreduce&) = delete;
  NcclAllreduce& operator=(const NcclAllreduce&) = delete;

  int ranks() const override { return ranks_; }
  void sum(double* data, int64_t count) override;
  void start_gradient_sum(float* data, int64_t count) override;
  void finish_gradients() override;

 private:
  struct State;
  std::unique_ptr<State> s_;
  int ranks_ = 1;
};

// "2.28.9 (libnccl.so.2)" when NCCL loads, else Error{kBackend} with the reason (inductive capabilities).
std::string nccl_version();

}  // namespace inductive::cuda
