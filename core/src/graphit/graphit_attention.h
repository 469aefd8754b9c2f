// GraphiT's kernel-modulated attention for one graph, all heads: forward and backward (the equations are in
// graphit_backward.cpp's header comment and inductive/graphit.h).
//
// A graph holds ~10-40 nodes and a head dh = 8-16 columns, so each head's products (S = Q Q^T, A V and their
// gradients) are ~23 x 23 x 8: as Eigen products they went through its GEMM path (packing both operands, zeroing
// the destination) and that, not arithmetic, was three quarters of an inference pass. Here the forward computes a
// head down S's columns, W rows of a column per vector (S_.j = sum_k Q^T_k. q_jk over a transposed, padded copy of Q),
// so that each row's max, sum of exp(s - max) ⊙ K and normalisation are element-wise operations across the columns:
// no horizontal reduction and no per-row latency chain. A V, and the backward's row-by-row dS and its products, are
// rows of dh-wide multiply-adds. Each row is computed by the same operations whatever the buffers' alignment or the
// thread count, so a run's bits depend on neither. Raw pointers and no Eigen: the file is compiled with xsimd's
// default architecture (AVX-512/AVX2 natively, SIMD128 in wasm), as simd/small_gemm.cpp is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inductive::graphit_detail {

constexpr float kRowSumFloor = 1e-6f;  // the reference's clamp(min=1e-6) of the attention row sums

// One graph's rows of a layer: n nodes; Q, V, the heads' outputs and their gradients are n x (heads * dh) with row
// stride ld; probabilities (and dropout multipliers) are heads blocks of n x n, row-major; floored/argmax hold
// heads blocks of n rows.
struct AttentionShape {
  int n, heads, dh, ld;
};

// Floats of scratch one call needs (per thread), for graphs of up to max_n nodes and d = heads * dh.
size_t attention_scratch_floats(int max_n, int d);

// Grows `scratch` to one buffer per thread of attention_scratch_floats(max_n, d) floats; never shrinks, so the
// forward and backward passes of a training loop allocate only while graphs keep getting larger.
void reserve_attention_scratch(std::vector<std::vector<float>>& scratch, int max_n, int d);

// probs = A per head (pre-dropout; null: not written, which `drop` needs), heads = [(A_1 ⊙ M_1) V_1 ... ] (M = `drop`
// when given, else 1), floored and argmax per row. `kernel` (n x n, row-major) or null for the plain transformer;
// `scale` = 1 / sqrt(dh).
void attention_forward(const AttentionShape& s, float scale, const float* q, const float* v, const float* kernel,
                       const float* drop, float* probs, float* heads, uint8_t* floored, int32_t* argmax,
                       float* scratch);

// Given d_heads (the gradient of `heads`), writes dv (=) and adds to dq (+=) this graph's rows.
void attention_backward(const AttentionShape& s, float scale, const float* q, const float* v, const float* probs,
                        const float* drop, const uint8_t* floored, const int32_t* argmax, const float* d_heads,
                        float* dq, float* dv, float* scratch);

}  // namespace inductive::graphit_detail
