// tests/device/sinkhorn_implicit_case.h - masked Sinkhorn problems with the CPU's implicit gradient, shared by the
// host-executor test of the device pass (sinkhorn_implicit_pass_test.cpp) and the CUDA suite (tests/cuda), so both
// hold the device code to the same reference on the same problems.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "inductive/sinkhorn.h"

namespace inductive::testing {

struct ImplicitShape {
  int batch, n_max, p_max;
  double eps;
  int iters;
  double tol = 0;  // > 0: the forward pass stops at this column error (the implicit gradient needs no fixed count)
};

// Similarities in [-1, 1), dL/dP in [-1, 1), lengths random in [1, max] (problem 0 full), the plan from the CPU
// forward pass and dL/dS from the CPU's implicit backward.
struct ImplicitCase {
  ImplicitShape shape;
  SinkhornOptions options;
  std::vector<float> sim, dplan, plan, grad;
  std::vector<int32_t> n, p;

  size_t size() const { return static_cast<size_t>(shape.batch) * shape.n_max * shape.p_max; }
  SinkhornProblem<float> problem() const {
    return {sim.data(), shape.batch, shape.n_max, shape.p_max, n.data(), p.data(), nullptr, nullptr};
  }
  std::string name() const {
    return "batch " + std::to_string(shape.batch) + " n " + std::to_string(shape.n_max) + " p " +
           std::to_string(shape.p_max) + " eps " + std::to_string(shape.eps) + " tol " + std::to_string(shape.tol);
  }
  void reference() { sinkhorn_implicit_backward(problem(), options, plan.data(), dplan.data(), grad.data()); }
};

inline ImplicitCase implicit_case(const ImplicitShape& s, uint32_t seed) {
  ImplicitCase c{s, {}, {}, {}, {}, {}, {}, {}};
  const size_t size = c.size();
  c.sim = random_vector<float>(size, seed, -1, 1);
  c.dplan = random_vector<float>(size, seed + 1, -1, 1);
  c.n.resize(s.batch);
  c.p.resize(s.batch);
  const auto rn = random_vector<double>(s.batch, seed + 2), rp = random_vector<double>(s.batch, seed + 3);
  for (int b = 0; b < s.batch; ++b) {
    c.n[b] = b == 0 ? s.n_max : 1 + static_cast<int32_t>(rn[b] * (s.n_max - 1));
    c.p[b] = b == 0 ? s.p_max : 1 + static_cast<int32_t>(rp[b] * (s.p_max - 1));
  }
  c.options.eps = s.eps;
  c.options.max_iter = s.iters;
  c.options.tol = s.tol;
  c.options.similarity = true;
  c.plan.assign(size, 0.0f);
  c.grad.assign(size, 0.0f);
  sinkhorn_log(c.problem(), c.options, SinkhornOutput<float>{c.plan.data()});
  c.reference();
  return c;
}

// The shapes both suites run: p = 1 (the plan does not depend on S), n = 1, OTKE's p = 64 and p = 10, p wider than a
// block of threads, small eps (large logits), many iterations, and a forward pass stopped by its tolerance.
inline std::vector<ImplicitShape> implicit_shapes() {
  return {{3, 17, 1, 0.5, 10},    {5, 37, 7, 0.5, 10},   {4, 300, 64, 0.5, 10},
          {4, 1000, 10, 0.5, 10}, {2, 50, 150, 0.5, 5},  {3, 1, 9, 0.5, 10},
          {3, 40, 16, 0.05, 10},  {2, 30, 12, 1.0, 100}, {3, 60, 20, 0.5, 500, 1e-6}};
}

// `got` against the case's CPU gradient: every entry finite, padding exactly 0, and the error within `tol` of the
// gradient's natural scale |dL/dP o P| / eps, plus <= tol relative to the CPU gradient's norm where that is not
// rounding noise (with p = 1 or n = 1 the plan is fixed by the marginals: both gradients are noise around 0).
inline void expect_matches_cpu(const ImplicitCase& c, const std::vector<float>& got, double tol) {
  SCOPED_TRACE(c.name());
  ASSERT_EQ(got.size(), c.size());
  double natural = 0, diff = 0, norm = 0;
  for (size_t e = 0; e < c.size(); ++e) {
    ASSERT_TRUE(std::isfinite(got[e])) << "gradient entry " << e << " not written or not finite";
    natural += std::pow(double(c.dplan[e]) * c.plan[e] / c.shape.eps, 2);
    diff += std::pow(double(got[e]) - c.grad[e], 2);
    norm += double(c.grad[e]) * c.grad[e];
  }
  EXPECT_LE(std::sqrt(diff), tol * std::max(std::sqrt(natural), 1e-30)) << "natural scale " << std::sqrt(natural);
  if (std::sqrt(norm) > 1e-3 * std::sqrt(natural))
    EXPECT_LE(std::sqrt(diff), tol * std::sqrt(norm)) << "relative to the CPU gradient";
  for (int b = 0; b < c.shape.batch; ++b)
    for (int i = 0; i < c.shape.n_max; ++i)
      for (int j = 0; j < c.shape.p_max; ++j)
        if (i >= c.n[b] || j >= c.p[b]) {
          ASSERT_EQ(got[(static_cast<size_t>(b) * c.shape.n_max + i) * c.shape.p_max + j], 0.0f)
              << "padding " << b << "," << i << "," << j;
        }
}

}  // namespace inductive::testing
