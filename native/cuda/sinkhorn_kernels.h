// native/cuda/sinkhorn_kernels.h - batched, masked log-domain Sinkhorn on a CUDA device (float32).
//
// Same contract and the same arithmetic as the CPU oracle inductive::sinkhorn_log (core/src/ot/sinkhorn.cpp): K =
// clamp(-C/eps) computed in double, F = G = 0, per iteration the column update G then the row update F, the
// tolerance tested on the column error at the start of every iteration t > 0, plan rows a_i softmax_j(G_j + K_ij)
// (= exp(F_i + G_j + K_ij), exact row sums even for tiny eps) with F recomputed from them, padding written as 0,
// f/g returned in cost units. Results agree with the CPU to float rounding (exp/log implementations and summation
// order differ), and n_iter is counted identically.
//
// These are the device-pointer entry points: every pointer in `problem` and `out` is device memory, so training
// code can keep its data on the GPU. The host-pointer path is CudaBackend::sinkhorn_log (cuda_backend.h), which
// also validates the values. Work is enqueued on `launch.stream` and nothing is synchronised: errors of the launch
// itself throw Error{kBackend}; errors of the kernel surface at the caller's next synchronising call.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "inductive/sinkhorn.h"

namespace inductive::cuda {

struct SinkhornLaunch {
  cudaStream_t stream = nullptr;
  // Keep the per-problem vectors (F, G, log a, log b, column LSEs: 2 n_max + 3 p_max floats) in shared memory
  // when they fit (~160 KB on A100, ~220 KB on H100: 2 n_max + 3 p_max up to ~40k / ~55k floats); otherwise, or
  // when false (tests use it to cover both paths), in the workspace.
  bool allow_shared_vectors = true;
  // Optional device buffer of batch x max_iter x (p_max + n_max) floats: iteration t's column LSEs (p_max slots)
  // then row LSEs (n_max slots) of each problem, for sinkhorn_log_backward_device (the CPU's SinkhornTape, padded).
  float* tape = nullptr;
};

// Device bytes of workspace sinkhorn_log_device needs for this shape on the current device (0 when the vectors fit
// in shared memory). Throws Error{kBackend} when the device cannot be queried.
size_t sinkhorn_workspace_bytes(int batch, int n_max, int p_max, const SinkhornLaunch& launch = {});

// Solves every problem of the batch on the current device. The caller guarantees what the host path validates
// (finite costs, non-negative marginals of equal positive mass); a length outside [1, n_max] / [1, p_max] is not
// read out of bounds: that problem gets n_iter = -1, marginal_err = +inf and zero outputs. `problem.cost` may equal
// `out.plan` (the solver turns the cost into logits in place and then into the plan). Shapes, options and
// null-ness of the required pointers are checked here: Error{kInvalidArgument}.
void sinkhorn_log_device(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                         const SinkhornOutput<float>& out, void* workspace, size_t workspace_bytes,
                         const SinkhornLaunch& launch = {});

// Gradient of a loss L(P) w.r.t. the cost (or, with options.similarity, the similarity) matrix through the
// unrolled iterations: the device twin of inductive::sinkhorn_log_backward (core/src/ot/sinkhorn_backward.cpp),
// same recursion, the softmaxes recomputed from `tape` (filled by sinkhorn_log_device with SinkhornLaunch::tape
// on the same problem and options). `problem.cost` is the matrix the forward pass read; `plan` its output;
// `grad_plan` = dL/dP; `grad_cost` (output, may not alias the others) gets dL/dC with padding 0. All pointers are
// device memory; uniform marginals only when a/b are null. Options must have tol == 0 (a fixed iteration count).
// Throws Error{kInvalidArgument} for bad shapes or options, Error{kBackend} when n_max is too large for the
// per-problem vectors to fit in shared memory.
void sinkhorn_log_backward_device(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                                  const float* tape, const float* plan, const float* grad_plan, float* grad_cost,
                                  cudaStream_t stream);

// Device bytes of workspace sinkhorn_implicit_backward_device needs: batch (3 n_max + 3 p_max + 1 + p_max^2)
// doubles, whatever the number of iterations.
size_t sinkhorn_implicit_workspace_bytes(int batch, int n_max, int p_max);

// Gradient of a loss L(P) w.r.t. the cost (or similarity) matrix by implicit differentiation at the fixed point: the
// device twin of inductive::sinkhorn_implicit_backward (core/src/ot/sinkhorn_implicit.cpp), the same equations in
// double (sinkhorn_implicit_ops.h). No tape: `plan` is the forward pass's output for `problem` (any iteration count,
// tolerance mode included), `grad_plan` = dL/dP, `grad_cost` gets dL/dC with padding 0. `ok` (device, [batch]) gets
// 1 per problem, or 0 where the problem's plan is degenerate (singular Schur complement, non-finite gradient): the
// caller reads it after synchronising and reports the error the CPU raises. Pointers are device memory; enqueued on
// `stream`, nothing synchronised. Throws Error{kInvalidArgument} for bad shapes, options or a short workspace.
void sinkhorn_implicit_backward_device(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                                       const float* plan, const float* grad_plan, float* grad_cost, void* workspace,
                                       size_t workspace_bytes, int32_t* ok, cudaStream_t stream);

}  // namespace inductive::cuda
