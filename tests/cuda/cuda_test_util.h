// tests/cuda/cuda_test_util.h - what every CUDA suite starts with: a test that needs a device skips, with the
// driver's reason, where none is present (this build machine has nvcc but no GPU), and runs everywhere else.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "cuda_util.h"

namespace inductive::testing {

// True when a CUDA device is usable; otherwise *why says what the runtime answered.
inline bool cuda_device_present(std::string* why = nullptr) {
  const char* reason = nullptr;
  if (cuda::device_count(&reason) > 0) return true;
  if (why != nullptr) *why = reason != nullptr ? reason : "unknown";
  return false;
}

}  // namespace inductive::testing

#define REQUIRE_CUDA_DEVICE()                                                                                 \
  do {                                                                                                        \
    std::string why_;                                                                                         \
    if (!::inductive::testing::cuda_device_present(&why_)) GTEST_SKIP() << "no CUDA device (" << why_ << ")"; \
  } while (0)
