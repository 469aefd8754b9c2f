// Numbers in JSON reports and checkpoints: finite values are kept exactly, NaN and infinities become null (JSON has
// none), and null reads back as NaN.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "inductive/json_number.h"

namespace inductive {
namespace {

TEST(JsonNumber, KeepsFiniteValuesExactly) {
  for (double v : {0.0, -0.0, 1.0 / 3.0, -2.5e-300, std::numeric_limits<double>::max()}) {
    const nlohmann::json j = json_number(v);
    ASSERT_TRUE(j.is_number_float());
    EXPECT_EQ(number_or_nan(nlohmann::json::parse(j.dump())), v);
  }
}

TEST(JsonNumber, WritesNonFiniteValuesAsNull) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {std::numeric_limits<double>::quiet_NaN(), inf, -inf}) {
    EXPECT_TRUE(json_number(v).is_null());
    EXPECT_EQ(json_number(v).dump(), "null");
  }
}

TEST(JsonNumber, ReadsNullAsNaNAndRefusesOtherTypes) {
  EXPECT_TRUE(std::isnan(number_or_nan(nlohmann::json(nullptr))));
  EXPECT_EQ(number_or_nan(nlohmann::json(3)), 3.0);
  EXPECT_THROW(number_or_nan(nlohmann::json("1.5")), nlohmann::json::exception);
}

}  // namespace
}  // namespace inductive
