// Hooks the CUDA backend into core's make_backend (core itself has no CUDA code).
#include "cuda_backend.h"

namespace inductive::cuda {

std::unique_ptr<Backend> make_cuda_backend(int device) { return std::make_unique<CudaBackend>(device); }

void register_cuda_backend() { register_backend_factory("cuda", &make_cuda_backend); }

}  // namespace inductive::cuda
