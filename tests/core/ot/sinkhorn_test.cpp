// Specification of inductive::sinkhorn_log (forward): closed forms, an independent double-precision reference,
// batching with masks, stopping rules, numerical safety, and one precise error per kind of bad input.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/elementwise.h"
#include "inductive/parallel.h"
#include "inductive/sinkhorn.h"
#include "ot/sinkhorn_detail.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;
using testing::random_cost;
using testing::random_marginal;

// Textbook log-domain Sinkhorn in double, written independently of the library (no kernels, no clamping), same
// iteration order as POT's sinkhorn_log: g then f.
struct Reference {
  std::vector<double> plan, f, g;
};
Reference reference_sinkhorn(const std::vector<double>& c, int n, int p, const std::vector<double>& a,
                             const std::vector<double>& b, double eps, int iters) {
  std::vector<double> f(n, 0.0), g(p, 0.0);
  auto lse = [](const std::vector<double>& v) {
    double m = -INFINITY;
    for (double x : v) m = std::max(m, x);
    double s = 0;
    for (double x : v) s += std::exp(x - m);
    return m + std::log(s);
  };
  for (int t = 0; t < iters; ++t) {
    for (int j = 0; j < p; ++j) {
      std::vector<double> v(n);
      for (int i = 0; i < n; ++i) v[i] = (f[i] - c[i * p + j]) / eps;
      g[j] = eps * (std::log(b[j]) - lse(v));
    }
    for (int i = 0; i < n; ++i) {
      std::vector<double> v(p);
      for (int j = 0; j < p; ++j) v[j] = (g[j] - c[i * p + j]) / eps;
      f[i] = eps * (std::log(a[i]) - lse(v));
    }
  }
  Reference r{std::vector<double>(static_cast<size_t>(n) * p), f, g};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) r.plan[i * p + j] = std::exp((f[i] + g[j] - c[i * p + j]) / eps);
  return r;
}

template <typename T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

TEST(Sinkhorn, MatchesIndependentDoubleReferenceOnRandomProblems) {
  for (int trial = 0; trial < 6; ++trial) {
    const int n = 3 + 7 * trial, p = 2 + 5 * trial;
    const auto c = random_cost<float>(n, p, 10 + trial);
    const auto a = random_marginal<float>(n, 20 + trial);
    const auto b = random_marginal<float>(p, 30 + trial);
    SinkhornOptions o;
    o.eps = 0.05 + 0.1 * trial;
    o.max_iter = 50;
    const auto r = sinkhorn_log(c.data(), n, p, a.data(), b.data(), o);
    const auto ref = reference_sinkhorn(to_double(c), n, p, to_double(a), to_double(b), o.eps, o.max_iter);
    for (int k = 0; k < n * p; ++k) EXPECT_NEAR(r.plan[k], ref.plan[k], 2e-6 + 1e-4 * ref.plan[k]) << k;
    for (int i = 0; i < n; ++i) EXPECT_NEAR(r.f[i], ref.f[i], 1e-4 * (1 + std::fabs(ref.f[i])));
    for (int j = 0; j < p; ++j) EXPECT_NEAR(r.g[j], ref.g[j], 1e-4 * (1 + std::fabs(ref.g[j])));
    EXPECT_EQ(r.n_iter, 50);
  }
}

TEST(Sinkhorn, ConstantCostGivesTheIndependentCoupling) {
  const int n = 5, p = 4;
  std::vector<float> c(n * p, 3.0f);
  const auto a = random_marginal<float>(n, 1);
  const auto b = random_marginal<float>(p, 2);
  const auto r = sinkhorn_log(c.data(), n, p, a.data(), b.data(), SinkhornOptions{});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) EXPECT_NEAR(r.plan[i * p + j], a[i] * b[j], 1e-7);
  EXPECT_TRUE(r.converged);
}

TEST(Sinkhorn, OnePointSetsTransportEverythingToOrFromThatPoint) {
  const auto c = random_cost<float>(1, 6, 3);
  const auto b = random_marginal<float>(6, 4);
  const float one = 1.0f;
  const auto r = sinkhorn_log(c.data(), 1, 6, &one, b.data(), SinkhornOptions{});
  for (int j = 0; j < 6; ++j) EXPECT_NEAR(r.plan[j], b[j], 1e-6);
  const auto r2 = sinkhorn_log(c.data(), 6, 1, b.data(), &one, SinkhornOptions{});
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(r2.plan[i], b[i], 1e-6);
  const auto r3 = sinkhorn_log(c.data(), 1, 1, nullptr, nullptr, SinkhornOptions{});
  EXPECT_NEAR(r3.plan[0], 1.0, 1e-7);
}

TEST(Sinkhorn, RowsMatchAAfterEveryRunAndColumnsConvergeWithTolerance) {
  const int n = 40, p = 30;
  const auto c = random_cost<float>(n, p, 5);
  SinkhornOptions o;
  o.eps = 0.1;
  o.tol = 1e-5;
  o.max_iter = 10000;
  const auto r = sinkhorn_log(c.data(), n, p, nullptr, nullptr, o);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(r.n_iter, o.max_iter);
  EXPECT_GT(r.n_iter, 1);
  EXPECT_LE(r.marginal_err, 2e-5);
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < p; ++j) s += r.plan[i * p + j];
    EXPECT_NEAR(s, 1.0 / n, 1e-6);
  }
  // A fixed small number of iterations leaves a column error that is reported honestly.
  SinkhornOptions few = o;
  few.tol = 0;
  few.max_iter = 1;
  const auto r1 = sinkhorn_log(c.data(), n, p, nullptr, nullptr, few);
  EXPECT_EQ(r1.n_iter, 1);
  double err = 0;
  for (int j = 0; j < p; ++j) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += r1.plan[i * p + j];
    err += std::fabs(s - 1.0 / p);
  }
  EXPECT_NEAR(r1.marginal_err, err, 1e-5);
  EXPECT_FALSE(r1.converged);
}

TEST(Sinkhorn, StoppingOnTheToleranceMeansConverged) {
  // tol near float precision: the float plan's error may exceed tol by rounding, yet stopping early is convergence.
  for (int trial = 0; trial < 40; ++trial) {
    const auto c = random_cost<float>(24, 30, 100 + trial, 2);
    SinkhornOptions o;
    o.eps = 0.01;
    o.tol = 1e-6;
    o.max_iter = 5000;
    const auto r = sinkhorn_log(c.data(), 24, 30, nullptr, nullptr, o);
    EXPECT_EQ(r.converged, r.n_iter < o.max_iter) << "trial " << trial << ": " << r.n_iter << " iterations";
    EXPECT_LT(r.marginal_err, 1e-5);
  }
}

TEST(Sinkhorn, CostValueIsTheRegularisedObjective) {
  const int n = 7, p = 9;
  const auto c = random_cost<double>(n, p, 6);
  SinkhornOptions o;
  o.eps = 0.2;
  o.max_iter = 500;
  const auto r = sinkhorn_log<double>(c.data(), n, p, nullptr, nullptr, o);
  double direct = 0;
  for (int k = 0; k < n * p; ++k) direct += r.plan[k] * c[k] + o.eps * r.plan[k] * (std::log(r.plan[k]) - 1);
  EXPECT_NEAR(r.cost_value, direct, 1e-10);
}

TEST(Sinkhorn, SimilarityIsTheNegatedCost) {
  const int n = 6, p = 4;
  const auto c = random_cost<float>(n, p, 7);
  std::vector<float> s(c.size());
  for (size_t k = 0; k < c.size(); ++k) s[k] = -c[k];
  SinkhornOptions o;
  const auto rc = sinkhorn_log(c.data(), n, p, nullptr, nullptr, o);
  o.similarity = true;
  const auto rs = sinkhorn_log(s.data(), n, p, nullptr, nullptr, o);
  for (size_t k = 0; k < c.size(); ++k) EXPECT_FLOAT_EQ(rc.plan[k], rs.plan[k]);
}

TEST(Sinkhorn, BatchWithMasksEqualsSeparateSolvesAndZeroesPadding) {
  const int batch = 4, n_max = 12, p_max = 9;
  const int32_t ns[batch] = {12, 1, 7, 3};
  const int32_t ps[batch] = {9, 4, 1, 9};
  std::vector<float> cost(batch * n_max * p_max, std::numeric_limits<float>::quiet_NaN());  // padding never read
  std::vector<float> a(batch * n_max, -1.0f), b(batch * p_max, -1.0f);
  std::vector<std::vector<float>> cs(batch), as(batch), bs(batch);
  for (int bi = 0; bi < batch; ++bi) {
    cs[bi] = random_cost<float>(ns[bi], ps[bi], 40 + bi);
    as[bi] = random_marginal<float>(ns[bi], 50 + bi, 2.0);
    bs[bi] = random_marginal<float>(ps[bi], 60 + bi, 2.0);
    for (int i = 0; i < ns[bi]; ++i) {
      a[bi * n_max + i] = as[bi][i];
      for (int j = 0; j < ps[bi]; ++j) cost[(bi * n_max + i) * p_max + j] = cs[bi][i * ps[bi] + j];
    }
    for (int j = 0; j < ps[bi]; ++j) b[bi * p_max + j] = bs[bi][j];
  }
  SinkhornProblem<float> pr{cost.data(), batch, n_max, p_max, ns, ps, a.data(), b.data()};
  SinkhornOptions o;
  o.eps = 0.1;
  o.max_iter = 30;
  std::vector<float> plan(cost.size(), 99.f), f(a.size(), 99.f), g(b.size(), 99.f), err(batch);
  std::vector<int32_t> iters(batch);
  std::vector<uint8_t> conv(batch);
  sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data(), f.data(), g.data(), iters.data(), err.data(), conv.data()});
  for (int bi = 0; bi < batch; ++bi) {
    const auto r = sinkhorn_log(cs[bi].data(), ns[bi], ps[bi], as[bi].data(), bs[bi].data(), o);
    EXPECT_EQ(iters[bi], r.n_iter);
    EXPECT_FLOAT_EQ(err[bi], r.marginal_err);
    for (int i = 0; i < n_max; ++i) {
      for (int j = 0; j < p_max; ++j) {
        const float got = plan[(bi * n_max + i) * p_max + j];
        if (i < ns[bi] && j < ps[bi])
          EXPECT_FLOAT_EQ(got, r.plan[i * ps[bi] + j]);
        else
          EXPECT_EQ(got, 0.0f) << "padding of problem " << bi;
      }
      EXPECT_EQ(f[bi * n_max + i], i < ns[bi] ? r.f[i] : 0.0f);
    }
    for (int j = 0; j < p_max; ++j) EXPECT_EQ(g[bi * p_max + j], j < ps[bi] ? r.g[j] : 0.0f);
  }
}

TEST(Sinkhorn, NeverNaNForExtremeButFiniteInput) {
  const int n = 5, p = 6;
  struct Case {
    double eps;
    float scale;
  };
  for (const Case k : {Case{1e-12, 1.0f}, Case{1e-6, 1e6f}, Case{1e-3, 3e38f}, Case{1e12, 1.0f}, Case{0.5, 1e-30f}}) {
    auto c = random_cost<float>(n, p, 8);
    for (auto& x : c) x *= k.scale;
    c[3] = -c[3];  // negative costs are allowed
    SinkhornOptions o;
    o.eps = k.eps;
    o.max_iter = 50;
    const auto r = sinkhorn_log(c.data(), n, p, nullptr, nullptr, o);
    EXPECT_TRUE(all_finite(r.plan)) << "eps " << k.eps << " scale " << k.scale;
    for (float x : r.plan) EXPECT_GE(x, 0.0f);
    EXPECT_TRUE(std::isfinite(r.marginal_err));
    EXPECT_TRUE(std::isfinite(r.cost_value));
    double mass = 0;
    for (float x : r.plan) mass += x;
    EXPECT_NEAR(mass, 1.0, 1e-4) << "eps " << k.eps << " scale " << k.scale;
  }
}

TEST(Sinkhorn, TinyEpsApproachesTheUnregularisedAssignment) {
  // Two points each side; the optimal assignment is the identity with cost 0.
  const float c[4] = {0.0f, 1.0f, 1.0f, 0.0f};
  SinkhornOptions o;
  o.eps = 1e-4;
  const auto r = sinkhorn_log(c, 2, 2, nullptr, nullptr, o);
  EXPECT_NEAR(r.plan[0], 0.5, 1e-6);
  EXPECT_NEAR(r.plan[1], 0.0, 1e-6);
  EXPECT_NEAR(r.plan[3], 0.5, 1e-6);
}

TEST(Sinkhorn, ZeroWeightPointsReceiveNoMass) {
  const int n = 4, p = 3;
  const auto c = random_cost<float>(n, p, 9);
  const float a[n] = {0.5f, 0.0f, 0.25f, 0.25f};
  const auto r = sinkhorn_log(c.data(), n, p, a, nullptr, SinkhornOptions{});
  for (int j = 0; j < p; ++j) EXPECT_EQ(r.plan[1 * p + j], 0.0f);
  EXPECT_TRUE(all_finite(r.plan));
}

TEST(Sinkhorn, RejectsBadInputWithPreciseErrors) {
  const auto c = random_cost<float>(3, 2, 11);
  const float a[3] = {0.2f, 0.3f, 0.5f};
  const float b[2] = {0.5f, 0.5f};
  SinkhornOptions o;
  auto solve = [&](const float* cost, int n, int p, const float* aa, const float* bb, SinkhornOptions opt) {
    return [=] { sinkhorn_log(cost, n, p, aa, bb, opt); };
  };
  expect_error(solve(c.data(), 0, 2, nullptr, nullptr, o), ErrorCode::kInvalidArgument, "empty point set");
  expect_error(solve(c.data(), 3, 0, nullptr, nullptr, o), ErrorCode::kInvalidArgument, "empty point set");
  auto neg = o;
  neg.eps = -1;
  expect_error(solve(c.data(), 3, 2, nullptr, nullptr, neg), ErrorCode::kInvalidArgument, "eps must be a finite");
  auto nan_eps = o;
  nan_eps.eps = std::nan("");
  expect_error(solve(c.data(), 3, 2, nullptr, nullptr, nan_eps), ErrorCode::kInvalidArgument, "eps");
  auto zero_iter = o;
  zero_iter.max_iter = 0;
  expect_error(solve(c.data(), 3, 2, nullptr, nullptr, zero_iter), ErrorCode::kInvalidArgument, "max_iter");
  auto bad_c = c;
  bad_c[4] = std::numeric_limits<float>::infinity();
  expect_error(solve(bad_c.data(), 3, 2, nullptr, nullptr, o), ErrorCode::kInvalidArgument,
               "non-finite value at (2, 0)");
  bad_c[4] = std::nanf("");
  expect_error(solve(bad_c.data(), 3, 2, nullptr, nullptr, o), ErrorCode::kInvalidArgument, "non-finite");
  const float a_nan[3] = {0.2f, std::nanf(""), 0.5f};
  expect_error(solve(c.data(), 3, 2, a_nan, b, o), ErrorCode::kInvalidArgument,
               "marginal a of problem 0 has a non-finite");
  const float a_neg[3] = {0.7f, -0.2f, 0.5f};
  expect_error(solve(c.data(), 3, 2, a_neg, b, o), ErrorCode::kInvalidArgument, "negative weight at index 1");
  const float a_zero[3] = {0, 0, 0};
  expect_error(solve(c.data(), 3, 2, a_zero, b, o), ErrorCode::kInvalidArgument, "zero total mass");
  const float b_more[2] = {0.5f, 0.7f};
  expect_error(solve(c.data(), 3, 2, a, b_more, o), ErrorCode::kInvalidArgument, "same mass");
  expect_error(solve(nullptr, 3, 2, a, b, o), ErrorCode::kInvalidArgument, "no cost matrix");

  const int32_t bad_n[1] = {4};
  SinkhornProblem<float> pr{c.data(), 1, 3, 2, bad_n, nullptr, nullptr, nullptr};
  std::vector<float> plan(6, 7.0f);
  expect_error([&] { sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data()}); }, ErrorCode::kShapeMismatch,
               "length n of problem 0 out of range: got 4, expected 1..3");
  for (float x : plan) EXPECT_EQ(x, 7.0f) << "an error must leave outputs untouched";
}

// The batch's costs are scanned on the threads before the problems are checked in order (sinkhorn_validate.cpp), so
// the error is still the first problem's, entry and all: a bad cost in problem 5 of 9 with another in problem 7 names
// problem 5; a bad length in problem 2 comes before a bad cost in problem 3, and a bad cost in problem 1 before a bad
// length in problem 2. Nothing is written.
TEST(Sinkhorn, ABatchNamesItsFirstBadProblemWhateverTheThreadsScanFirst) {
  struct CapGuard {
    ~CapGuard() { set_parallel_threads(0); }
  } guard;
  const int B = 9, n = 40, p = 33;
  auto c = random_cost<float>(B * n, p, 5);
  std::vector<int32_t> lengths(B, n);
  SinkhornOptions o;
  std::vector<float> plan(c.size(), 7.0f);
  auto run = [&] {
    SinkhornProblem<float> pr{c.data(), B, n, p, lengths.data(), nullptr, nullptr, nullptr};
    sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data()});
  };
  for (int threads : {1, 2, 3}) {
    set_parallel_threads(threads);
    auto cost = c;
    c[(7 * n + 3) * p + 30] = std::numeric_limits<float>::infinity();
    c[(5 * n + 39) * p + 32] = std::nanf("");
    expect_error(run, ErrorCode::kInvalidArgument, "cost matrix of problem 5 has a non-finite value at (39, 32)");
    c = cost;
    c[(3 * n + 1) * p + 2] = -std::numeric_limits<float>::infinity();
    lengths[2] = n + 1;
    expect_error(run, ErrorCode::kShapeMismatch, "length n of problem 2 out of range: got 41");
    c[(1 * n) * p] = std::nanf("");
    expect_error(run, ErrorCode::kInvalidArgument, "cost matrix of problem 1 has a non-finite value at (0, 0)");
    c = cost;
    lengths[2] = n;
    // A bad entry in the padding is never read: problem 4 holds 10 rows.
    lengths[4] = 10;
    c[(4 * n + 20) * p + 5] = std::nanf("");
    EXPECT_NO_THROW(run());
    c = cost;
    lengths[4] = n;
    for (size_t e = 0; e < plan.size(); ++e) plan[e] = 7.0f;
    c[(8 * n + 39) * p + 32] = std::numeric_limits<float>::infinity();  // the batch's very last entry
    expect_error(run, ErrorCode::kInvalidArgument, "cost matrix of problem 8 has a non-finite value at (39, 32)");
    for (float x : plan) ASSERT_EQ(x, 7.0f) << "an error must leave outputs untouched";
    c = cost;
  }
}

// K = -C/eps (or S/eps) as elementwise::logit forms it, bit for bit: the product in double rounded once, clamped to
// +-kMaxLogit, in place too, and K's range: fill_logits clamps in float, after rounding, on a vector pass.
TEST(Sinkhorn, LogitsAreTheElementwiseLogitBitForBitWithTheirRange) {
  const int n = 5, p = 37, ld = 40;
  std::vector<float> cost(static_cast<size_t>(n) * ld, 123.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) cost[i * ld + j] = u(rng);
  cost[0] = 3e38f, cost[1] = -3e38f, cost[ld + 17] = 1.1e29f, cost[2 * ld + 36] = -9.9999e28f;
  for (const bool similarity : {false, true})
    for (const double eps : {0.5, 0.1, 1e-9}) {
      SinkhornOptions o;
      o.eps = eps;
      o.similarity = similarity;
      const detail::ProblemSlice<float> s{cost.data(), n, p, ld, nullptr, nullptr};
      std::vector<float> k(cost.size(), -5.0f);
      float lo = 0, hi = 0;
      detail::fill_logits(s, o, k.data(), &lo, &hi);
      auto in_place = cost;
      const detail::ProblemSlice<float> t{in_place.data(), n, p, ld, nullptr, nullptr};
      detail::fill_logits(t, o, in_place.data());
      const double scale = (similarity ? 1.0 : -1.0) / eps;
      float want_lo = std::numeric_limits<float>::infinity(), want_hi = -want_lo;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < p; ++j) {
          const float want = elementwise::logit(scale, cost[i * ld + j]);
          EXPECT_EQ(k[i * ld + j], want) << "eps " << eps << " at (" << i << ", " << j << ")";
          EXPECT_EQ(in_place[i * ld + j], want) << "in place, eps " << eps << " at (" << i << ", " << j << ")";
          want_lo = std::min(want_lo, want);
          want_hi = std::max(want_hi, want);
        }
      EXPECT_EQ(lo, want_lo);
      EXPECT_EQ(hi, want_hi);
      EXPECT_EQ(k[p], -5.0f) << "the padding is not written";
    }
}

TEST(Sinkhorn, ReportsItsKernelName) {
  const std::string name = sinkhorn_kernel_name();
#if defined(__EMSCRIPTEN__)
  // The same test objects link against the SIMD128 core and the relaxed-SIMD one (tests/CMakeLists.txt).
  EXPECT_TRUE(name == "wasm-simd128" || name == "wasm-relaxed-simd") << name;
#else
  EXPECT_TRUE(name == "avx512" || name == "avx2" || name == "sse2" || name == "scalar") << name;
#endif
}

}  // namespace
}  // namespace inductive
