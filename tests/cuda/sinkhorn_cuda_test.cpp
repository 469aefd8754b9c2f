// The CUDA Sinkhorn held to the CPU oracle (inductive::sinkhorn_log): masked batches of every shape class the
// kernel splits work differently for (p = 1, p < 256, 256 < p < 512, p = 512, p > 512, n = 1), extreme eps and
// costs, zero weights, the tolerance mode, the device-pointer entry points and the errors. Tests that need a
// device skip with a message when there is none; the factory tests run everywhere.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "../core/test_util.h"
#include "cuda_backend.h"
#include "cuda_test_util.h"
#include "inductive/backend_registry.h"
#include "inductive/sinkhorn.h"
#include "sinkhorn_kernels.h"

namespace inductive {
namespace {

using testing::expect_error;

// ---- device presence --------------------------------------------------------------------------------------------

using testing::cuda_device_present;

std::unique_ptr<Backend> cuda_backend() {
  cuda::register_cuda_backend();
  return make_backend("cuda");
}

// ---- batches ----------------------------------------------------------------------------------------------------

enum class Weights { kUniform, kRandom, kWithZeros };

struct Batch {
  int batch = 1, n_max = 1, p_max = 1;
  std::vector<int32_t> n, p;      // empty: all n_max / p_max
  std::vector<float> cost, a, b;  // a, b empty: uniform

  SinkhornProblem<float> problem() const {
    return {cost.data(),
            batch,
            n_max,
            p_max,
            n.empty() ? nullptr : n.data(),
            p.empty() ? nullptr : p.data(),
            a.empty() ? nullptr : a.data(),
            b.empty() ? nullptr : b.data()};
  }
  int n_of(int bi) const { return n.empty() ? n_max : n[bi]; }
  int p_of(int bi) const { return p.empty() ? p_max : p[bi]; }
};

// Random weights of total `mass` with (for kWithZeros) every third point, but never all, at zero.
std::vector<float> weights(int len, uint32_t seed, double mass, Weights kind) {
  auto w = testing::random_marginal<double>(len, seed, 1.0);
  if (kind == Weights::kWithZeros && len > 1)
    for (int i = 1; i < len; i += 3) w[i] = 0;
  double s = 0;
  for (double x : w) s += x;
  std::vector<float> out(len);
  for (int i = 0; i < len; ++i) out[i] = static_cast<float>(w[i] * mass / s);
  return out;
}

// A padded batch: problem 0 has the full size, the others random lengths when `masked`; padding holds NaN (never
// read) and -1 weights. `scale` multiplies the costs (squared distances in the unit cube, so in [0, 3]).
Batch make_batch(int batch, int n_max, int p_max, uint32_t seed, bool masked, Weights wa, Weights wb,
                 double scale = 1.0, double mass = 1.0) {
  Batch B;
  B.batch = batch;
  B.n_max = n_max;
  B.p_max = p_max;
  B.cost.assign(static_cast<size_t>(batch) * n_max * p_max, std::numeric_limits<float>::quiet_NaN());
  if (masked) {
    const auto rn = testing::random_vector<double>(batch, seed + 1);
    const auto rp = testing::random_vector<double>(batch, seed + 2);
    for (int bi = 0; bi < batch; ++bi) {
      B.n.push_back(bi == 0 ? n_max : 1 + static_cast<int32_t>(rn[bi] * (n_max - 1) + 0.5));
      B.p.push_back(bi == 0 ? p_max : 1 + static_cast<int32_t>(rp[bi] * (p_max - 1) + 0.5));
    }
  }
  if (wa != Weights::kUniform) B.a.assign(static_cast<size_t>(batch) * n_max, -1.0f);
  if (wb != Weights::kUniform) B.b.assign(static_cast<size_t>(batch) * p_max, -1.0f);
  for (int bi = 0; bi < batch; ++bi) {
    const int n = B.n_of(bi), p = B.p_of(bi);
    const auto c = testing::random_cost<float>(n, p, seed + 10 * bi + 3);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < p; ++j)
        B.cost[(static_cast<size_t>(bi) * n_max + i) * p_max + j] = static_cast<float>(scale * c[i * p + j]);
    if (!B.a.empty()) {
      const auto w = weights(n, seed + 10 * bi + 4, mass, wa);
      std::copy(w.begin(), w.end(), B.a.begin() + static_cast<size_t>(bi) * n_max);
    }
    if (!B.b.empty()) {
      const auto w = weights(p, seed + 10 * bi + 5, mass, wb);
      std::copy(w.begin(), w.end(), B.b.begin() + static_cast<size_t>(bi) * p_max);
    }
  }
  return B;
}

// ---- solving and comparing --------------------------------------------------------------------------------------

struct Result {
  std::vector<float> plan, f, g, err, value;
  std::vector<int32_t> iters;
  std::vector<uint8_t> conv;
};

// Outputs start as a sentinel, so padding that is not written (or a problem that is skipped) shows.
Result solve(const std::function<void(const SinkhornProblem<float>&, const SinkhornOutput<float>&)>& run,
             const Batch& B) {
  constexpr float kSentinel = 77.0f;
  Result r;
  r.plan.assign(B.cost.size(), kSentinel);
  r.f.assign(static_cast<size_t>(B.batch) * B.n_max, kSentinel);
  r.g.assign(static_cast<size_t>(B.batch) * B.p_max, kSentinel);
  r.err.assign(B.batch, kSentinel);
  r.value.assign(B.batch, kSentinel);
  r.iters.assign(B.batch, -7);
  r.conv.assign(B.batch, 7);
  run(B.problem(), SinkhornOutput<float>{r.plan.data(), r.f.data(), r.g.data(), r.iters.data(), r.err.data(),
                                         r.conv.data(), r.value.data()});
  return r;
}

Result solve_cpu(const Batch& B, const SinkhornOptions& o) {
  return solve([&](const auto& pr, const auto& out) { sinkhorn_log(pr, o, out); }, B);
}

Result solve_backend(Backend& backend, const Batch& B, const SinkhornOptions& o) {
  return solve([&](const auto& pr, const auto& out) { backend.sinkhorn_log(pr, o, out); }, B);
}

struct Tolerance {
  // Potentials, once their common offset is removed (see expect_matches_cpu): |f_gpu - f_cpu| <= pot * (eps +
  // max |f|, |g| of the problem). 1e-5 leaves ~100 float ulps for exp/log implementations and summation order.
  double pot = 1e-5;
  // The common offset of f (and -g): at most this x pot scale per iteration.
  double gauge_per_iter = 1e-6;
  // Plan: |P_gpu - P_cpu| <= plan_rel * P_cpu + plan_abs * max P. An entry is exp(F + G + K), so its relative
  // error is the potentials' error in units of eps: larger than theirs when |C|/eps is large.
  double plan_rel = 1e-4;
  double plan_abs = 1e-6;
  // Compare the marginal error and the cost value (off where they are decided by the rounding of 1e30-sized sums).
  bool scalars = true;
};

// For |C|/eps so large that one ulp of F moves a plan entry by tens of percent.
Tolerance loose_plan() {
  Tolerance t;
  t.plan_rel = 1.0;
  t.plan_abs = 1e-3;
  return t;
}

bool same_infinity(double x, double y) { return std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0); }

// Compares one problem and reports its worst entry once (not thousands of EXPECT lines).
void expect_matches_cpu(const Batch& B, const SinkhornOptions& o, const Result& gpu, const Result& cpu,
                        const Tolerance& tol = {}) {
  for (int bi = 0; bi < B.batch; ++bi) {
    SCOPED_TRACE(::testing::Message() << "problem " << bi << " of " << B.batch << " (n " << B.n_of(bi) << " of "
                                      << B.n_max << ", p " << B.p_of(bi) << " of " << B.p_max << ", eps " << o.eps
                                      << ")");
    const int n = B.n_of(bi), p = B.p_of(bi);
    const size_t fo = static_cast<size_t>(bi) * B.n_max, go = static_cast<size_t>(bi) * B.p_max;
    const size_t po = static_cast<size_t>(bi) * B.n_max * B.p_max;

    double pot_scale = o.eps, plan_max = 0;
    for (int i = 0; i < n; ++i)
      if (std::isfinite(cpu.f[fo + i])) pot_scale = std::max(pot_scale, std::fabs(double(cpu.f[fo + i])));
    for (int j = 0; j < p; ++j)
      if (std::isfinite(cpu.g[go + j])) pot_scale = std::max(pot_scale, std::fabs(double(cpu.g[go + j])));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < p; ++j) plan_max = std::max(plan_max, double(cpu.plan[po + size_t(i) * B.p_max + j]));

    // Potentials. The plan only fixes them up to (f + c, g - c), and the iteration never damps that direction, so
    // rounding walks it (~ulps per iteration, both sides differently): compare them with the mean offset c
    // removed, and c itself against a budget that grows with the iterations. -inf (zero weight) must match.
    double c = 0;
    int finite = 0;
    for (int i = 0; i < n; ++i)
      if (std::isfinite(gpu.f[fo + i]) && std::isfinite(cpu.f[fo + i])) {
        c += double(gpu.f[fo + i]) - cpu.f[fo + i];
        ++finite;
      }
    c = finite ? c / finite : 0;
    EXPECT_LE(std::fabs(c), tol.gauge_per_iter * std::max(cpu.iters[bi], 1) * pot_scale)
        << "potentials offset by " << c;
    auto check_vector = [&](const char* what, const std::vector<float>& x, const std::vector<float>& y, size_t off,
                            int len, int len_max, double shift) {
      int bad = -1;
      double worst = 0;
      for (int k = 0; k < len; ++k) {
        const double u = x[off + k], v = y[off + k];
        if (same_infinity(u, v)) continue;
        const double d = std::isfinite(u) && std::isfinite(v) ? std::fabs(u - shift - v) : INFINITY;
        if (d > tol.pot * pot_scale && d >= worst) {
          worst = d;
          bad = k;
        }
      }
      EXPECT_EQ(bad, -1) << what << "[" << bad << "]: cuda " << (bad >= 0 ? x[off + bad] : 0) << ", cpu "
                         << (bad >= 0 ? y[off + bad] : 0) << " after removing the offset " << shift << " (tolerance "
                         << tol.pot * pot_scale << ")";
      for (int k = len; k < len_max; ++k) {
        EXPECT_EQ(x[off + k], 0.0f) << what << " padding at " << k;
        if (x[off + k] != 0.0f) break;
      }
    };
    check_vector("f", gpu.f, cpu.f, fo, n, B.n_max, c);
    check_vector("g", gpu.g, cpu.g, go, p, B.p_max, -c);

    // Plan, and exact zeros in its padding.
    int bi_bad = -1, bj_bad = -1, pad_bad = -1;
    double worst = 0;
    for (int i = 0; i < B.n_max; ++i)
      for (int j = 0; j < B.p_max; ++j) {
        const size_t k = po + static_cast<size_t>(i) * B.p_max + j;
        const double u = gpu.plan[k], v = cpu.plan[k];
        if (i >= n || j >= p) {
          if (u != 0.0 && pad_bad < 0) pad_bad = static_cast<int>(k - po);
          continue;
        }
        const double d = std::isfinite(u) ? std::fabs(u - v) : INFINITY;
        if (d > tol.plan_rel * v + tol.plan_abs * plan_max && d >= worst) {
          worst = d;
          bi_bad = i;
          bj_bad = j;
        }
      }
    EXPECT_EQ(bi_bad, -1) << "plan(" << bi_bad << ", " << bj_bad << "): cuda "
                          << (bi_bad >= 0 ? gpu.plan[po + size_t(bi_bad) * B.p_max + bj_bad] : 0) << ", cpu "
                          << (bi_bad >= 0 ? cpu.plan[po + size_t(bi_bad) * B.p_max + bj_bad] : 0);
    EXPECT_EQ(pad_bad, -1) << "plan padding not zero at flat index " << pad_bad << ": "
                           << (pad_bad >= 0 ? gpu.plan[po + pad_bad] : 0);

    // Scalars: the iteration count is exact; the rest within rounding of the mass and the potentials.
    EXPECT_EQ(gpu.iters[bi], cpu.iters[bi]);
    double mass = 1;
    if (!B.a.empty()) {
      mass = 0;
      for (int i = 0; i < n; ++i) mass += B.a[fo + i];
    }
    if (!tol.scalars) {
      // The L1 marginal error of a plan of mass `mass` against marginals of that mass is at most 2 mass.
      EXPECT_LE(gpu.err[bi], 2 * mass * (1 + 1e-5));
      continue;
    }
    EXPECT_NEAR(gpu.err[bi], cpu.err[bi], 1e-5 * mass + 1e-2 * cpu.err[bi]);
    const double threshold = o.tol > 0 ? o.tol : 1e-4 * mass;
    if (std::fabs(cpu.err[bi] - threshold) > 1e-2 * threshold) EXPECT_EQ(gpu.conv[bi], cpu.conv[bi]);
    EXPECT_TRUE(gpu.conv[bi] == 0 || gpu.conv[bi] == 1) << int(gpu.conv[bi]);
    EXPECT_NEAR(gpu.value[bi], cpu.value[bi], 1e-5 * pot_scale * mass + 1e-6 * std::fabs(cpu.value[bi]));
  }
}

void expect_all_finite_nonnegative(const Result& r) {
  for (size_t k = 0; k < r.plan.size(); ++k) {
    ASSERT_TRUE(std::isfinite(r.plan[k]) && r.plan[k] >= 0) << "plan[" << k << "] = " << r.plan[k];
  }
  for (float x : r.err) EXPECT_TRUE(std::isfinite(x));
  for (float x : r.value) EXPECT_TRUE(std::isfinite(x));
}

// ---- tests that run without a GPU ------------------------------------------------------------------------------

TEST(CudaBackendFactory, WithoutADeviceIsABackendErrorNotACrash) {
  std::string why;
  if (cuda_device_present(&why)) GTEST_SKIP() << "a CUDA device is present; covered by the tests that use it";
  cuda::register_cuda_backend();
  expect_error([] { make_backend("cuda"); }, ErrorCode::kBackend,
               "cuda: no CUDA device available (cudaGetDeviceCount: ");
  expect_error([] { make_backend("cuda:0"); }, ErrorCode::kBackend, "no CUDA device available");
  // The device-pointer entry points fail the same way instead of launching into nothing.
  expect_error([] { cuda::sinkhorn_workspace_bytes(2, 8, 8); }, ErrorCode::kBackend, "cuda: ");
}

TEST(CudaBackendFactory, ADeviceThatDoesNotExistIsABackendError) {
  cuda::register_cuda_backend();
  expect_error([] { make_backend("cuda:57"); }, ErrorCode::kBackend, "cuda: ");
  std::string why;
  if (cuda_device_present(&why))
    expect_error([] { make_backend("cuda:57"); }, ErrorCode::kBackend, "cuda: device 57 does not exist");
}

TEST(CudaBackendFactory, RejectsAMalformedDeviceBeforeTouchingCuda) {
  cuda::register_cuda_backend();
  expect_error([] { make_backend("cuda:x"); }, ErrorCode::kInvalidArgument, "bad device");
}

// ---- tests that need a GPU --------------------------------------------------------------------------------------

TEST(CudaSinkhorn, NameNamesTheDevice) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const std::string name = backend->name();
  EXPECT_EQ(name.rfind("cuda:0 (", 0), 0u) << name;
  EXPECT_EQ(name.back(), ')') << name;
}

// One case per way the kernel splits the work (see sinkhorn_kernels.cu: row slices per column, lanes per row).
struct Shape {
  int batch, n_max, p_max;
  bool masked;
  Weights wa, wb;
  double eps;
  int iters;
};

TEST(CudaSinkhorn, MatchesTheCpuOnMaskedBatchesOfEveryShapeClass) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Shape shapes[] = {
      {1, 1, 1, false, Weights::kUniform, Weights::kUniform, 0.5, 10},   // 1 x 1
      {3, 1, 37, true, Weights::kRandom, Weights::kRandom, 0.1, 30},     // n = 1
      {3, 45, 1, true, Weights::kRandom, Weights::kUniform, 0.1, 30},    // p = 1: 32 slices per column
      {5, 12, 9, true, Weights::kRandom, Weights::kRandom, 0.1, 30},     // the core test's batch
      {4, 70, 17, true, Weights::kUniform, Weights::kRandom, 0.05, 50},  // many slices, 4 lanes per row
      {3, 20, 300, true, Weights::kRandom, Weights::kRandom, 0.2, 40},   // 256 < p < 512: one slice
      {2, 30, 512, false, Weights::kRandom, Weights::kRandom, 0.2, 40},  // p = block size
      {2, 9, 1100, true, Weights::kRandom, Weights::kUniform, 0.2, 40},  // p > block: columns per thread
      {6, 130, 64, true, Weights::kRandom, Weights::kRandom, 0.1, 100},  // OTKE-like, masked
      {2, 33, 1, false, Weights::kUniform, Weights::kUniform, 0.3, 5},   // all mass through one column
  };
  for (const Shape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "shape batch " << s.batch << " x " << s.n_max << " x " << s.p_max);
    // Mass 2 where both marginals are given, to catch a hidden assumption of mass 1.
    const double mass = s.wa != Weights::kUniform && s.wb != Weights::kUniform ? 2.0 : 1.0;
    const Batch B = make_batch(s.batch, s.n_max, s.p_max, 100 + s.n_max + s.p_max, s.masked, s.wa, s.wb, 1.0, mass);
    SinkhornOptions o;
    o.eps = s.eps;
    o.max_iter = s.iters;
    expect_matches_cpu(B, o, solve_backend(*backend, B, o), solve_cpu(B, o));
  }
}

TEST(CudaSinkhorn, MatchesTheCpuAtTheBenchmarkShape) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch B = make_batch(8, 1000, 64, 7, true, Weights::kRandom, Weights::kRandom);
  SinkhornOptions o;
  o.eps = 0.1;
  o.max_iter = 100;
  expect_matches_cpu(B, o, solve_backend(*backend, B, o), solve_cpu(B, o));
}

TEST(CudaSinkhorn, SimilaritiesAreNegatedCosts) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch B = make_batch(3, 50, 40, 8, true, Weights::kRandom, Weights::kUniform, 0.5);
  SinkhornOptions o;
  o.similarity = true;
  o.eps = 0.05;
  expect_matches_cpu(B, o, solve_backend(*backend, B, o), solve_cpu(B, o));
}

TEST(CudaSinkhorn, TinyEpsStaysFiniteAndAgreesOnThePotentials) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch B = make_batch(4, 40, 30, 9, true, Weights::kRandom, Weights::kRandom);
  SinkhornOptions o;
  o.eps = 1e-6;
  o.max_iter = 50;
  const Result gpu = solve_backend(*backend, B, o), cpu = solve_cpu(B, o);
  expect_all_finite_nonnegative(gpu);
  // |C|/eps ~ 3e6: one float ulp of F is 0.25, a factor 1.3 on a plan entry. Both sides round the same float
  // sums (identical logits, maxima and operand order) and differ only where exp/log rounding flips an ulp, which
  // is rare; the potentials in cost units stay tight, the plan is held to within a factor 2 entrywise.
  expect_matches_cpu(B, o, gpu, cpu, loose_plan());
}

TEST(CudaSinkhorn, HugeCostsAreClampedLikeTheCpu) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  Batch B = make_batch(3, 20, 16, 10, true, Weights::kRandom, Weights::kRandom);
  // +-1e30 entries (clamped logits on both sides), and one row of problem 0 made only of them.
  for (int bi = 0; bi < B.batch; ++bi)
    for (int i = 0; i < B.n_of(bi); ++i)
      for (int j = 0; j < B.p_of(bi); ++j) {
        float& c = B.cost[(size_t(bi) * B.n_max + i) * B.p_max + j];
        if ((i * 7 + j * 3) % 11 == 0) c = 1e30f;
        if ((i * 5 + j) % 13 == 0) c = -1e30f;
        if (bi == 0 && i == 2) c = 1e30f;
      }
  for (const double eps : {0.5, 1e-6}) {
    SinkhornOptions o;
    o.eps = eps;
    o.max_iter = 20;
    const Result gpu = solve_backend(*backend, B, o), cpu = solve_cpu(B, o);
    expect_all_finite_nonnegative(gpu);
    // Potentials ~ 1e30: the same rounding story as tiny eps. Problem 0's all-clamped row has a potential ~1e30
    // and a plan row decided by float rounding of sums of 1e30-sized terms, which the CPU (xsimd) and the GPU
    // add in different orders: on an H200 (2026-11-26) its marginal error read 0.55 against the CPU's 1.31, both
    // far from converged, and its cost value ~1e29 differed likewise. There, only finiteness, the bounds and the
    // loose plan agreement are meaningful.
    Tolerance tol = loose_plan();
    tol.scalars = false;
    expect_matches_cpu(B, o, gpu, cpu, tol);
  }
}

TEST(CudaSinkhorn, ZeroWeightPointsGetMinusInfinityAndNoMass) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch B = make_batch(4, 25, 19, 11, true, Weights::kWithZeros, Weights::kWithZeros);
  SinkhornOptions o;
  o.eps = 0.1;
  o.max_iter = 60;
  const Result gpu = solve_backend(*backend, B, o), cpu = solve_cpu(B, o);
  expect_all_finite_nonnegative(gpu);
  expect_matches_cpu(B, o, gpu, cpu);
  for (int bi = 0; bi < B.batch; ++bi)
    for (int i = 0; i < B.n_of(bi); ++i)
      if (B.a[size_t(bi) * B.n_max + i] == 0) {
        EXPECT_EQ(gpu.f[size_t(bi) * B.n_max + i], -std::numeric_limits<float>::infinity());
        for (int j = 0; j < B.p_of(bi); ++j) EXPECT_EQ(gpu.plan[(size_t(bi) * B.n_max + i) * B.p_max + j], 0.0f);
      }
}

// The GPU stops at the CPU's iteration only if tol is not within rounding of a column error both compute, so tol
// is put at least 2 % away from the error of every problem at every iteration, and far above the float noise
// floor (~1e-7), where the errors stop decreasing and rounding alone decides.
double separated_tolerance(const Batch& B, const SinkhornOptions& base) {
  std::vector<std::vector<double>> errs(B.batch);
  for (int t = 1; t <= base.max_iter; ++t) {
    SinkhornOptions o = base;
    o.tol = 0;
    o.max_iter = t;
    const Result r = solve_cpu(B, o);  // its marginal_err is the error the stopping test sees at iteration t
    for (int bi = 0; bi < B.batch; ++bi) errs[bi].push_back(r.err[bi]);
  }
  for (double tol = 1e-2; tol > 1e-5; tol *= 0.93) {
    bool clear = true;
    for (const auto& e : errs)
      for (double x : e) clear = clear && std::fabs(x - tol) > 0.02 * tol;
    if (clear) return tol;
  }
  return 0;
}

TEST(CudaSinkhorn, ToleranceModeStopsEveryProblemAtTheCpusIteration) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch B = make_batch(5, 40, 30, 12, true, Weights::kRandom, Weights::kRandom);
  SinkhornOptions o;
  o.eps = 0.3;  // converges in tens of iterations: consecutive errors far apart, easy to stay clear of
  o.max_iter = 200;
  o.tol = separated_tolerance(B, o);
  ASSERT_GT(o.tol, 0) << "no tolerance clear of every column error";
  const Result gpu = solve_backend(*backend, B, o), cpu = solve_cpu(B, o);
  std::vector<int32_t> distinct(cpu.iters);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_GT(distinct.size(), 1u) << "every problem stops at the same iteration: per-problem stopping untested";
  EXPECT_LT(distinct.back(), o.max_iter) << "tol " << o.tol << " is never met";
  expect_matches_cpu(B, o, gpu, cpu);  // n_iter equal per problem, converged equal
}

TEST(CudaSinkhorn, OnlyThePlanMayBeRequested) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch B = make_batch(2, 10, 7, 13, true, Weights::kRandom, Weights::kRandom);
  SinkhornOptions o;
  std::vector<float> plan(B.cost.size(), 5.0f);
  backend->sinkhorn_log(B.problem(), o, SinkhornOutput<float>{plan.data()});
  const Result cpu = solve_cpu(B, o);
  for (size_t k = 0; k < plan.size(); ++k) EXPECT_NEAR(plan[k], cpu.plan[k], 1e-6 + 1e-4 * cpu.plan[k]) << k;
}

TEST(CudaSinkhorn, BadInputGivesTheCpusErrorAndLeavesOutputsAlone) {
  REQUIRE_CUDA_DEVICE();
  const auto backend = cuda_backend();
  const Batch good = make_batch(2, 6, 5, 14, true, Weights::kRandom, Weights::kRandom);
  struct Case {
    const char* what;
    std::function<void(Batch&, SinkhornOptions&)> spoil;
  };
  const Case cases[] = {
      {"eps <= 0", [](Batch&, SinkhornOptions& o) { o.eps = 0; }},
      {"eps NaN", [](Batch&, SinkhornOptions& o) { o.eps = std::nan(""); }},
      {"max_iter 0", [](Batch&, SinkhornOptions& o) { o.max_iter = 0; }},
      {"tol < 0", [](Batch&, SinkhornOptions& o) { o.tol = -1; }},
      {"batch 0", [](Batch& B, SinkhornOptions&) { B.batch = 0; }},
      {"NaN cost", [](Batch& B, SinkhornOptions&) { B.cost[B.p_max + 1] = std::nanf(""); }},
      {"Inf cost", [](Batch& B, SinkhornOptions&) { B.cost[0] = INFINITY; }},
      {"negative weight", [](Batch& B, SinkhornOptions&) { B.a[1] = -0.1f; }},
      {"zero mass", [](Batch& B, SinkhornOptions&) { std::fill(B.b.begin(), B.b.begin() + B.p_max, 0.0f); }},
      {"unequal mass", [](Batch& B, SinkhornOptions&) { B.b[0] += 0.5f; }},
      {"length > max", [](Batch& B, SinkhornOptions&) { B.n[1] = B.n_max + 1; }},
      {"length 0", [](Batch& B, SinkhornOptions&) { B.p[1] = 0; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Batch B = good;
    SinkhornOptions o;
    c.spoil(B, o);
    std::string cpu_message;
    ErrorCode cpu_code = ErrorCode::kInternal;
    try {
      solve_cpu(B, o);
      ADD_FAILURE() << "the CPU accepted it";
    } catch (const Error& e) {
      cpu_code = e.code();
      cpu_message = e.what();
    }
    std::vector<float> plan(good.cost.size(), 3.0f);
    expect_error([&] { backend->sinkhorn_log(B.problem(), o, SinkhornOutput<float>{plan.data()}); }, cpu_code,
                 cpu_message);
    for (float x : plan) ASSERT_EQ(x, 3.0f) << "an error must leave outputs untouched";
  }
  const Batch B = good;
  expect_error([&] { backend->sinkhorn_log(B.problem(), SinkhornOptions{}, SinkhornOutput<float>{}); },
               ErrorCode::kInvalidArgument, "no plan buffer");
}

// ---- device-pointer entry points --------------------------------------------------------------------------------

template <typename T>
cuda::DeviceBuffer to_device(const std::vector<T>& host) {
  if (host.empty()) return {};
  cuda::DeviceBuffer d(host.size() * sizeof(T));
  cuda::check(cudaMemcpy(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

template <typename T>
std::vector<T> to_host(const cuda::DeviceBuffer& d) {
  std::vector<T> host(d.bytes() / sizeof(T));
  cuda::check(cudaMemcpy(host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return host;
}

// Runs the device entry point on data already on the GPU; `in_place` passes the plan buffer as the cost.
Result solve_device(const Batch& B, const SinkhornOptions& o, bool allow_shared, bool in_place) {
  const auto backend = cuda_backend();  // selects the device
  cuda::DeviceBuffer cost = to_device(B.cost), n = to_device(B.n), p = to_device(B.p), a = to_device(B.a),
                     b = to_device(B.b);
  cuda::DeviceBuffer plan = in_place ? to_device(B.cost) : to_device(std::vector<float>(B.cost.size(), 9.0f));
  cuda::DeviceBuffer f = to_device(std::vector<float>(size_t(B.batch) * B.n_max, 9.0f));
  cuda::DeviceBuffer g = to_device(std::vector<float>(size_t(B.batch) * B.p_max, 9.0f));
  cuda::DeviceBuffer iters = to_device(std::vector<int32_t>(B.batch, -7));
  cuda::DeviceBuffer err = to_device(std::vector<float>(B.batch, 9.0f));
  cuda::DeviceBuffer conv = to_device(std::vector<uint8_t>(B.batch, 7));
  cuda::DeviceBuffer value = to_device(std::vector<float>(B.batch, 9.0f));
  SinkhornProblem<float> pr{in_place ? plan.as<float>() : cost.as<float>(),
                            B.batch,
                            B.n_max,
                            B.p_max,
                            n.as<int32_t>(),
                            p.as<int32_t>(),
                            a.as<float>(),
                            b.as<float>()};
  const SinkhornOutput<float> out{plan.as<float>(), f.as<float>(),      g.as<float>(),    iters.as<int32_t>(),
                                  err.as<float>(),  conv.as<uint8_t>(), value.as<float>()};
  cuda::SinkhornLaunch launch;
  launch.allow_shared_vectors = allow_shared;
  const size_t ws_bytes = cuda::sinkhorn_workspace_bytes(B.batch, B.n_max, B.p_max, launch);
  if (!allow_shared) EXPECT_EQ(ws_bytes, size_t(B.batch) * (2 * B.n_max + 3 * B.p_max) * sizeof(float));
  cuda::DeviceBuffer ws(ws_bytes);
  cuda::sinkhorn_log_device(pr, o, out, ws.data(), ws.bytes(), launch);
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return {to_host<float>(plan),  to_host<float>(f),       to_host<float>(g),     to_host<float>(err),
          to_host<float>(value), to_host<int32_t>(iters), to_host<uint8_t>(conv)};
}

TEST(CudaSinkhornDevice, SharedAndWorkspaceVectorsAndInPlaceAllMatchTheCpu) {
  REQUIRE_CUDA_DEVICE();
  const Batch B = make_batch(4, 60, 24, 15, true, Weights::kRandom, Weights::kWithZeros);
  SinkhornOptions o;
  o.eps = 0.1;
  o.max_iter = 40;
  const Result cpu = solve_cpu(B, o);
  for (const bool shared : {true, false})
    for (const bool in_place : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "shared vectors " << shared << ", in place " << in_place);
      expect_matches_cpu(B, o, solve_device(B, o, shared, in_place), cpu);
    }
}

TEST(CudaSinkhornDevice, VectorsTooLargeForSharedMemoryUseTheWorkspace) {
  REQUIRE_CUDA_DEVICE();
  // 2 x 60000 floats of row vectors exceed any GPU's shared memory per block (<= 227 KB).
  const Batch B = make_batch(2, 60000, 2, 16, true, Weights::kRandom, Weights::kRandom);
  cuda_backend();
  EXPECT_GT(cuda::sinkhorn_workspace_bytes(B.batch, B.n_max, B.p_max), 0u);
  SinkhornOptions o;
  o.eps = 0.2;
  o.max_iter = 10;
  // The CPU adds 60000 column terms one after the other in float (relative error up to ~1e-5 here), the GPU in 32
  // slices: the difference is the CPU's summation error, not the kernel's.
  Tolerance tol;
  tol.pot = 1e-4;
  tol.gauge_per_iter = 1e-5;
  tol.plan_rel = 1e-3;
  expect_matches_cpu(B, o, solve_device(B, o, true, false), solve_cpu(B, o), tol);
}

TEST(CudaSinkhornDevice, AnOutOfRangeLengthIsReportedNotReadOutOfBounds) {
  REQUIRE_CUDA_DEVICE();
  Batch B = make_batch(3, 8, 6, 17, true, Weights::kUniform, Weights::kUniform);
  SinkhornOptions o;
  const Result cpu = solve_cpu(B, o);
  B.n[1] = B.n_max + 5;  // unvalidated device input: the kernel must refuse this one problem only
  const Result gpu = solve_device(B, o, true, false);
  EXPECT_EQ(gpu.iters[1], -1);
  EXPECT_TRUE(std::isinf(gpu.err[1]));
  EXPECT_EQ(gpu.conv[1], 0);
  for (size_t k = 0; k < size_t(B.n_max) * B.p_max; ++k) ASSERT_EQ(gpu.plan[size_t(B.n_max) * B.p_max + k], 0.0f);
  for (const int bi : {0, 2}) {
    EXPECT_EQ(gpu.iters[bi], cpu.iters[bi]);
    for (size_t k = 0; k < size_t(B.n_max) * B.p_max; ++k) {
      const size_t at = size_t(bi) * B.n_max * B.p_max + k;
      EXPECT_NEAR(gpu.plan[at], cpu.plan[at], 1e-6 + 1e-4 * cpu.plan[at]);
    }
  }
}

TEST(CudaSinkhornDevice, ATooSmallWorkspaceIsRefused) {
  REQUIRE_CUDA_DEVICE();
  cuda_backend();
  cuda::SinkhornLaunch launch;
  launch.allow_shared_vectors = false;
  cuda::DeviceBuffer plan(4 * 4 * sizeof(float));
  SinkhornProblem<float> pr{plan.as<float>(), 1, 4, 4};
  expect_error([&] { cuda::sinkhorn_log_device(pr, SinkhornOptions{}, {plan.as<float>()}, nullptr, 0, launch); },
               ErrorCode::kInvalidArgument, "workspace too small");
}

}  // namespace
}  // namespace inductive
