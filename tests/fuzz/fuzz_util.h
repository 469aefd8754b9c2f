// tests/fuzz/fuzz_util.h - what every libFuzzer target shares: a finding is reported on stderr and aborts (libFuzzer
// keeps the input as a reproducer); inputs become the std::string the text readers take.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace inductive::fuzz {

[[noreturn]] inline void finding(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", target, what.c_str());
  std::abort();
}

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace inductive::fuzz
