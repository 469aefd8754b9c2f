// Strict reading of one section of a model-file config (a JSON object): typed getters with defaults, and unknown
// keys are errors so that a typo never passes silently. Shared by every model kind's config reader; messages read
// "<what>: '<section>.<key>' must be ...". Numbers are range-checked before any conversion: a JSON number too large
// for the C++ type is an error, never a wrapped or undefined value.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/error.h"

namespace inductive {

class JsonSection {
 public:
  using json = nlohmann::json;
  JsonSection(const json& j, std::string what, std::string name)
      : j_(j), what_(std::move(what)), name_(std::move(name)) {
    INDUCTIVE_CHECK(j.is_object(), ErrorCode::kInvalidArgument, what_, ": '", name_, "' must be an object");
  }
  // The section `key` of `j`, or an empty object when absent (every key then takes its default).
  static const json& of(const json& j, const char* key) {
    static const json empty = json::object();
    return j.contains(key) ? j[key] : empty;
  }

  // Call after the last getter: any key no getter asked for is an error.
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      INDUCTIVE_CHECK(seen_.count(it.key()), ErrorCode::kInvalidArgument, what_, ": unknown key '", name_, ".",
                      it.key(), "'");
  }
  bool has(const char* key) const { return j_.contains(key); }
  std::string str(const char* key, const std::string& def) {
    if (!take(key)) return def;
    check(j_[key].is_string(), key, "a string");
    return j_[key].get<std::string>();
  }
  int integer(const char* key, int def) {
    if (!take(key)) return def;
    check(j_[key].is_number_integer(), key, "an integer");
    const auto v = j_[key].get<int64_t>();
    INDUCTIVE_CHECK(v >= -(1ll << 31) && v < (1ll << 31), ErrorCode::kInvalidArgument, what_, ": '", name_, ".", key,
                    "' out of range");
    return static_cast<int>(v);
  }
  int64_t integer64(const char* key, int64_t def) {
    if (!take(key)) return def;
    check(j_[key].is_number_integer() &&
              (!j_[key].is_number_unsigned() ||
               j_[key].get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())),
          key, "an integer below 2^63");
    return j_[key].get<int64_t>();
  }
  double number(const char* key, double def) {
    if (!take(key)) return def;
    check(j_[key].is_number(), key, "a number");
    return j_[key].get<double>();
  }
  // A number that float32 holds (finite, |x| <= FLT_MAX).
  float number32(const char* key, float def) {
    const double v = number(key, def);
    check(std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max(), key, "a float32 number");
    return static_cast<float>(v);
  }
  bool boolean(const char* key, bool def) {
    if (!take(key)) return def;
    check(j_[key].is_boolean(), key, "true or false");
    return j_[key].get<bool>();
  }
  // A nested section: the object at `key`, or nullptr when the key is absent or null.
  const json* object_or_null(const char* key) {
    if (!take(key) || j_[key].is_null()) return nullptr;
    check(j_[key].is_object(), key, "an object or null");
    return &j_[key];
  }
  std::vector<std::string> strings(const char* key) {
    if (!take(key)) return {};
    check(j_[key].is_array(), key, "an array of strings");
    std::vector<std::string> out;
    for (const auto& v : j_[key]) {
      check(v.is_string(), key, "an array of strings");
      out.push_back(v.get<std::string>());
    }
    return out;
  }

 private:
  bool take(const char* key) {
    seen_.insert(key);
    return j_.contains(key);
  }
  void check(bool ok, const char* key, const char* expected) const {
    INDUCTIVE_CHECK(ok, ErrorCode::kInvalidArgument, what_, ": '", name_, ".", key, "' must be ", expected);
  }
  const json& j_;
  std::string what_, name_;
  std::set<std::string> seen_;
};

}  // namespace inductive
