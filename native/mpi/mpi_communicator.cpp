#include "mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <type_traits>
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
// MPI_Allreduce does not promise: with recursive doubling each rank may add in its own order. So the sums are ours:
// - small buffers (count x ranks up to 64 K values): one MPI_Allgather, then every rank adds the copies in rank
//   order (one collective: the latency of a few values' sums);
// - larger ones: a ring (reduce-scatter, then allgather; Patarasuk & Yuan 2009), the bandwidth-optimal schedule
//   NCCL also runs: each rank sends and receives 2 (N - 1) / N of the buffer whatever N is. Chunk c is summed once,
//   along the ring from rank c, ((x_c + x_c+1) + ...) + x_c-1, and then copied, so every rank holds the same bits,
//   and the order is a fixed function of (count, N): the same result on every run.
constexpr int64_t kGatherLimit = int64_t{1} << 16;  // values, over all ranks

// Messages stay below MPI's int counts; INDUCTIVE_MPI_PIECE_VALUES lowers the piece so that tests cross piece
// boundaries with small buffers.
int64_t piece_values() {
  static const int64_t piece = [] {
    const char* v = std::getenv("INDUCTIVE_MPI_PIECE_VALUES");
    const long long n = v && *v ? std::atoll(v) : 0;
    return n > 0 ? static_cast<int64_t>(std::min<long long>(n, INT_MAX / 2)) : int64_t{1} << 28;
  }();
  return piece;
}

template <typename T>
MPI_Datatype mpi_type() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>);
  return std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
}

template <typename T>
void gather_sum(T* data, int64_t count, int size) {
  std::vector<T> all(static_cast<size_t>(count) * size);
  check(MPI_Allgather(data, static_cast<int>(count), mpi_type<T>(), all.data(), static_cast<int>(count), mpi_type<T>(),
                      MPI_COMM_WORLD),
        "MPI_Allgather");
  for (int64_t i = 0; i < count; ++i) {
    T s = all[static_cast<size_t>(i)];
    for (int r = 1; r < size; ++r) s += all[static_cast<size_t>(r) * count + i];
    data[i] = s;
  }
}

// Sends chunk `out` to the right neighbour while receiving chunk `in` from the left one, piece by piece; with
// `add`, data[in] = received + data[in] (the ring's running sum first, then this rank's own values), else data[in]
// = received. Every rank makes the same number of exchanges, ceil(largest chunk / piece) (some of them empty where
// its chunks are shorter), so each message has its receive.
template <typename T>
void ring_exchange(T* data, const Shard& out, const Shard& in, int64_t largest, int left, int right, bool add,
                   std::vector<T>& buffer) {
  const int64_t piece = piece_values();
  const int64_t n_out = out.end - out.begin, n_in = in.end - in.begin;
  for (int64_t at = 0; at < largest; at += piece) {
    const int send = static_cast<int>(std::clamp<int64_t>(n_out - at, 0, piece));
    const int recv = static_cast<int>(std::clamp<int64_t>(n_in - at, 0, piece));
    T* target = data + in.begin + at;
    check(MPI_Sendrecv(data + out.begin + at, send, mpi_type<T>(), right, 11, add ? buffer.data() : target, recv,
                       mpi_type<T>(), left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    if (add)
      for (int i = 0; i < recv; ++i) target[i] = buffer[static_cast<size_t>(i)] + target[i];
  }
}

template <typename T>
void ring_sum(T* data, int64_t count, int rank, int size) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const auto chunk = [&](int c) { return shard_of(count, ((c % size) + size) % size, size); };
  const int64_t largest = (count + size - 1) / size;  // shard_of's chunks differ by at most one value
  std::vector<T> buffer(static_cast<size_t>(std::min(piece_values(), largest)));
  // Reduce-scatter: after step s, this rank's chunk r - s - 1 holds the sum of ranks r - s - 1 .. r; after N - 1
  // steps rank r holds chunk r + 1 complete.
  for (int s = 0; s < size - 1; ++s)
    ring_exchange(data, chunk(rank - s), chunk(rank - s - 1), largest, left, right, true, buffer);
  // Allgather: the complete chunks travel once round the ring.
  for (int s = 0; s < size - 1; ++s)
    ring_exchange(data, chunk(rank + 1 - s), chunk(rank - s), largest, left, right, false, buffer);
}

template <typename T>
void sum_over_ranks(T* data, int64_t count, int rank, int size) {
  if (size == 1 || count == 0) return;
  if (count * size <= kGatherLimit)
    gather_sum(data, count, size);
  else
    ring_sum(data, count, rank, size);
}

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

  void allreduce_sum(double* data, int64_t count) override { sum_over_ranks(data, count, rank_, size_); }
  void allreduce_sum_float(float* data, int64_t count) override { sum_over_ranks(data, count, rank_, size_); }

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
