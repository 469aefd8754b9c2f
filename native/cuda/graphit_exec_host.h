// native/cuda/graphit_exec_host.h - the host executor of GraphitDevicePass: buffers in host memory, `launch` a plain
// loop, GEMMs as triple loops. It runs the device pass's code and every device functor on the CPU, so the CPU
// test suite checks them against the CPU model where no GPU is at hand (it is a test harness, not a fast path).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "graphit_device_ops.h"

namespace inductive::graphit_device {

struct HostExec {
  // Grow-only storage; resize() keeps nothing a caller may rely on (as a device buffer reallocated).
  template <typename T>
  class Buffer {
   public:
    void resize(size_t n) {
      if (n > v_.size()) v_.resize(n);
    }
    T* data() { return v_.data(); }
    const T* data() const { return v_.data(); }

   private:
    std::vector<T> v_;
  };

  // The batch's staging area (GraphitDevicePass::stage_batch): plain host memory.
  class Staging {
   public:
    void reserve(size_t bytes) {
      if (bytes > v_.size()) v_.resize(bytes);
    }
    char* data() { return v_.data(); }

   private:
    std::vector<char> v_;
  };

  void activate() {}
  template <typename F>
  void launch(int64_t count, const F& f) {
    for (int64_t i = 0; i < count; ++i) f(i);
  }
  // C (m x n) = alpha op(A) op(B) + beta C, row-major.
  void gemm(int m, int n, int k, float alpha, const graphit_ops::MatOperand& a, const graphit_ops::MatOperand& b,
            float beta, float* c, int ldc) {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float s = 0.0f;
        for (int t = 0; t < k; ++t) {
          const float x =
              a.transposed ? a.data[static_cast<int64_t>(t) * a.ld + i] : a.data[static_cast<int64_t>(i) * a.ld + t];
          const float y =
              b.transposed ? b.data[static_cast<int64_t>(j) * b.ld + t] : b.data[static_cast<int64_t>(t) * b.ld + j];
          s += x * y;
        }
        float& out = c[static_cast<int64_t>(i) * ldc + j];
        out = alpha * s + (beta == 0.0f ? 0.0f : beta * out);
      }
  }
  void upload(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  void zero(void* dst, size_t bytes) { std::memset(dst, 0, bytes); }
  // The batch slots' copies and their ordering (see CudaExec): here every copy is done when it returns.
  void stage_copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  void before_stage(int) {}
  void before_fill(int) {}
  void after_fill(int) {}
  void release(int) {}
  void before_use(int) {}
};

}  // namespace inductive::graphit_device
