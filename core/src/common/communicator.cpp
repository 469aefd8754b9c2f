#include "inductive/communicator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "inductive/error.h"

namespace inductive {

namespace {

class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "serial"; }
  void allreduce_sum(double*, int64_t) override {}
  std::vector<uint64_t> allgather(uint64_t value) override { return {value}; }
  std::vector<float> gather_to_writer(std::vector<float> mine) override { return mine; }
};

std::mutex& factory_mutex() {
  static std::mutex m;
  return m;
}
CommunicatorFactory& mpi_factory() {
  static CommunicatorFactory f = nullptr;
  return f;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

}  // namespace

std::unique_ptr<Communicator> make_serial_communicator() { return std::make_unique<SerialCommunicator>(); }

void register_communicator_factory(CommunicatorFactory factory) {
  std::lock_guard<std::mutex> lock(factory_mutex());
  mpi_factory() = factory;
}

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    const int n = env_int(name);
    if (n > 0) return n;
  }
  return 1;
}

int launched_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    if (v && *v) return std::max(0, std::atoi(v));
  }
  return 0;
}

void Communicator::allreduce_sum_float(float* data, int64_t count) {
  if (size() == 1 || count == 0) return;
  std::vector<double> v(data, data + count);
  allreduce_sum(v.data(), count);
  for (int64_t i = 0; i < count; ++i) data[i] = static_cast<float>(v[static_cast<size_t>(i)]);
}

void Communicator::broadcast_from_writer(void* data, size_t bytes) {
  if (size() == 1 || bytes == 0) return;
  auto* b = static_cast<unsigned char*>(data);
  std::vector<double> v(bytes, 0.0);
  if (writer()) std::copy(b, b + bytes, v.begin());
  allreduce_sum(v.data(), static_cast<int64_t>(bytes));
  for (size_t i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>(v[i]);
}

std::unique_ptr<Communicator> make_communicator(const std::string& spec) {
  CommunicatorFactory factory = nullptr;
  {
    std::lock_guard<std::mutex> lock(factory_mutex());
    factory = mpi_factory();
  }
  if (spec == "none") return make_serial_communicator();
  if (spec == "mpi") {
    INDUCTIVE_CHECK(factory != nullptr, ErrorCode::kInvalidArgument,
                    "--distributed mpi: this build has no MPI (install libopenmpi-dev and rebuild, or use "
                    "--distributed none)");
    return factory();
  }
  INDUCTIVE_CHECK(spec == "auto", ErrorCode::kInvalidArgument, "unknown --distributed '", spec,
                  "': expected auto, none or mpi");
  const int ranks = launched_ranks();
  if (ranks <= 1) return make_serial_communicator();
  INDUCTIVE_CHECK(factory != nullptr, ErrorCode::kInvalidArgument, "launched by an MPI launcher with ", ranks,
                  " ranks, but this build has no MPI: every rank would train alone (rebuild with libopenmpi-dev, "
                  "or run one process)");
  return factory();
}

Shard shard_of(int64_t count, int rank, int size) {
  const int64_t base = count / size, extra = count % size;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

uint64_t hash_floats(const float* data, int64_t count, uint64_t h) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(data);
  for (int64_t i = 0; i < count * static_cast<int64_t>(sizeof(float)); ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}

void check_ranks_agree(Communicator& comm, uint64_t hash, const std::string& what) {
  const std::vector<uint64_t> all = comm.allgather(hash);
  std::string differ;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  INDUCTIVE_CHECK(differ.empty(), ErrorCode::kInternal, what, " rank(s) ", differ,
                  " hold different parameters than rank 0 (a rank ran a different build, data or options)");
}

}  // namespace inductive
