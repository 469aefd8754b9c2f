// Streaming log-sum-exp kernels that carry log-domain Sinkhorn (forward and backward).
//
// Everything Sinkhorn does to the n x p matrix K = -C/eps is one of these row-major streams, so the
// matrix is read contiguously and vectorised along rows; column reductions keep one running value per
// column (two passes: max, then sum of exp). A table of function pointers is chosen once per process
// (best ISA natively, the compile-time ISA in wasm); `scalar_kernels<T>()` is the plain-C++ twin the
// tests compare against.
#pragma once

namespace inductive::simd {

template <typename T>
struct LseKernels {
  const char* name;
  // log sum_j exp(g[j] + k[j]) over j < len; -inf when every term is -inf.
  T (*row_lse)(const T* k, const T* g, int len);
  // m[j] = max(m[j], f + k[j])
  void (*col_max)(const T* k, T f, T* m, int len);
  // acc[j] += exp(f + k[j] - m[j])  (terms with m[j] = -inf contribute 0)
  void (*col_sumexp)(const T* k, T f, const T* m, T* acc, int len);
  // Backward through a row softmax r[j] = exp(g[j] + k[j] - shift):
  // gg[j] -= w * r[j]; gk[j] -= w * r[j].
  void (*row_softmax_bwd)(const T* k, const T* g, T shift, T w, T* gg, T* gk, int len);
  // Backward through column softmaxes q[j] = exp(f + k[j] - shift[j]):
  // gk[j] -= gg[j] * q[j]; returns sum_j gg[j] * q[j].
  T (*col_softmax_bwd)(const T* k, T f, const T* shift, const T* gg, T* gk, int len);
  // The plan row as a normalised softmax, out[j] = w exp(g[j] + k[j] - lse), returning lse = LSE_j(g[j] + k[j]).
  // Equal to exp(f + g[j] + k[j]) with f = log w - lse, but the row sums to w even when |k| ~ 1e12 (tiny eps),
  // where forming f + g + k in float would lose the log-sum entirely. `out` may alias `k`.
  T (*plan_row)(const T* k, const T* g, T w, T* out, int len);

  // The scaling-domain solver (sinkhorn_scaling.cpp), on E = exp(K - shift) instead of K:
  // out[j] = exp(k[j] - shift) (exp(-inf) = 0; `out` may alias `k`).
  void (*exp_shift)(const T* k, T shift, T* out, int len);
  // sum_j e[j] v[j].
  T (*dot)(const T* e, const T* v, int len);
  // acc[j] += alpha e[j].
  void (*axpy)(const T* e, T alpha, T* acc, int len);
  // The scaling domain's two products per iteration, whole: y[r] = dot(m_r, x) for the rows m_r = m + r ld, and
  // z = sum_r w[r] m_r over the rows with w[r] != 0 (z overwritten). The same operations per output as `dot` and as
  // `axpy` row after row, so the same bits; blocked so that x and z stay in registers across rows instead of a call,
  // a load and (for z) a store per row: a dot or axpy call per row was a third of the browser benchmark's native
  // time (short rows: 141 x 32 for the promoter model, 400 x 64 for its Sinkhorn row).
  void (*gemv)(const T* m, int rows, int cols, long ld, const T* x, T* y);
  void (*gemv_t)(const T* m, int rows, int cols, long ld, const T* w, T* z);
  // out[j] = log(x[j]) + add[j] + c for x[j] > 0, else -inf (`add` may be null: 0). The logs of a log-sum-exp's sums
  // (the columns layout's n row LSEs per iteration) and of the scaling domain's tape: a scalar log each was 5 % of a
  // k512 p10 training step. `out` may alias `x`.
  void (*log_plus)(const T* x, const T* add, T c, T* out, int len);
  // x = clamp(x, -limit, limit) in place over rows x + r ld (r < rows) of `cols` values, and *lo / *hi lowered /
  // raised to the clamped values' min / max: the logits' clamp and the scaling domain's range check in one vector
  // pass over a problem (as two scalar loops, with the clamp's branches, they were 30 % of a 10-iteration batch; a
  // call per row, with its lanes' reduction, was still 12 %).
  void (*clamp_range)(T* x, int rows, int cols, long ld, T limit, T* lo, T* hi);
};

// The fastest kernels this process can run (chosen on first use, thread-safe).
template <typename T>
const LseKernels<T>& best_kernels();

// The scalar oracle.
template <typename T>
const LseKernels<T>& scalar_kernels();

// Every kernel table this build has that the running CPU supports (scalar first); for tests/benchmarks.
template <typename T>
int available_kernels(const LseKernels<T>** out, int capacity);

}  // namespace inductive::simd
