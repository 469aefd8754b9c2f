// The implicit Sinkhorn gradient on a CUDA device: sinkhorn_implicit_ops.h's pass, each functor one kernel launch on
// the caller's stream (see sinkhorn_kernels.h).
#include "inductive/error.h"
#include "launch_items.cuh"
#include "sinkhorn_implicit_ops.h"
#include "sinkhorn_kernels.h"

namespace inductive::cuda {

size_t sinkhorn_implicit_workspace_bytes(int batch, int n_max, int p_max) {
  return sinkhorn_implicit::workspace_doubles(batch, n_max, p_max) * sizeof(double);
}

void sinkhorn_implicit_backward_device(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                                       const float* plan, const float* grad_plan, float* grad_cost, void* workspace,
                                       size_t workspace_bytes, int32_t* ok, cudaStream_t stream) {
  options.validate();
  INDUCTIVE_CHECK(problem.batch >= 1 && problem.n_max >= 1 && problem.p_max >= 1, ErrorCode::kInvalidArgument,
                  "cuda sinkhorn implicit backward: batch, n_max and p_max must be >= 1, got ", problem.batch, ", ",
                  problem.n_max, ", ", problem.p_max);
  INDUCTIVE_CHECK(problem.cost && plan && grad_plan && grad_cost && ok, ErrorCode::kInvalidArgument,
                  "cuda sinkhorn implicit backward: cost, plan, grad_plan, grad_cost and ok must all be given");
  const size_t need = sinkhorn_implicit_workspace_bytes(problem.batch, problem.n_max, problem.p_max);
  INDUCTIVE_CHECK(workspace && workspace_bytes >= need, ErrorCode::kInvalidArgument,
                  "cuda sinkhorn implicit backward: the workspace holds ", workspace_bytes, " bytes, ", need,
                  " are needed");
  sinkhorn_implicit::Args a;
  a.cost = problem.cost;
  a.plan = plan;
  a.grad_plan = grad_plan;
  a.grad_cost = grad_cost;
  a.n = problem.n;
  a.p = problem.p;
  a.batch = problem.batch;
  a.n_max = problem.n_max;
  a.p_max = problem.p_max;
  a.scale = (options.similarity ? 1.0 : -1.0) / options.eps;
  a.work = static_cast<double*>(workspace);
  a.ok = ok;
  StreamExec exec{stream, "implicit Sinkhorn gradient launch"};
  sinkhorn_implicit::pass(exec, a);
}

}  // namespace inductive::cuda
