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
  cudaStream_t stream = nullptr;  // the passes
  Blas* blas = nullptr;
  // The batch slots of GraphitDevicePass (stage_batch / use_staged): their copies run on `copy_stream`, from pinned
  // staging areas, while `stream` computes on the other slot. Per slot, `released` marks the compute stream's last
  // use of it (the copies into it wait for that) and `filled` the end of its copies (the compute stream, and the host
  // before it rewrites the staging area, wait for that). Events never recorded are no waits.
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t released[2] = {nullptr, nullptr};
  cudaEvent_t filled[2] = {nullptr, nullptr};
  using Staging = PinnedBuffer;

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

  void stage_copy(void* dst, const void* src, size_t bytes) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, copy_stream), "cudaMemcpyAsync (batch)");
  }
  void before_stage(int slot) { check(cudaEventSynchronize(filled[slot]), "cudaEventSynchronize"); }
  void before_fill(int slot) { check(cudaStreamWaitEvent(copy_stream, released[slot], 0), "cudaStreamWaitEvent"); }
  void after_fill(int slot) { check(cudaEventRecord(filled[slot], copy_stream), "cudaEventRecord"); }
  void release(int slot) { check(cudaEventRecord(released[slot], stream), "cudaEventRecord"); }
  void before_use(int slot) { check(cudaStreamWaitEvent(stream, filled[slot], 0), "cudaStreamWaitEvent"); }
};

// The device (made current), streams, cuBLAS handle and events a CudaExec points to, and the executor itself: made
// before whatever uses the executor (a base-from-member of the steppers), waited for when it goes.
struct CudaExecResources {
  explicit CudaExecResources(int device) : select((check(cudaSetDevice(device), "cudaSetDevice"), device)) {
    exec.device = device;
    exec.stream = stream.get();
    exec.blas = &blas;
    exec.copy_stream = copy_stream.get();
    for (int slot = 0; slot < 2; ++slot) {
      exec.released[slot] = released[slot].get();
      exec.filled[slot] = filled[slot].get();
    }
  }
  ~CudaExecResources() {
    (void)cudaSetDevice(select);
    (void)cudaStreamSynchronize(stream.get());
    (void)cudaStreamSynchronize(copy_stream.get());
  }
  CudaExecResources(const CudaExecResources&) = delete;
  CudaExecResources& operator=(const CudaExecResources&) = delete;
  int select;
  Stream stream, copy_stream;
  Event released[2], filled[2];
  Blas blas{stream.get()};
  CudaExec exec;
};

}  // namespace inductive::cuda
