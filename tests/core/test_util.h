// tests/core/test_util.h - helpers shared by the core test suites.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "inductive/error.h"
#include "inductive/linalg.h"

namespace inductive::testing {

// A file path in gtest's temp folder that no other test uses: ctest runs tests in parallel (and CI may run two
// builds' suites at once), so a fixed name shared by two tests races (one test reads the file the other is writing).
inline std::string temp_path(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string tag = info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "no-test";
  for (char& c : tag)
    if (c == '/') c = '_';
  // The pid tells processes apart natively; under emscripten every process's pid is 42 (the wasm and the relaxed
  // wasm suites, run side by side by `ctest -j`, raced on one file), so a random token drawn once per process too.
  static const std::string process = std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  return ::testing::TempDir() + "inductive-" + tag + "-" + process + "-" + name;
}

template <typename T>
std::vector<T> random_vector(size_t size, uint32_t seed, double lo = 0.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(size);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Squared Euclidean distances between two random point clouds in `dim` dimensions: a realistic cost matrix.
template <typename T>
std::vector<T> random_cost(int n, int p, uint32_t seed, int dim = 3) {
  const auto x = random_vector<double>(static_cast<size_t>(n) * dim, seed);
  const auto y = random_vector<double>(static_cast<size_t>(p) * dim, seed + 1000);
  std::vector<T> c(static_cast<size_t>(n) * p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) {
      double d = 0;
      for (int k = 0; k < dim; ++k) d += (x[i * dim + k] - y[j * dim + k]) * (x[i * dim + k] - y[j * dim + k]);
      c[static_cast<size_t>(i) * p + j] = static_cast<T>(d);
    }
  return c;
}

// Random positive weights summing to `mass`.
template <typename T>
std::vector<T> random_marginal(int len, uint32_t seed, double mass = 1.0) {
  auto w = random_vector<double>(len, seed, 0.1, 1.0);
  double s = 0;
  for (double x : w) s += x;
  std::vector<T> out(len);
  for (int i = 0; i < len; ++i) out[i] = static_cast<T>(w[i] * mass / s);
  return out;
}

// Runs `body`, expects inductive::Error with `code` whose message contains `fragment`.
// An r x c float matrix of values uniform in [-1, 1).
inline MatF random_mat(int r, int c, uint32_t seed) {
  const auto v = random_vector<float>(static_cast<size_t>(r) * c, seed, -1, 1);
  return CMapF(v.data(), r, c);
}

template <typename F>
void expect_error(F&& body, ErrorCode code, const std::string& fragment) {
  try {
    body();
    ADD_FAILURE() << "expected inductive::Error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

}  // namespace inductive::testing
