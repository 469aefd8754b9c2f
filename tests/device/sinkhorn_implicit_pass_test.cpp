// The implicit Sinkhorn gradient's device pass (native/cuda/sinkhorn_implicit_ops.h), run by the host executor: the
// functors the CUDA kernels launch, held to the CPU's sinkhorn_implicit_backward on masked batches, dead columns,
// clamped logits and degenerate plans. The CUDA suite (tests/cuda/otke_cuda_test.cpp) runs the same cases on a GPU;
// these run everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "graphit_exec_host.h"
#include "inductive/error.h"
#include "sinkhorn_implicit_case.h"
#include "sinkhorn_implicit_ops.h"

namespace inductive {
namespace {

using testing::ImplicitCase;

struct PassResult {
  std::vector<float> grad;
  std::vector<int32_t> ok;
};

// The pass on the host, on the case's own forward plan; the gradient starts as NaN so that an unwritten entry shows.
PassResult run_pass(const ImplicitCase& c) {
  PassResult r{std::vector<float>(c.size(), std::numeric_limits<float>::quiet_NaN()),
               std::vector<int32_t>(c.shape.batch, -1)};
  std::vector<double> work(sinkhorn_implicit::workspace_doubles(c.shape.batch, c.shape.n_max, c.shape.p_max),
                           std::numeric_limits<double>::quiet_NaN());
  sinkhorn_implicit::Args a;
  a.cost = c.sim.data();
  a.plan = c.plan.data();
  a.grad_plan = c.dplan.data();
  a.grad_cost = r.grad.data();
  a.n = c.n.data();
  a.p = c.p.data();
  a.batch = c.shape.batch;
  a.n_max = c.shape.n_max;
  a.p_max = c.shape.p_max;
  a.scale = 1.0 / c.shape.eps;  // similarities
  a.work = work.data();
  a.ok = r.ok.data();
  graphit_device::HostExec exec;
  sinkhorn_implicit::pass(exec, a);
  return r;
}

TEST(SinkhornImplicitPass, MatchesTheCpuImplicitGradientOnMaskedBatchesOfEveryShape) {
  uint32_t seed = 300;
  for (const testing::ImplicitShape& s : testing::implicit_shapes()) {
    const ImplicitCase c = testing::implicit_case(s, seed += 10);
    const PassResult r = run_pass(c);
    for (int b = 0; b < s.batch; ++b) EXPECT_EQ(r.ok[b], 1) << c.name() << ", problem " << b;
    testing::expect_matches_cpu(c, r.grad, 1e-5);
  }
}

// Without padding (no length arrays): every problem full size, as OTKE batches of equal sets.
TEST(SinkhornImplicitPass, UnmaskedBatchesReadTheirFullShape) {
  ImplicitCase c = testing::implicit_case({3, 25, 8, 0.5, 10}, 41);
  std::fill(c.n.begin(), c.n.end(), 25);
  std::fill(c.p.begin(), c.p.end(), 8);
  sinkhorn_log(c.problem(), c.options, SinkhornOutput<float>{c.plan.data()});
  c.reference();
  PassResult r = run_pass(c);
  testing::expect_matches_cpu(c, r.grad, 1e-5);
}

// A column without mass is outside the problem (identity row of S, v2 = 0), and a clamped logit has derivative 0:
// both as the CPU treats them.
TEST(SinkhornImplicitPass, DeadColumnsAndClampedLogitsAsTheCpu) {
  ImplicitCase c = testing::implicit_case({2, 30, 6, 0.5, 10}, 77);
  for (int i = 0; i < c.n[0]; ++i) c.plan[static_cast<size_t>(i) * 6 + 2] = 0.0f;  // problem 0, column 2
  c.sim[5] = static_cast<float>(1e31 * c.shape.eps);                               // problem 0, entry (0, 5)
  c.reference();
  ASSERT_EQ(c.grad[5], 0.0f);
  const PassResult r = run_pass(c);
  EXPECT_EQ(r.ok[0], 1);
  EXPECT_EQ(r.grad[5], 0.0f);
  testing::expect_matches_cpu(c, r.grad, 1e-5);
}

// A plan the CPU refuses (a non-finite entry: its Schur complement is not a matrix it can factorise) is flagged
// degenerate on its own problem only, so the stepper can raise the CPU's error naming it.
TEST(SinkhornImplicitPass, ADegeneratePlanIsFlaggedOnItsProblemAlone) {
  ImplicitCase c = testing::implicit_case({3, 20, 5, 0.5, 10}, 91);
  const size_t problem1 = static_cast<size_t>(20) * 5;
  c.plan[problem1 + 7] = std::numeric_limits<float>::infinity();
  testing::expect_error([&] { c.reference(); }, ErrorCode::kInvalidArgument, "problem 1 has a degenerate plan");
  const PassResult r = run_pass(c);
  EXPECT_EQ(r.ok[0], 1);
  EXPECT_EQ(r.ok[1], 0);
  EXPECT_EQ(r.ok[2], 1);
}

}  // namespace
}  // namespace inductive
