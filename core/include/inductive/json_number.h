// inductive/json_number.h - numbers in JSON reports and checkpoints. JSON has no NaN or infinity: a report writes a
// non-finite number (a metric without its data set, a ratio with nothing to divide) as null, defined here once so
// that every report says it the same way, and a reader takes null back as NaN.
#pragma once

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace inductive {

inline nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

inline double number_or_nan(const nlohmann::json& j) {
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

}  // namespace inductive
