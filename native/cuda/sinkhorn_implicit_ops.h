// native/cuda/sinkhorn_implicit_ops.h - the implicit Sinkhorn gradient (core/src/ot/sinkhorn_implicit.cpp) as
// per-item functors and the pass that runs them, written once for the CUDA kernels (sinkhorn_implicit_kernels.cu)
// and for the CPU executor that tests them (tests/device/sinkhorn_implicit_pass_test.cpp).
//
// Per problem, with P the plan, W = dL/dP o P, r and c the plan's own row and column sums, u1 = W 1, u2 = W^T 1:
//   S = diag(c) - P^T diag(1/r) P + t 1 1^T  (p x p, t the mean of the live c; dead rows/columns the identity),
//   S v2 = u2 - P^T (u1 / r),   v1 = (u1 - P v2) / r,   dL/dK_ij = W_ij - P_ij (v1_i + v2_j),
// all in double, as the CPU does; dL/dC = scale dL/dK with scale = (similarity ? 1 : -1) / eps, 0 where the logit
// was clamped. The CPU factorises S with Eigen's LDLT, this pass with a Cholesky factorisation (S is positive
// definite once t 1 1^T removes its null direction): the two differ only in rounding.
//
// Each functor computes the outputs of one item (a row, a column, an entry of S, a problem) and writes nothing
// another item writes, except `ok[b] = 0`, which every writer stores alike. Nothing depends on the number of
// iterations: the workspace is O(batch (n_max + p_max^2)) doubles, the tape of the unrolled gradient is not needed.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::sinkhorn_implicit {

// The problems of one batch ([batch, n_max, p_max], rows of stride p_max) and the pass's workspace.
struct Args {
  const float* cost = nullptr;       // the matrix the forward pass read (costs, or similarities)
  const float* plan = nullptr;       // its plan
  const float* grad_plan = nullptr;  // dL/dP
  float* grad_cost = nullptr;        // output dL/dC, padding 0
  const int32_t* n = nullptr;        // per-problem lengths, or null for n_max / p_max
  const int32_t* p = nullptr;
  int batch = 0, n_max = 0, p_max = 0;
  double scale = 0;        // dK/dC: (similarity ? 1 : -1) / eps
  double* work = nullptr;  // workspace_doubles(batch, n_max, p_max)
  int32_t* ok = nullptr;   // [batch]: 1, or 0 where the problem's Schur complement is degenerate
};

// Workspace layout, per problem: 1/r, u1, v1 [n_max]; c, u2, v2 [p_max]; t; S [p_max, p_max].
INDUCTIVE_HD size_t per_problem(int n_max, int p_max) {
  return 3 * static_cast<size_t>(n_max) + 3 * static_cast<size_t>(p_max) + 1 +
         static_cast<size_t>(p_max) * static_cast<size_t>(p_max);
}
inline size_t workspace_doubles(int batch, int n_max, int p_max) {
  return static_cast<size_t>(batch) * per_problem(n_max, p_max);
}

// One problem's view of the arguments: its lengths (clamped to the padded shape), entries and workspace slices.
struct View {
  int n, p, n_max, p_max;
  const float *cost, *plan, *grad_plan;
  float* grad_cost;
  double *inv_r, *u1, *v1, *c, *u2, *v2, *t, *S;  // inv_r: 1/r_i, 0 for a row without mass

  INDUCTIVE_HD static int length(const int32_t* v, int b, int max) {
    if (!v) return max;
    const int x = v[b];
    return x < 0 ? 0 : (x > max ? max : x);
  }
  INDUCTIVE_HD View(const Args& a, int b) : n_max(a.n_max), p_max(a.p_max) {
    n = length(a.n, b, a.n_max);
    p = length(a.p, b, a.p_max);
    const int64_t off = static_cast<int64_t>(b) * a.n_max * a.p_max;
    cost = a.cost + off;
    plan = a.plan + off;
    grad_plan = a.grad_plan + off;
    grad_cost = a.grad_cost + off;
    inv_r = a.work + static_cast<size_t>(b) * per_problem(a.n_max, a.p_max);
    u1 = inv_r + n_max;
    v1 = u1 + n_max;
    c = v1 + n_max;
    u2 = c + p_max;
    v2 = u2 + p_max;
    t = v2 + p_max;
    S = t + 1;
  }
  INDUCTIVE_HD double P(int i, int j) const { return plan[static_cast<int64_t>(i) * p_max + j]; }
  // W_ij = dL/dP_ij P_ij; P = 0 entries (zero-mass points, underflow) carry no gradient, even where dL/dP is inf.
  INDUCTIVE_HD double W(int i, int j) const {
    const double pij = P(i, j);
    return pij == 0.0 ? 0.0 : static_cast<double>(grad_plan[static_cast<int64_t>(i) * p_max + j]) * pij;
  }
  INDUCTIVE_HD bool live_column(int j) const { return j < p && c[j] > 0; }
};

// Item (b, i) over batch x n_max: 1 / r_i (0 for a row without mass: it is outside the problem) and u1_i.
struct RowSums {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int b = static_cast<int>(item / a.n_max), i = static_cast<int>(item % a.n_max);
    const View v(a, b);
    double r = 0, u = 0;
    if (i < v.n)
      for (int j = 0; j < v.p; ++j) r += v.P(i, j), u += v.W(i, j);
    v.inv_r[i] = r > 0 ? 1.0 / r : 0.0;
    v.u1[i] = u;
  }
};

// Item (b, j) over batch x p_max: c_j and u2_j.
struct ColumnSums {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int b = static_cast<int>(item / a.p_max), j = static_cast<int>(item % a.p_max);
    const View v(a, b);
    double c = 0, u = 0;
    if (j < v.p)
      for (int i = 0; i < v.n; ++i) c += v.P(i, j), u += v.W(i, j);
    v.c[j] = c;
    v.u2[j] = u;
  }
};

// Item b over batch: t, the mean of the live columns' mass (1 when none is live), and ok = 1.
struct Shift {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int b = static_cast<int>(item);
    const View v(a, b);
    double sum = 0;
    int live = 0;
    for (int j = 0; j < v.p; ++j)
      if (v.c[j] > 0) sum += v.c[j], ++live;
    *v.t = live ? sum / live : 1.0;
    a.ok[b] = 1;
  }
};

// Item (b, j, l) over batch x p_max x p_max: S_jl; and, for l == 0, the right-hand side u2_j - P^T (u1 / r) in v2.
struct Schur {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int64_t pp = static_cast<int64_t>(a.p_max) * a.p_max;
    const int b = static_cast<int>(item / pp);
    const int j = static_cast<int>(item % pp / a.p_max), l = static_cast<int>(item % a.p_max);
    const View v(a, b);
    double s = j == l ? 1.0 : 0.0;
    if (v.live_column(j) && v.live_column(l)) {
      double sum = 0;
      for (int i = 0; i < v.n; ++i) sum += v.P(i, j) * v.P(i, l) * v.inv_r[i];
      s = (j == l ? v.c[j] : 0.0) - sum + *v.t;
    }
    v.S[static_cast<int64_t>(j) * a.p_max + l] = s;
    if (l != 0) return;
    double rhs = 0;
    if (v.live_column(j)) {
      double sum = 0;
      for (int i = 0; i < v.n; ++i) sum += v.P(i, j) * v.u1[i] * v.inv_r[i];
      rhs = v.u2[j] - sum;
    }
    v.v2[j] = rhs;
  }
};

// Item b over batch: S = L L^T in place (lower triangle), then v2 = S^-1 v2 by two triangular solves. A pivot that
// is not positive, or a non-finite solution, marks the problem degenerate (ok = 0, v2 = 0).
struct Solve {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int b = static_cast<int>(item);
    const View v(a, b);
    const int m = a.p_max;
    double* S = v.S;
    double* x = v.v2;
    bool good = true;
    for (int j = 0; j < m && good; ++j) {
      double d = S[static_cast<int64_t>(j) * m + j];
      for (int k = 0; k < j; ++k) d -= S[static_cast<int64_t>(j) * m + k] * S[static_cast<int64_t>(j) * m + k];
      if (!(d > 0) || !std::isfinite(d)) {
        good = false;
        break;
      }
      const double ljj = std::sqrt(d);
      S[static_cast<int64_t>(j) * m + j] = ljj;
      for (int i = j + 1; i < m; ++i) {
        double s = S[static_cast<int64_t>(i) * m + j];
        for (int k = 0; k < j; ++k) s -= S[static_cast<int64_t>(i) * m + k] * S[static_cast<int64_t>(j) * m + k];
        S[static_cast<int64_t>(i) * m + j] = s / ljj;
      }
    }
    if (good) {
      for (int i = 0; i < m; ++i) {  // L y = rhs
        double s = x[i];
        for (int k = 0; k < i; ++k) s -= S[static_cast<int64_t>(i) * m + k] * x[k];
        x[i] = s / S[static_cast<int64_t>(i) * m + i];
      }
      for (int i = m - 1; i >= 0; --i) {  // L^T v2 = y
        double s = x[i];
        for (int k = i + 1; k < m; ++k) s -= S[static_cast<int64_t>(k) * m + i] * x[k];
        x[i] = s / S[static_cast<int64_t>(i) * m + i];
      }
      for (int i = 0; i < m; ++i) good = good && std::isfinite(x[i]);
    }
    if (!good) {
      a.ok[b] = 0;
      for (int i = 0; i < m; ++i) x[i] = 0;
    }
  }
};

// Item (b, i) over batch x n_max: v1_i = (u1_i - (P v2)_i) / r_i.
struct RowPotential {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int b = static_cast<int>(item / a.n_max), i = static_cast<int>(item % a.n_max);
    const View v(a, b);
    double out = 0;
    if (i < v.n) {
      double s = 0;
      for (int j = 0; j < v.p; ++j) s += v.P(i, j) * v.v2[j];
      out = v.inv_r[i] * (v.u1[i] - s);
      if (!std::isfinite(out)) a.ok[b] = 0;
    }
    v.v1[i] = out;
  }
};

// Item (b, i, j) over batch x n_max x p_max: dL/dC_ij, 0 on padding and where the logit was clamped.
struct CostGradient {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int64_t np = static_cast<int64_t>(a.n_max) * a.p_max;
    const int b = static_cast<int>(item / np);
    const int i = static_cast<int>(item % np / a.p_max), j = static_cast<int>(item % a.p_max);
    const View v(a, b);
    const int64_t at = static_cast<int64_t>(i) * a.p_max + j;
    float g = 0.0f;
    if (i < v.n && j < v.p && !elementwise::logit_clamped(a.scale, v.cost[at]))
      g = static_cast<float>(a.scale * (v.W(i, j) - v.P(i, j) * (v.v1[i] + v.v2[j])));
    v.grad_cost[at] = g;
  }
};

// The whole gradient, enqueued on `exec` (launch(count, functor): one call per item, in any order and concurrently
// within a launch; launches run in order). `ok` is complete once the executor has finished.
template <typename Exec>
void pass(Exec& exec, const Args& a) {
  const int64_t rows = static_cast<int64_t>(a.batch) * a.n_max, cols = static_cast<int64_t>(a.batch) * a.p_max;
  exec.launch(rows, RowSums{a});
  exec.launch(cols, ColumnSums{a});
  exec.launch(a.batch, Shift{a});
  exec.launch(cols * a.p_max, Schur{a});
  exec.launch(a.batch, Solve{a});
  exec.launch(rows, RowPotential{a});
  exec.launch(rows * a.p_max, CostGradient{a});
}

}  // namespace inductive::sinkhorn_implicit
