// Register-blocked float products for the WebAssembly build: the OTK pooling layer's two products and GraphiT's
// Linear layers (forward, input gradient, weight gradient; src/graphit/graphit_gemm.h).
//
// Under emscripten Eigen must run unvectorised (EIGEN_DONT_VECTORIZE, see cmake/Dependencies.cmake), and its scalar
// GEMM made the two products of an OTK embedding (similarities x z^T and P^T x) 30-80% of the browser's time, and
// GraphiT's Linear layers most of its. These use xsimd's default architecture (wasm SIMD128 there) with 4 x 4 /
// 4 x 2W register blocks. Natively Eigen's GEMM is faster and stays in use; these are compiled there too so that
// the tests compare them with Eigen. Row-major operands with explicit row strides; no aliasing between inputs and
// output. Each output row is computed by the same operations whatever the number of rows around it, so splitting
// the rows across threads does not change a bit.
#pragma once

namespace inductive::simd {

// C (m x n) = A (m x k) B^T, B given as n x k: every entry a dot product of two rows.
void gemm_abt(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k);

// C (m x n) = alpha A^T B with A given as r x m and B as r x n: a sum of r outer products. `accumulate`: C += ...
void gemm_atb(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int r, float alpha,
              bool accumulate = false);

// C (m x n) = A (m x k) B (k x n): each row of C a combination of the k rows of B. `accumulate`: C += A B.
void gemm_ab(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k,
             bool accumulate = false);

}  // namespace inductive::simd
