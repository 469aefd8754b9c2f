// Register-blocked float products for the OTK pooling layer in the WebAssembly build.
//
// Under emscripten Eigen must run unvectorised (EIGEN_DONT_VECTORIZE, see cmake/Dependencies.cmake), and its scalar
// GEMM made the two products of an OTK embedding (similarities x z^T and P^T x) 30-80% of the browser's time. These
// use xsimd's default architecture (wasm SIMD128 there) with 4 x 4 / 4 x 2W register blocks. Natively Eigen's
// GEMM is faster and stays in use; these are compiled there too so that the tests compare them with Eigen.
// Row-major operands with explicit row strides; no aliasing between inputs and output.
#pragma once

namespace inductive::simd {

// C (m x n) = A (m x k) B^T, B given as n x k: every entry a dot product of two rows.
void gemm_abt(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k);

// C (m x n) = alpha A^T B with A given as r x m and B as r x n: a sum of r outer products.
void gemm_atb(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int r, float alpha);

}  // namespace inductive::simd
