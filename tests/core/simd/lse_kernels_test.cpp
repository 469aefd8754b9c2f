// Every SIMD kernel table the CPU supports agrees with the scalar twin, on lengths that exercise the vector body
// and the tail, with -inf entries (zero-weight points) mixed in.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "simd/lse_kernels.h"
#include "../test_util.h"

namespace inductive::simd {
namespace {

using inductive::testing::random_vector;

template <typename T>
class LseKernelsTest : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LseKernelsTest, Types);

TYPED_TEST(LseKernelsTest, EveryTableMatchesTheScalarTwin) {
  using T = TypeParam;
  const LseKernels<T>* tables[8];
  const int count = available_kernels<T>(tables, 8);
  ASSERT_GE(count, 1);
  EXPECT_STREQ(tables[0]->name, "scalar");
  const auto& ref = scalar_kernels<T>();
  const T tol = std::is_same_v<T, float> ? T(2e-6) : T(1e-13);
  for (int t = 0; t < count; ++t) {
    const auto& kern = *tables[t];
    for (int len : {1, 3, 4, 7, 8, 15, 16, 17, 33, 100}) {
      auto k = random_vector<T>(len, len, -20, 5);
      auto g = random_vector<T>(len, len + 1, -3, 3);
      if (len > 2) k[1] = -std::numeric_limits<T>::infinity();
      SCOPED_TRACE(std::string(kern.name) + " len " + std::to_string(len));
      const T lse_ref = ref.row_lse(k.data(), g.data(), len);
      EXPECT_NEAR(kern.row_lse(k.data(), g.data(), len), lse_ref, tol * 10 * (1 + std::fabs(lse_ref)));

      std::vector<T> m1(len, -std::numeric_limits<T>::infinity()), m2 = m1;
      kern.col_max(k.data(), T(0.5), m1.data(), len);
      ref.col_max(k.data(), T(0.5), m2.data(), len);
      for (int j = 0; j < len; ++j) EXPECT_EQ(m1[j], m2[j]);

      std::vector<T> acc1(len, T(1)), acc2(len, T(1));
      kern.col_sumexp(k.data(), T(0.5), m2.data(), acc1.data(), len);
      ref.col_sumexp(k.data(), T(0.5), m2.data(), acc2.data(), len);
      for (int j = 0; j < len; ++j) EXPECT_NEAR(acc1[j], acc2[j], tol * 4 * (1 + std::fabs(acc2[j])));

      std::vector<T> gg1(len, T(0.25)), gk1(len, T(-1)), gg2 = gg1, gk2 = gk1;
      kern.row_softmax_bwd(k.data(), g.data(), T(1.5), T(0.7), gg1.data(), gk1.data(), len);
      ref.row_softmax_bwd(k.data(), g.data(), T(1.5), T(0.7), gg2.data(), gk2.data(), len);
      for (int j = 0; j < len; ++j) {
        EXPECT_NEAR(gg1[j], gg2[j], tol * 4 * (1 + std::fabs(gg2[j])));
        EXPECT_NEAR(gk1[j], gk2[j], tol * 4 * (1 + std::fabs(gk2[j])));
      }

      std::vector<T> shift(len, T(0.3)), gk3(len, T(0)), gk4(len, T(0));
      const T s1 = kern.col_softmax_bwd(k.data(), T(0.2), shift.data(), g.data(), gk3.data(), len);
      const T s2 = ref.col_softmax_bwd(k.data(), T(0.2), shift.data(), g.data(), gk4.data(), len);
      EXPECT_NEAR(s1, s2, tol * 10 * (1 + std::fabs(s2)));
      for (int j = 0; j < len; ++j) EXPECT_NEAR(gk3[j], gk4[j], tol * 4 * (1 + std::fabs(gk4[j])));

      std::vector<T> o1(len), o2(len);
      const T r1 = kern.plan_row(k.data(), g.data(), T(0.3), o1.data(), len);
      const T r2 = ref.plan_row(k.data(), g.data(), T(0.3), o2.data(), len);
      EXPECT_NEAR(r1, r2, tol * 10 * (1 + std::fabs(r2)));
      T row_sum = 0;
      for (int j = 0; j < len; ++j) {
        EXPECT_NEAR(o1[j], o2[j], tol * 4 * (1 + std::fabs(o2[j])));
        row_sum += o1[j];
      }
      EXPECT_NEAR(row_sum, T(0.3), tol * 10) << "a plan row sums to its weight";
      auto in_place = k;
      kern.plan_row(in_place.data(), g.data(), T(0.3), in_place.data(), len);
      for (int j = 0; j < len; ++j) EXPECT_EQ(in_place[j], o1[j]) << "out may alias k";
    }
  }
}

// gemv and gemv_t are dot and axpy row after row, blocked: the same bits as those calls, for row counts around the
// 4-row blocks, widths around the 4-vector strips and the tails, with zero weights skipped (and a row stride wider
// than the rows).
TYPED_TEST(LseKernelsTest, GemvAndGemvTAreDotAndAxpyRowAfterRowBitForBit) {
  using T = TypeParam;
  const LseKernels<T>* tables[8];
  const int count = available_kernels<T>(tables, 8);
  for (int t = 0; t < count; ++t)
    for (int rows : {1, 3, 4, 5, 9, 32})
      for (int cols : {1, 5, 8, 16, 31, 33, 64, 141}) {
        const auto& kern = *tables[t];
        SCOPED_TRACE(std::string(kern.name) + " " + std::to_string(rows) + " x " + std::to_string(cols));
        const long ld = cols + 3;
        const auto m = random_vector<T>(static_cast<size_t>(rows) * ld, rows * 100 + cols, 0, 1);
        const auto x = random_vector<T>(cols, cols + 1, 0, 2);
        auto w = random_vector<T>(rows, rows + 2, 0, 2);
        if (rows > 2) w[1] = T(0);
        std::vector<T> y(rows), z(cols, T(7)), y_ref(rows), z_ref(cols, T(0));
        kern.gemv(m.data(), rows, cols, ld, x.data(), y.data());
        kern.gemv_t(m.data(), rows, cols, ld, w.data(), z.data());
        for (int r = 0; r < rows; ++r) {
          y_ref[r] = kern.dot(m.data() + r * ld, x.data(), cols);
          if (w[r] != T(0)) kern.axpy(m.data() + r * ld, w[r], z_ref.data(), cols);
        }
        EXPECT_EQ(y, y_ref);
        EXPECT_EQ(z, z_ref);
      }
}

// log_plus: log(x) + add + c where x > 0, -inf where x is 0 or negative, with and without `add`, in place too.
TYPED_TEST(LseKernelsTest, LogPlusMatchesTheScalarTwinAndIsMinusInfinityOffThePositives) {
  using T = TypeParam;
  const LseKernels<T>* tables[8];
  const int count = available_kernels<T>(tables, 8);
  const auto& ref = scalar_kernels<T>();
  const T tol = std::is_same_v<T, float> ? T(2e-6) : T(1e-13);
  for (int t = 0; t < count; ++t)
    for (int len : {1, 3, 8, 17, 100}) {
      SCOPED_TRACE(std::string(tables[t]->name) + " len " + std::to_string(len));
      auto x = random_vector<T>(len, len + 7, T(1e-30), T(1e3));
      const auto add = random_vector<T>(len, len + 8, -5, 5);
      if (len > 2) x[1] = T(0), x[2] = T(-1);
      for (const T* a : {add.data(), static_cast<const T*>(nullptr)}) {
        std::vector<T> got(len), want(len);
        tables[t]->log_plus(x.data(), a, T(0.25), got.data(), len);
        ref.log_plus(x.data(), a, T(0.25), want.data(), len);
        for (int j = 0; j < len; ++j) {
          if (!(x[j] > 0)) {
            EXPECT_TRUE(std::isinf(got[j]) && got[j] < 0) << "x " << x[j] << " gave " << got[j];
            continue;
          }
          EXPECT_NEAR(got[j], want[j], tol * 4 * (1 + std::fabs(want[j])));
          EXPECT_NEAR(want[j], std::log(static_cast<double>(x[j])) + (a ? a[j] : 0) + 0.25,
                      tol * (1 + std::fabs(want[j])));
        }
        auto in_place = x;
        tables[t]->log_plus(in_place.data(), a, T(0.25), in_place.data(), len);
        for (int j = 0; j < len; ++j) EXPECT_EQ(in_place[j], got[j]) << "out may alias x";
      }
    }
}

// clamp_range: the values clamped to [-limit, limit] in place, exactly (a min and a max), and the range of the
// clamped values folded into the running lo / hi, over rows of a stride (the padding between them untouched), on
// the vector body and the tail, with +-inf and out-of-range values.
TYPED_TEST(LseKernelsTest, ClampRangeClampsExactlyAndFoldsTheClampedRangeIn) {
  using T = TypeParam;
  const LseKernels<T>* tables[8];
  const int count = available_kernels<T>(tables, 8);
  const T inf = std::numeric_limits<T>::infinity(), limit = T(50), pad = T(1e6);
  for (int t = 0; t < count; ++t)
    for (int cols : {1, 3, 8, 17, 100})
      for (int rows : {1, 3}) {
        SCOPED_TRACE(std::string(tables[t]->name) + " " + std::to_string(rows) + " x " + std::to_string(cols));
        const int ld = cols + 2;
        auto x = random_vector<T>(rows * ld, cols + 9, T(-40), T(40));
        for (int r = 0; r < rows; ++r) x[r * ld + cols] = x[r * ld + cols + 1] = pad;
        if (cols > 2) x[0] = inf, x[1] = -inf, x[(rows - 1) * ld + 2] = T(-75);
        if (cols > 16) x[16] = T(60);          // past the first 16-lane body
        for (const T seed : {T(0), T(-45)}) {  // lo / hi start inside the values' range, or below it
          auto got = x;
          T lo = seed, hi = seed;
          tables[t]->clamp_range(got.data(), rows, cols, ld, limit, &lo, &hi);
          T want_lo = seed, want_hi = seed;
          for (int r = 0; r < rows; ++r) {
            for (int j = 0; j < cols; ++j) {
              const T v = x[r * ld + j], want = v < -limit ? -limit : (v > limit ? limit : v);
              EXPECT_EQ(got[r * ld + j], want) << "at (" << r << ", " << j << ")";
              want_lo = std::min(want_lo, want);
              want_hi = std::max(want_hi, want);
            }
            EXPECT_EQ(got[r * ld + cols], pad) << "the padding of row " << r << " is not written";
          }
          EXPECT_EQ(lo, want_lo);
          EXPECT_EQ(hi, want_hi);
        }
      }
}

TYPED_TEST(LseKernelsTest, AllMinusInfinityRowIsMinusInfinityNotNaN) {
  using T = TypeParam;
  const LseKernels<T>* tables[8];
  const int count = available_kernels<T>(tables, 8);
  std::vector<T> k(9, -std::numeric_limits<T>::infinity()), g(9, T(0));
  for (int t = 0; t < count; ++t) {
    const T v = tables[t]->row_lse(k.data(), g.data(), 9);
    EXPECT_TRUE(std::isinf(v) && v < 0) << tables[t]->name << " gave " << v;
  }
}

}  // namespace
}  // namespace inductive::simd
