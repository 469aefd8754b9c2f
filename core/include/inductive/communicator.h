// inductive/communicator.h - the seam between training and the processes it runs on (data parallelism).
//
// A trainer given a Communicator splits each global batch across ranks, sums the ranks' gradients with
// allreduce_sum and steps identically everywhere; rank 0 alone writes files. Core holds only the interface and the
// one-process implementation; the MPI one lives in native/mpi and registers itself, as CUDA does for backends, so
// core and the wasm build carry no MPI code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace inductive {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "serial", "mpi (3 ranks)"
  // Element-wise sum over ranks, the result on every rank; the same result on every run for a fixed number of
  // ranks. Every rank must call it with the same count.
  virtual void allreduce_sum(double* data, int64_t count) = 0;
  // The same for float data, summed in float: gradients, at half the bytes of doubles on the wire (a data-parallel
  // step's sums are rounded to float in the end anyway; NCCL sums the device's gradients in float too). The default
  // goes through allreduce_sum in double; MPI sends floats.
  virtual void allreduce_sum_float(float* data, int64_t count);
  // Every rank's `value`, in rank order, on every rank.
  virtual std::vector<uint64_t> allgather(uint64_t value) = 0;
  // The writer gets every rank's `mine` concatenated in rank order; the other ranks get an empty vector.
  virtual std::vector<float> gather_to_writer(std::vector<float> mine) = 0;
  // The writer's `bytes` bytes at `data`, copied to every rank (NCCL's bootstrap id). The default sends them as
  // doubles through allreduce_sum (the other ranks add zeros: exact); MPI overrides it with MPI_Bcast.
  virtual void broadcast_from_writer(void* data, size_t bytes);
  // The rank that writes models, checkpoints and reports.
  bool writer() const { return rank() == 0; }
};

// One process: rank 0 of 1, sums are the identity.
std::unique_ptr<Communicator> make_serial_communicator();

// "none" (one process), "mpi" (an error in a build without MPI), or "auto": MPI when an MPI launcher started this
// process with more than one rank, else one process. A build without MPI launched by mpirun with several ranks is
// an error (each process would otherwise train alone and they would overwrite each other's files).
std::unique_ptr<Communicator> make_communicator(const std::string& spec);

// The number of ranks an MPI launcher (Open MPI, MPICH/PMI, SLURM's srun) says it started; 1 when none did.
int launched_ranks();
// This process's rank among the ranks the launcher started on its host (one GPU per local rank); 0 when none did.
int launched_local_rank();

// Native builds with MPI register the "mpi" factory at start-up (core has no MPI code).
using CommunicatorFactory = std::unique_ptr<Communicator> (*)();
void register_communicator_factory(CommunicatorFactory factory);

// Rank r's share [begin, end) of `count` items split as evenly as possible over `size` ranks, in rank order.
struct Shard {
  int64_t begin, end;
};
Shard shard_of(int64_t count, int rank, int size);

// A 64-bit FNV-1a hash of float data (parameters checked identical across ranks).
uint64_t hash_floats(const float* data, int64_t count, uint64_t seed = 1469598103934665603ull);

// Stops a data-parallel run when the ranks' parameters differ (they step identically from identical sums, so they
// never should): `hash` is this rank's hash of its parameters (hash_floats); Error{kInternal} "<what> rank(s) R
// hold different parameters than rank 0 (...)" naming the ranks that disagree with rank 0. Every rank calls it.
void check_ranks_agree(Communicator& comm, uint64_t hash, const std::string& what);

}  // namespace inductive
