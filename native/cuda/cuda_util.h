// native/cuda/cuda_util.h - CUDA runtime calls that fail loudly, and device memory that frees itself.
//
// Every runtime call goes through cuda::check, which turns a failure into
// Error{kBackend, "cuda: <call>: <cudaGetErrorString>"}, so the CLI prints one line and exits 2 and callers never
// see a raw cudaError_t.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace inductive::cuda {

// Throws Error{kBackend}; also clears the thread's last-error slot so a later, unrelated check does not trip on it.
[[noreturn]] void throw_cuda_error(const char* call, cudaError_t status);

inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw_cuda_error(call, status);
}

// Number of CUDA devices, 0 when there is none; `why` (optional) receives the reason. Without a driver
// cudaGetDeviceCount returns cudaErrorInsufficientDriver rather than cudaErrorNoDevice: any error means "none".
int device_count(const char** why = nullptr) noexcept;

// Move-only owner of one cudaMalloc allocation on the device that was current when it was made.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);  // bytes == 0 allocates nothing (data() == nullptr)
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A device copy of `bytes` host bytes enqueued on `stream`; empty when `host` is nullptr (an optional input).
DeviceBuffer upload(const void* host, size_t bytes, cudaStream_t stream);

// Copies a device buffer back to `host` when both exist (an optional output).
void download(void* host, const DeviceBuffer& device, cudaStream_t stream);

// Page-locked host memory, grow-only: what batches are packed into, so that their upload is a true asynchronous DMA
// (a copy from pageable memory is staged through the driver's own buffer by the calling thread first).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  // At least `bytes` bytes; contents are not kept when it grows.
  void reserve(size_t bytes);
  char* data() const { return static_cast<char*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Move-only owner of an event without timing (an ordering point between streams).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Move-only owner of a non-blocking stream.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace inductive::cuda
