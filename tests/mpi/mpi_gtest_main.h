// tests/mpi/mpi_gtest_main.h - main() of the gtest suites that run under mpirun: every rank runs every test with
// `world` set to the "mpi" communicator, and a failure on any rank fails the run (mpirun reports the first non-zero
// exit).
#pragma once

#include <gtest/gtest.h>

#include "inductive/communicator.h"
#include "mpi_communicator.h"

namespace inductive::testing {

inline int run_tests_on_every_rank(int argc, char** argv, Communicator*& world) {
  ::testing::InitGoogleTest(&argc, argv);
  mpi::register_mpi_communicator();
  const auto comm = make_communicator("mpi");
  world = comm.get();
  const int failed = RUN_ALL_TESTS();
  double any = failed ? 1 : 0;
  comm->allreduce_sum(&any, 1);
  world = nullptr;
  return any > 0 ? 1 : 0;
}

}  // namespace inductive::testing
