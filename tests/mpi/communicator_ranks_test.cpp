// The MPI communicator's sums (native/mpi/mpi_communicator.cpp) across real processes: mpirun -np 2, 3 and 4, and
// -np 3 with 7-value message pieces (INDUCTIVE_MPI_PIECE_VALUES), registered by CMake for builds with MPI. Both
// schedules are crossed: the gathered sum of small buffers and the ring of larger ones, with counts that leave some
// ranks' chunks empty or uneven.
//
// Specification: every rank ends with the same bits, the same on every call, equal to the exact sum where the sum is
// exact (multiples of 1/16 below 2^20) and within float or double rounding of it otherwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "inductive/communicator.h"
#include "mpi_gtest_main.h"

namespace inductive {
namespace {

Communicator* world = nullptr;

// Counts around the schedules' edges: fewer values than ranks, one more than a multiple, the gather limit (64 K
// values over all ranks) on either side, and a ring of a few hundred thousand.
std::vector<int64_t> counts() {
  const int64_t n = world->size(), limit = (int64_t{1} << 16) / n;
  return {1, 2, n - 1, n + 1, 1000, limit, limit + 1, limit + n - 1, 300007};
}

// Rank r's value at i: a multiple of 1/16 in [0, 64), so that sums over the ranks are exact in float and double.
template <typename T>
T exact_value(int rank, int64_t i) {
  return static_cast<T>(((i * 7 + rank * 13 + (i >> 5)) % 1024) / 16.0);
}

template <typename T>
void sum(T* data, int64_t count) {
  if constexpr (std::is_same_v<T, float>)
    world->allreduce_sum_float(data, count);
  else
    world->allreduce_sum(data, count);
}

template <typename T>
uint64_t hash_of(const std::vector<T>& v) {
  std::vector<float> f(v.size() * sizeof(T) / sizeof(float));
  std::memcpy(f.data(), v.data(), f.size() * sizeof(float));
  return hash_floats(f.data(), static_cast<int64_t>(f.size()));
}

template <typename T>
void expect_exact_sums() {
  const int rank = world->rank(), size = world->size();
  for (const int64_t count : counts()) {
    if (count <= 0) continue;
    SCOPED_TRACE(::testing::Message() << count << " values over " << size << " ranks");
    std::vector<T> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) v[i] = exact_value<T>(rank, i);
    sum(v.data(), count);
    int64_t wrong = 0;
    for (int64_t i = 0; i < count; ++i) {
      double expected = 0;
      for (int r = 0; r < size; ++r) expected += exact_value<double>(r, i);
      wrong += static_cast<double>(v[i]) != expected;
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST(MpiCommunicator, DoubleSumsOfExactValuesAreExact) { expect_exact_sums<double>(); }
TEST(MpiCommunicator, FloatSumsOfExactValuesAreExact) { expect_exact_sums<float>(); }

template <typename T>
void expect_same_bits_everywhere() {
  const int rank = world->rank(), size = world->size();
  const double tolerance = std::is_same_v<T, float> ? 4e-7 : 1e-15;
  for (const int64_t count : counts()) {
    if (count <= 0) continue;
    SCOPED_TRACE(::testing::Message() << count << " values over " << size << " ranks");
    // Every rank can draw every rank's values (seeded by rank), so each holds the reference sum in long double.
    std::vector<std::vector<T>> all(size);
    for (int r = 0; r < size; ++r) {
      std::mt19937_64 rng(1000 + r);
      std::normal_distribution<double> normal(0.0, 1.0);
      for (int64_t i = 0; i < count; ++i) all[r].push_back(static_cast<T>(normal(rng) * std::exp(normal(rng))));
    }
    std::vector<T> once = all[rank], twice = all[rank];
    sum(once.data(), count);
    sum(twice.data(), count);
    EXPECT_EQ(hash_of(once), hash_of(twice)) << "two calls differ";
    const std::vector<uint64_t> hashes = world->allgather(hash_of(once));
    for (int r = 1; r < size; ++r) EXPECT_EQ(hashes[r], hashes[0]) << "rank " << r << " holds other bits than rank 0";
    int64_t far = 0;
    for (int64_t i = 0; i < count; ++i) {
      long double exact = 0, scale = 0;
      for (int r = 0; r < size; ++r) exact += all[r][i], scale += std::fabs(static_cast<long double>(all[r][i]));
      far += std::fabs(static_cast<long double>(once[i]) - exact) > tolerance * size * scale;
    }
    EXPECT_EQ(far, 0);
  }
}

TEST(MpiCommunicator, DoubleSumsAreTheSameBitsOnEveryRankAndEveryCall) { expect_same_bits_everywhere<double>(); }
TEST(MpiCommunicator, FloatSumsAreTheSameBitsOnEveryRankAndEveryCall) { expect_same_bits_everywhere<float>(); }

TEST(MpiCommunicator, AnEmptySumIsANoOp) {
  world->allreduce_sum(nullptr, 0);
  world->allreduce_sum_float(nullptr, 0);
}

}  // namespace
}  // namespace inductive

int main(int argc, char** argv) { return inductive::testing::run_tests_on_every_rank(argc, argv, inductive::world); }
