// native/cuda/blas.h - cuBLAS for row-major matrices: the GEMMs of the device trainers.
//
// cuBLAS is column-major; a row-major M x N product C = op(A) op(B) is the column-major product
// C^T = op(B)^T op(A)^T, so gemm() swaps the operands and keeps the transposition flags. FP32 throughout by
// default (CUBLAS_DEFAULT_MATH: no TF32), so that device results stay within float rounding of the CPU's.
#pragma once

#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace inductive::cuda {

struct Operand {
  const float* data;
  int ld;  // row stride (elements)
  bool transposed = false;
  int64_t stride = 0;  // between the matrices of a batch (0: the same matrix for every product)
};

class Blas {
 public:
  explicit Blas(cudaStream_t stream);  // throws Error{kBackend}
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  // For each of `batch` products: C[M x N] = alpha op(A) op(B) + beta C (row-major, C's row stride ldc).
  void gemm(int m, int n, int k, float alpha, const Operand& a, const Operand& b, float beta, float* c, int ldc,
            int64_t c_stride = 0, int batch = 1);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace inductive::cuda
