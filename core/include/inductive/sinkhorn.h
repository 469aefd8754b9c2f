// inductive/sinkhorn.h - entropic optimal transport by log-domain Sinkhorn, batched and masked.
//
// For each problem b of a batch: cost C (n x p), marginals a (n, default 1/n) and b (p, default 1/p) with
// equal mass, regularisation eps > 0. The plan is
//     P = argmin_{P 1 = a, P^T 1 = b}  <P, C> - eps H(P),      H(P) = -sum_ij P_ij (log P_ij - 1),
// computed with dual potentials f (n), g (p):  P_ij = exp((f_i + g_j - C_ij) / eps)  (thesis ch. 2, eq. OT_eps;
// Cuturi 2013; Peyre & Cuturi 2019 ch. 4.4). Iterations follow POT's `sinkhorn_log` order (column update, then
// row update), so after the last iteration the rows match `a` exactly and the column error is what remains.
//
// Layout: a batch of `batch` problems padded to n_max x p_max, row-major, `C[(b * n_max + i) * p_max + j]`.
// Per-problem true sizes n[b] <= n_max, p[b] <= p_max mask the padding, which is never read and is written as 0
// in every output. Numerics: everything runs on K = -C/eps in the log domain, so no finite input and no eps > 0
// produces NaN (|C/eps| beyond 1e30 is clamped; the plan is then the unregularised one to float precision).
//
// Thread safety: all functions are re-entrant; batches are split across threads (inductive/parallel.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inductive/enum_names.h"
#include "inductive/error.h"

namespace inductive {

struct SinkhornOptions {
  double eps = 0.5;         // entropic regularisation, > 0, in the units of the cost (thesis default for SCOP)
  int max_iter = 100;       // iterations; a fixed count when tol == 0 (thesis: 10 supervised, 100 unsupervised)
  double tol = 0.0;         // > 0: stop early once the L1 column-marginal error <= tol
  bool similarity = false;  // the matrix holds similarities S, the cost is -S (OTKE: S = <psi(x_i), z_j>)
  // How the CPU solver runs; every choice gives the same results to float rounding, so only comparisons (tests,
  // benchmarks) force one. Domain: kAuto uses the scaling domain (plain exp/multiply iterations, and the unrolled
  // backward too) when the problem is inside the range where it is exact-equivalent to the log domain; kLog never
  // does. Layout: kAuto runs narrow problems (p <= 32 < n) on K transposed (streaming along n); kRows / kColumns
  // force one layout.
  enum class Domain : uint8_t { kAuto, kLog };
  enum class Layout : uint8_t { kAuto, kRows, kColumns };
  Domain domain = Domain::kAuto;
  Layout layout = Layout::kAuto;

  void validate() const;  // throws Error{kInvalidArgument} naming the bad field
};

// A batch of problems; pointers are borrowed, never owned.
template <typename T>
struct SinkhornProblem {
  const T* cost = nullptr;  // [batch, n_max, p_max]
  int batch = 1;
  int n_max = 0;
  int p_max = 0;
  const int32_t* n = nullptr;  // [batch] true row counts; nullptr: all n_max
  const int32_t* p = nullptr;  // [batch] true column counts; nullptr: all p_max
  const T* a = nullptr;        // [batch, n_max] row marginals; nullptr: uniform 1/n
  const T* b = nullptr;        // [batch, p_max] column marginals; nullptr: uniform 1/p

  void validate(const char* where) const;  // shapes, lengths, finiteness, marginals (see sinkhorn_log)
};

// Caller-owned outputs (any pointer but `plan` may be nullptr to skip that output).
template <typename T>
struct SinkhornOutput {
  T* plan = nullptr;             // [batch, n_max, p_max]
  T* f = nullptr;                // [batch, n_max] dual potentials (cost units); -inf where a_i = 0
  T* g = nullptr;                // [batch, p_max]
  int32_t* n_iter = nullptr;     // [batch] iterations run
  T* marginal_err = nullptr;     // [batch] ||P 1 - a||_1 + ||P^T 1 - b||_1 of the returned plan
  uint8_t* converged = nullptr;  // [batch] tol > 0: the stopping test was met (or marginal_err <= tol);
                                 // tol == 0: marginal_err <= 1e-4 x mass
  T* cost_value = nullptr;       // [batch] regularised OT cost <P, C> - eps H(P)
};

// Per-iteration log-sum-exps recorded by the forward pass, (n + p) values per iteration and problem: all the
// backward pass needs besides C, so memory stays O(n p + iters (n + p)) whatever the number of iterations.
template <typename T>
struct SinkhornTape {
  std::vector<T> lse;           // concatenated per problem: iters x (p column LSEs, n row LSEs)
  std::vector<int64_t> offset;  // [batch] start of each problem in `lse`
  std::vector<int32_t> n_iter;  // [batch]
};

// How a training step differentiates through Sinkhorn.
enum class SinkhornGradient {
  kUnrolled,  // exact gradient of the iterations run (sinkhorn_log_backward): a tape of (n + p) values per iteration
  kImplicit,  // implicit differentiation at the fixed point (sinkhorn_implicit_backward): no tape, memory
              // independent of the number of iterations; equal to the unrolled gradient once converged
};
inline constexpr EnumName<SinkhornGradient> kSinkhornGradients[] = {{SinkhornGradient::kUnrolled, "unrolled"},
                                                                    {SinkhornGradient::kImplicit, "implicit"}};
template <>
struct EnumTable<SinkhornGradient> {
  static constexpr const auto& names = kSinkhornGradients;
};
inline const char* sinkhorn_gradient_name(SinkhornGradient g) { return name_of(g); }
inline SinkhornGradient parse_sinkhorn_gradient(const std::string& name) {
  return parse_enum(kSinkhornGradients, name, "sinkhorn gradient");
}

// Solves every problem of the batch. Throws Error (kInvalidArgument / kShapeMismatch) before writing any output
// when: batch, n_max or p_max < 1; a length outside [1, n_max] / [1, p_max]; NaN/Inf in C, a or b (valid region);
// a negative marginal or one of zero mass; sum(a) and sum(b) differing by more than 1e-4 relative; bad options.
// `tape`, when given, records what sinkhorn_log_backward needs.
template <typename T>
void sinkhorn_log(const SinkhornProblem<T>& problem, const SinkhornOptions& options, const SinkhornOutput<T>& out,
                  SinkhornTape<T>* tape = nullptr);

// Gradient of a loss L(P) w.r.t. the cost matrix, exact for the iterations the forward pass ran: reverse-mode
// through the unrolled iterations, recomputing each softmax from the tape instead of storing it (no n x p x iters
// memory). `grad_plan` = dL/dP and `grad_cost` (output) = dL/dC share the padded [batch, n_max, p_max] layout.
// With options.similarity the gradient is w.r.t. the similarity matrix. Marginals are treated as constants.
template <typename T>
void sinkhorn_log_backward(const SinkhornProblem<T>& problem, const SinkhornOptions& options,
                           const SinkhornTape<T>& tape, const T* plan, const T* grad_plan, T* grad_cost);

// Gradient of a loss L(P) w.r.t. the cost matrix by implicit differentiation at the fixed point of the
// iterations: the derivative of the converged map C -> P, evaluated at the returned plan. Needs no tape, so its
// memory, O(n p + p^2) per problem, does not depend on the number of iterations (the unrolled backward keeps
// (n + p) values per iteration); it costs one p x p factorisation per problem instead of 2 passes per iteration.
// Equal to sinkhorn_log_backward once the forward pass has converged; before that, an approximation of the
// gradient of the truncated map. Same layouts and conventions as sinkhorn_log_backward.
template <typename T>
void sinkhorn_implicit_backward(const SinkhornProblem<T>& problem, const SinkhornOptions& options, const T* plan,
                                const T* grad_plan, T* grad_cost);

// Gradient of the regularised OT cost (SinkhornOutput::cost_value) w.r.t. C; at convergence this tends to P.
// Uses dL/dP = f_i + g_j, so it needs the potentials of the forward pass.
template <typename T>
void sinkhorn_cost_backward(const SinkhornProblem<T>& problem, const SinkhornOptions& options,
                            const SinkhornTape<T>& tape, const T* plan, const T* f, const T* g, T* grad_cost);

// Convenience: one problem, owning result (the CLI and tests use it).
template <typename T>
struct SinkhornResult {
  int n = 0, p = 0;
  std::vector<T> plan, f, g;  // n x p, n, p
  int n_iter = 0;
  T marginal_err = 0;
  bool converged = false;
  T cost_value = 0;
};

template <typename T>
SinkhornResult<T> sinkhorn_log(const T* cost, int n, int p, const T* a, const T* b, const SinkhornOptions& options);
// Non-template overloads so that `sinkhorn_log(cost, n, p, nullptr, nullptr, opts)` deduces (uniform marginals).
inline SinkhornResult<float> sinkhorn_log(const float* cost, int n, int p, const float* a, const float* b,
                                          const SinkhornOptions& options) {
  return sinkhorn_log<float>(cost, n, p, a, b, options);
}
inline SinkhornResult<double> sinkhorn_log(const double* cost, int n, int p, const double* a, const double* b,
                                           const SinkhornOptions& options) {
  return sinkhorn_log<double>(cost, n, p, a, b, options);
}

// Name of the SIMD kernel set in use ("avx512", "avx2", "sse2", "wasm-simd128", "scalar").
const char* sinkhorn_kernel_name();

}  // namespace inductive
