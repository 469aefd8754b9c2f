// wasm/camel_case.h - the one mapping from core's reports (snake_case JSON keys: n_screened, solve_seconds) to the
// TS layer's names (nScreened, solveSeconds). Reports are defined once in core; the bindings only rename.
#pragma once

#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

namespace inductive::wasm {

inline std::string camel_case(const std::string& key) {
  std::string out;
  bool upper = false;
  for (char ch : key) {
    if (ch == '_') {
      upper = !out.empty();
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out;
}

// Every object key, at any depth, in camelCase; values (strings included) unchanged.
inline nlohmann::json camel_case_keys(const nlohmann::json& j) {
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& item : j.items()) out[camel_case(item.key())] = camel_case_keys(item.value());
    return out;
  }
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : j) out.push_back(camel_case_keys(v));
    return out;
  }
  return j;
}

}  // namespace inductive::wasm
