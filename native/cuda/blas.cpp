#include "blas.h"

#include <string>

#include "inductive/error.h"

namespace inductive::cuda {
namespace {

void check_blas(cublasStatus_t status, const char* call) {
  INDUCTIVE_CHECK(status == CUBLAS_STATUS_SUCCESS, ErrorCode::kBackend, "cuda: ", call, ": ",
                  cublasGetStatusString(status));
}

}  // namespace

Blas::Blas(cudaStream_t stream) {
  check_blas(cublasCreate(&handle_), "cublasCreate");
  check_blas(cublasSetStream(handle_, stream), "cublasSetStream");
  check_blas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

Blas::~Blas() {
  if (handle_) cublasDestroy(handle_);
}

void Blas::gemm(int m, int n, int k, float alpha, const Operand& a, const Operand& b, float beta, float* c, int ldc,
                int64_t c_stride, int batch) {
  const cublasOperation_t op_a = a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_blas(cublasSgemmStridedBatched(handle_, op_b, op_a, n, m, k, &alpha, b.data, b.ld, b.stride, a.data, a.ld,
                                       a.stride, &beta, c, ldc, c_stride, batch),
             "cublasSgemmStridedBatched");
}

}  // namespace inductive::cuda
