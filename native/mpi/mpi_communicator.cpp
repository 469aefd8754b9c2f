#include "mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "inductive/error.h"

namespace inductive::mpi {
namespace {

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(status, text, &len);
  INDUCTIVE_FAIL(ErrorCode::kBackend, "mpi: ", call, ": ", std::string(text, len));
}

void finalize_at_exit() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

void ensure_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (turned into Error{kBackend}) instead of aborting inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit(finalize_at_exit);
}

// Every rank must end with the same bits (the trainer checks the parameters' hash across ranks), which
// MPI_Allreduce does not promise: with recursive doubling each rank may add in its own order. Up to 8 ranks and
// 128 MB gathered, sums in rank order from every rank's copy (one allgather); beyond, MPI_Reduce to rank 0 (one
// order, the library's) and MPI_Bcast of the result: about twice a ring allreduce's traffic, the same on every rank.
constexpr int64_t kOrderedLimit = int64_t{1} << 24;  // doubles
constexpr int kOrderedRanks = 8;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    ensure_initialized();
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi (" + std::to_string(size_) + " ranks)"; }

  void allreduce_sum(double* data, int64_t count) override {
    if (size_ == 1 || count == 0) return;
    if (size_ <= kOrderedRanks && count * size_ <= kOrderedLimit) {
      std::vector<double> all(static_cast<size_t>(count) * size_);
      check(MPI_Allgather(data, static_cast<int>(count), MPI_DOUBLE, all.data(), static_cast<int>(count), MPI_DOUBLE,
                          MPI_COMM_WORLD),
            "MPI_Allgather");
      for (int64_t i = 0; i < count; ++i) {
        double s = 0;
        for (int r = 0; r < size_; ++r) s += all[static_cast<size_t>(r) * count + i];
        data[i] = s;
      }
      return;
    }
    for (int64_t begin = 0; begin < count; begin += INT_MAX / 2) {
      const int n = static_cast<int>(std::min<int64_t>(count - begin, INT_MAX / 2));
      check(
          MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : data + begin, data + begin, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD),
          "MPI_Reduce");
      check(MPI_Bcast(data + begin, n, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

  // Point to point in chunks below MPI's int counts, rank by rank in order: rank 0 never holds more than the
  // result plus one chunk.
  std::vector<float> gather_to_writer(std::vector<float> mine) override {
    if (size_ == 1) return mine;
    const std::vector<uint64_t> sizes = allgather(mine.size());
    constexpr uint64_t kChunk = uint64_t{1} << 28;
    if (rank_ != 0) {
      for (uint64_t at = 0; at < mine.size(); at += kChunk)
        check(MPI_Send(mine.data() + at, static_cast<int>(std::min(kChunk, mine.size() - at)), MPI_FLOAT, 0, 7,
                       MPI_COMM_WORLD),
              "MPI_Send");
      return {};
    }
    uint64_t total = 0;
    for (uint64_t s : sizes) total += s;
    std::vector<float> all;
    all.reserve(total);
    all.insert(all.end(), mine.begin(), mine.end());
    for (int r = 1; r < size_; ++r) {
      const size_t start = all.size();
      all.resize(start + sizes[r]);
      for (uint64_t at = 0; at < sizes[r]; at += kChunk)
        check(MPI_Recv(all.data() + start + at, static_cast<int>(std::min(kChunk, sizes[r] - at)), MPI_FLOAT, r, 7,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
    }
    return all;
  }

  void broadcast_from_writer(void* data, size_t bytes) override {
    for (size_t at = 0; at < bytes; at += INT_MAX / 2)
      check(MPI_Bcast(static_cast<char*>(data) + at, static_cast<int>(std::min<size_t>(bytes - at, INT_MAX / 2)),
                      MPI_BYTE, 0, MPI_COMM_WORLD),
            "MPI_Bcast");
  }

  std::vector<uint64_t> allgather(uint64_t value) override {
    std::vector<uint64_t> out(size_);
    check(MPI_Allgather(&value, 1, MPI_UINT64_T, out.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Allgather");
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

void register_mpi_communicator() { register_communicator_factory(&make_mpi_communicator); }

void abort_if_distributed(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace inductive::mpi
