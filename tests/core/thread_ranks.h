// tests/core/thread_ranks.h - ranks played by threads of one process, for core tests of data-parallel code (the
// Communicator seam, inductive/communicator.h): allreduce_sum adds every rank's buffer in rank order once all have
// arrived. The MPI communicator itself runs in real processes in tests/native/test_mpi_otke.py.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "inductive/communicator.h"
#include "inductive/error.h"

namespace inductive::testing {

// Ranks as threads sharing one object: allreduce_sum adds every rank's buffer in rank order once all have arrived.
// A rank that waits more than 20 s throws (a rank that left without its sum would otherwise hang the test).
class ThreadRanks {
 public:
  explicit ThreadRanks(int size) : size_(size), slots_(static_cast<size_t>(size)) {}
  int size() const { return size_; }
  void allreduce(int rank, double* data, int64_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    slots_[static_cast<size_t>(rank)].assign(data, data + count);
    if (++arrived_ == size_) {
      sum_.assign(static_cast<size_t>(count), 0.0);
      for (const auto& s : slots_)
        for (int64_t k = 0; k < count; ++k) sum_[static_cast<size_t>(k)] += s.at(static_cast<size_t>(k));
      arrived_ = 0;
      ++generation_;
      done_.notify_all();
    } else {
      const int64_t generation = generation_;
      INDUCTIVE_CHECK(done_.wait_for(lock, std::chrono::seconds(20), [&] { return generation_ != generation; }),
                      ErrorCode::kInternal, "rank ", rank, " waited 20 s for the others' sums");
    }
    std::copy(sum_.begin(), sum_.end(), data);
  }

 private:
  int size_, arrived_ = 0;
  int64_t generation_ = 0;
  std::vector<std::vector<double>> slots_;
  std::vector<double> sum_;
  std::mutex mutex_;
  std::condition_variable done_;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(ThreadRanks& ranks, int rank) : ranks_(ranks), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return ranks_.size(); }
  std::string name() const override { return "threads"; }
  void allreduce_sum(double* data, int64_t count) override { ranks_.allreduce(rank_, data, count); }
  std::vector<uint64_t> allgather(uint64_t) override { throw Error(ErrorCode::kInternal, "not used"); }
  std::vector<float> gather_to_writer(std::vector<float>) override { throw Error(ErrorCode::kInternal, "not used"); }

 private:
  ThreadRanks& ranks_;
  int rank_;
};

}  // namespace inductive::testing
