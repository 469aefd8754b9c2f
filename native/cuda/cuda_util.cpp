#include "cuda_util.h"

#include <string>
#include <utility>

#include "inductive/error.h"

namespace inductive::cuda {

void throw_cuda_error(const char* call, cudaError_t status) {
  (void)cudaGetLastError();  // non-sticky errors stay in the per-thread slot until read
  INDUCTIVE_FAIL(ErrorCode::kBackend, "cuda: ", call, ": ", cudaGetErrorString(status));
}

int device_count(const char** why) noexcept {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = cudaGetErrorString(status);
    return 0;
  }
  if (count == 0 && why) *why = "0 devices";
  return count;
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (bytes == 0) return;
  const cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status != cudaSuccess) {
    ptr_ = nullptr;
    (void)cudaGetLastError();
    INDUCTIVE_FAIL(ErrorCode::kBackend, "cuda: cudaMalloc of ", bytes, " bytes: ", cudaGetErrorString(status));
  }
  bytes_ = bytes;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  // A destructor cannot throw; cudaFree waits for work still using the memory, and a failure here (device lost)
  // has already been reported by the call that hit it.
  if (ptr_) {
    (void)cudaFree(ptr_);
    (void)cudaGetLastError();
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

DeviceBuffer upload(const void* host, size_t bytes, cudaStream_t stream) {
  if (!host) return {};
  DeviceBuffer buffer(bytes);
  check(cudaMemcpyAsync(buffer.data(), host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (to device)");
  return buffer;
}

void download(void* host, const DeviceBuffer& device, cudaStream_t stream) {
  if (!host || !device.data()) return;
  check(cudaMemcpyAsync(host, device.data(), device.bytes(), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (to host)");
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) (void)cudaFreeHost(ptr_);
}

void PinnedBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_) return;
  if (ptr_) (void)cudaFreeHost(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
  check(cudaMallocHost(&ptr_, bytes), "cudaMallocHost");
  bytes_ = bytes;
}

Event::Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreateWithFlags"); }

Event::~Event() {
  if (event_) (void)cudaEventDestroy(event_);
  (void)cudaGetLastError();
}

Stream::Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }

Stream::~Stream() {
  if (stream_) (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

}  // namespace inductive::cuda
