// The communicator seam as core knows it (no MPI here): shards, the serial communicator, what "auto" does when a
// launcher started several ranks of a build without MPI, and the parameter hash.
#include <cmath>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/communicator.h"

namespace inductive {
namespace {

TEST(Communicator, ShardsCoverTheBatchInRankOrderAndDifferByAtMostOne) {
  for (int size : {1, 2, 3, 7})
    for (int64_t count : {0, 1, 5, 16, 17}) {
      int64_t next = 0;
      for (int r = 0; r < size; ++r) {
        const Shard s = shard_of(count, r, size);
        EXPECT_EQ(s.begin, next);
        EXPECT_GE(s.end - s.begin, count / size);
        EXPECT_LE(s.end - s.begin, count / size + 1);
        next = s.end;
      }
      EXPECT_EQ(next, count);
    }
}

TEST(Communicator, TheSerialOneIsRankZeroOfOneAndSumsNothing) {
  const auto c = make_communicator("none");
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  EXPECT_TRUE(c->writer());
  double x[2] = {1.5, -2};
  c->allreduce_sum(x, 2);
  EXPECT_EQ(x[0], 1.5);
  EXPECT_EQ(c->allgather(42), std::vector<uint64_t>{42});
}

TEST(Communicator, ABuildWithoutMpiRefusesMpiAndSeveralLaunchedRanks) {
  // Core's test binary registers no MPI factory: like a CLI built without libopenmpi-dev.
  testing::expect_error([] { make_communicator("mpi"); }, ErrorCode::kInvalidArgument, "this build has no MPI");
  testing::expect_error([] { make_communicator("pvm"); }, ErrorCode::kInvalidArgument, "unknown --distributed 'pvm'");
  EXPECT_EQ(make_communicator("auto")->size(), 1);  // not launched by mpirun
  ::setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  EXPECT_EQ(launched_ranks(), 3);
  testing::expect_error([] { make_communicator("auto"); }, ErrorCode::kInvalidArgument, "with 3 ranks");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(launched_ranks(), 1);
}

TEST(Communicator, TheParameterHashSeesEveryBit) {
  std::vector<float> a = {1.0f, 2.0f, 3.0f}, b = a;
  EXPECT_EQ(hash_floats(a.data(), 3), hash_floats(b.data(), 3));
  b[2] = std::nextafter(b[2], 4.0f);
  EXPECT_NE(hash_floats(a.data(), 3), hash_floats(b.data(), 3));
  EXPECT_NE(hash_floats(a.data(), 3), hash_floats(a.data(), 2));
}

}  // namespace
}  // namespace inductive
