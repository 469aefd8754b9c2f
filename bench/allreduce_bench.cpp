// bench/allreduce_bench.cpp - the data-parallel gradient sum on CPU ranks: our MPI communicator's allreduce_sum
// (doubles) and allreduce_sum_float (floats), each next to the library's MPI_Allreduce of the same buffer in the
// same run (the baseline: what a user of MPI gets, without our promise of the same bits on every rank and run).
//
//   mpirun --oversubscribe -np 2 build/native-release/bin/allreduce_bench [--reps 40] [--values 98306,296578]
//
// Sizes default to the gradients of the benchmark models: OTKE k512p64 (98,306 values), GraphiT (a) (92,290) and
// (b) (296,578), and 4 M values. Each timing is the median over --reps calls, each call after a barrier; rank 0
// prints the table (milliseconds, and the library's time over ours: above 1, ours is faster).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_args.h"
#include "inductive/communicator.h"
#include "mpi_communicator.h"

namespace {

template <typename F>
double median_ms(int reps, F&& call) {
  std::vector<double> t;
  call();  // warm-up: buffers, connections
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  // Rank 0's median, then the slowest rank's (a sum ends when the last rank has it).
  double mine = t[t.size() / 2], worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::string reps_text = "40", values_text = "98306,92290,296578,4194304";
  inductive::bench::BenchArgs args("allreduce_bench",
                                   "the CPU ranks' gradient sum (ours, in double and float) against MPI_Allreduce; run "
                                   "it under mpirun with 2 or more ranks");
  args.option("--reps", "N", "timed calls per row (median; default 40)", &reps_text);
  args.option("--values", "LIST", "buffer sizes in values (default 98306,92290,296578,4194304)", &values_text);
  if (const int rc = args.parse(argc, argv); rc >= 0) return rc;
  std::vector<int> reps, values;
  if (!inductive::bench::BenchArgs::int_list("--reps", reps_text, 1, 100000, &reps) || reps.size() != 1) return 2;
  if (!inductive::bench::BenchArgs::int_list("--values", values_text, 1, 1 << 28, &values)) return 2;

  inductive::mpi::register_mpi_communicator();
  const auto comm = inductive::make_communicator("mpi");
  if (comm->size() < 2) {
    std::fprintf(stderr, "error: allreduce_bench needs 2 or more ranks (mpirun -np 2 %s)\n", argv[0]);
    return 2;
  }
  const bool root = comm->rank() == 0;
  if (root) {
    std::printf("%d ranks (%s); median of %d calls, the slowest rank's\n\n", comm->size(), comm->name().c_str(),
                reps[0]);
    std::printf(
        "| values | ours, double ms | MPI_Allreduce double ms | ratio | ours, float ms | MPI_Allreduce float "
        "ms | ratio | float over double (ours) |\n|---|---|---|---|---|---|---|---|\n");
  }
  for (const int n : values) {
    std::vector<double> d(static_cast<size_t>(n), 0.0);  // zeros: repeated sums stay finite
    std::vector<float> f(static_cast<size_t>(n), 0.0f);
    const double ours_d = median_ms(reps[0], [&] { comm->allreduce_sum(d.data(), n); });
    const double lib_d =
        median_ms(reps[0], [&] { MPI_Allreduce(MPI_IN_PLACE, d.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); });
    const double ours_f = median_ms(reps[0], [&] { comm->allreduce_sum_float(f.data(), n); });
    const double lib_f =
        median_ms(reps[0], [&] { MPI_Allreduce(MPI_IN_PLACE, f.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    if (root)
      std::printf("| %d | %.3f | %.3f | %.2fx | %.3f | %.3f | %.2fx | %.2fx |\n", n, ours_d, lib_d, lib_d / ours_d,
                  ours_f, lib_f, lib_f / ours_f, ours_d / ours_f);
  }
  return 0;
}
