// Register-blocked float products for tall-skinny shapes: the OTK pooling layer's products (forward and backward)
// and GraphiT's Linear layers (forward, input gradient, weight gradient; src/graphit/graphit_gemm.h).
//
// Under emscripten Eigen must run unvectorised (EIGEN_DONT_VECTORIZE, see cmake/Dependencies.cmake), and its scalar
// GEMM made the two products of an OTK embedding (similarities x z^T and P^T x) 30-80% of the browser's time, and
// GraphiT's Linear layers most of its. Natively, on these shapes (one operand a few dozen to a few hundred columns
// wide), Eigen's packing of the long operand and zeroing of the result cost as much as its kernel saves: these run
// 1.1-1.7x faster on most of the models' shapes and level on the rest (AVX2; bench/README.md, "Products without
// packing"). They use xsimd's default architecture (AVX2 or
// AVX-512 natively, SIMD128 in wasm) with 6 x 2W register blocks (4 x 4 for the dot-product form). Row-major
// operands with explicit row strides; no aliasing between inputs and output. Each output row is computed by the same
// operations whatever the number of rows around it, so splitting the rows across threads does not change a bit.
#pragma once

namespace inductive::simd {

// Floats per vector of the kernels' architecture (8 on AVX2, 16 on AVX-512, 4 in wasm): a product whose output width
// is a multiple of it runs with no scalar columns.
int vector_floats();

// C (m x n) = A (m x k) B^T, B given as n x k: every entry a dot product of two rows.
void gemm_abt(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k);

// C (m x n) = alpha A^T B with A given as r x m and B as r x n: a sum of r outer products. `accumulate`: C += ...
void gemm_atb(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int r, float alpha,
              bool accumulate = false);

// What gemm_ab does to each output value after its sum (and after adding C's old value when accumulating), in this
// order: + bias[j], * row_scale[i], + residual(i, j) (row stride ld_residual), max(0, .). Every step is optional. A
// layer's element-wise passes done while its rows are in registers: each pass over a batch's n x d activations cost
// a read and a write past L2, on one thread (GraphiT's Linear layers).
struct RowEpilogue {
  const float* bias = nullptr;
  const float* row_scale = nullptr;
  const float* residual = nullptr;
  int ld_residual = 0;
  bool relu = false;
};

// The epilogue's steps on one value of row i, column j (the kernels' scalar columns, and products that take Eigen's
// path in graphit_gemm.h).
inline float apply_epilogue(float v, const RowEpilogue& e, long i, int j) {
  if (e.bias) v += e.bias[j];
  if (e.row_scale) v *= e.row_scale[i];
  if (e.residual) v += e.residual[i * e.ld_residual + j];
  if (e.relu) v = v > 0.0f ? v : 0.0f;
  return v;
}

// C (m x n) = A (m x k) B (k x n): each row of C a combination of the k rows of B. `accumulate`: C += A B.
// `epilogue` (optional): applied to each value before it is stored.
void gemm_ab(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int m, int n, int k,
             bool accumulate = false, const RowEpilogue* epilogue = nullptr);

}  // namespace inductive::simd
