// native/cuda/graphit_exec_cuda.h - the CUDA executor of GraphitDevicePass (graphit_device_pass.h): device buffers,
// asynchronous copies on one stream, cuBLAS GEMMs, and `launch`, which runs a functor of graphit_device_ops.h once
// per item as a kernel. launch's definition and its instantiations for every functor are in graphit_exec_cuda.cu
// (the only file nvcc compiles for GraphiT); the pass itself is host C++.
#pragma once

#include <cstdint>

#include "blas.h"
#include "cuda_util.h"
#include "graphit_device_ops.h"

namespace inductive::cuda {

struct CudaExec {
  int device = 0;
  cudaStream_t stream = nullptr;
  Blas* blas = nullptr;

  // Grow-only device storage: resize() reallocates (contents not kept) only when asked for more.
  template <typename T>
  class Buffer {
   public:
    void resize(size_t n) {
      if (n > size_) {
        buffer_ = DeviceBuffer(n * sizeof(T));
        size_ = n;
      }
    }
    T* data() const { return buffer_.as<T>(); }

   private:
    DeviceBuffer buffer_;
    size_t size_ = 0;
  };

  // Makes this executor's device current for the calling host thread (the device is per thread).
  void activate() { check(cudaSetDevice(device), "cudaSetDevice"); }

  // functor(i) for every i < count, in one kernel launch on `stream` (graphit_exec_cuda.cu).
  template <typename F>
  void launch(int64_t count, const F& functor);

  void gemm(int m, int n, int k, float alpha, const graphit_ops::MatOperand& a, const graphit_ops::MatOperand& b,
            float beta, float* c, int ldc) {
    blas->gemm(m, n, k, alpha, {a.data, a.ld, a.transposed}, {b.data, b.ld, b.transposed}, beta, c, ldc);
  }
  // From pageable host memory: the call returns once `src` is staged, so the caller may reuse it at once.
  void upload(void* dst, const void* src, size_t bytes) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  }
  void download(void* dst, const void* src, size_t bytes) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  void zero(void* dst, size_t bytes) { check(cudaMemsetAsync(dst, 0, bytes, stream), "cudaMemsetAsync"); }
};

}  // namespace inductive::cuda
