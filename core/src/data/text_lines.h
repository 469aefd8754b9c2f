// Strict number parsing (and line splitting, from inductive/text_lines.h) for the text dataset readers. Internal to
// core.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "inductive/text_lines.h"

namespace inductive::detail {

using inductive::LineReader;

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

inline std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// The whole token must be a finite decimal number (strtod alone accepts "1.5abc", "nan", "inf" and hexadecimal
// "0x8", which Python's float() and so scikit-learn refuse). An underflow ("1e-400") reads as the nearest value, 0
// or a subnormal, as in Python; an overflow ("1e400") is refused.
inline bool parse_double(const std::string& token, double& out) {
  if (token.empty() || token.find_first_of("xX") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return false;
  return std::isfinite(out) && !(errno == ERANGE && std::fabs(out) > 1.0);
}

// A non-negative integer that fits in an int.
inline bool parse_index(const std::string& token, long& out) {
  if (token.empty() || token.size() > 10) return false;
  out = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return out <= 2147483646L;
}

}  // namespace inductive::detail
