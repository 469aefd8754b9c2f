// native/cuda/otke_kernels.h - the element-wise and small reduction kernels of an OTKE training step on the device
// (the GEMMs go through cuBLAS, Sinkhorn through sinkhorn_kernels.h). Device pointers; work is enqueued on
// `stream`; launch errors throw Error{kBackend}. The per-element maths is inductive/elementwise.h's, shared with
// the CPU code.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "inductive/elementwise.h"
#include "otke_head_ops.h"
#include "otke_nystrom_ops.h"
#include "otke_pool_ops.h"
#include "otke_token_ops.h"

namespace inductive::cuda {

// out[b, i, j] = in[b, i, j] * exp(-(i/n_b - j/p)^2 / sigma^2) for i < n_b, 0 on padding rows ([batch, n_max, p]).
// `out` may equal `in`.
void positional_weighting(const float* in, float* out, const int32_t* n, int batch, int n_max, int p, float sigma,
                          cudaStream_t stream);

// The head's loss (otke_head_ops.h): logits += bias; with labels, dlogits and loss_sum[0] = the summed loss (divide
// by a.loss_divisor() for core's mean). Without labels (evaluation), only the bias is added.
void head_loss(const otke_head::Args& a, double* loss_sum, cudaStream_t stream);

// out[c] = sum_b x[b, c] (x: [rows, cols], row-major).
void column_sums(const float* x, float* out, int rows, int cols, cudaStream_t stream);

// Packs the sets `index` [batch] of a resident dataset (data [count, data_n_max, dim], lengths data_n [count]) into
// out [batch, n_max, dim] with zero padding, and their lengths into out_n [batch]. n_max >= every chosen length.
void gather_sets(const float* data, const int32_t* data_n, int data_n_max, int dim, const int32_t* index, int batch,
                 float* out, int32_t* out_n, int n_max, cudaStream_t stream);

// Nystrom (inductive/nystrom.h) on the device. normalize_rows: norm[i] = ||x_i||, xhat_i = x_i / max(norm, 1e-2)
// (x: [rows, dim]). gaussian_on_sphere: kx = exp((kx - 1) / sigma^2) in place. scale_rows: y_i *= s[i] ([rows,
// cols]). kappa_backward: da = da o kx / sigma^2 in place.
void normalize_rows(const float* x, float* xhat, float* norm, int64_t rows, int dim, cudaStream_t stream);
void gaussian_on_sphere(float* kx, int64_t count, float sigma, cudaStream_t stream);
void scale_rows(float* y, const float* s, int64_t rows, int cols, cudaStream_t stream);
void kappa_backward(float* da, const float* kx, int64_t count, float sigma, cudaStream_t stream);

// The Nystrom embedding's input gradient (otke_nystrom_ops.h): nystrom_norm_gradient writes a.grad_norm (keep_norm,
// from dL/dpsi before its scaling by ||x||); nystrom_input_gradient turns dL/dxhat in a.dx into dL/dx in place.
void nystrom_norm_gradient(const otke_nystrom::Args& a, cudaStream_t stream);
void nystrom_input_gradient(const otke_nystrom::Args& a, cudaStream_t stream);

// The conv embedding's ReLU (graphit_device_ops.h's functors): bias_relu, y = max(y + bias, 0) per row of [rows,
// cols]; relu_gate, g *= [y > 0] (y the ReLU's output, positive exactly where its input was).
void bias_relu(float* y, const float* bias, int64_t rows, int cols, cudaStream_t stream);
void relu_gate(float* g, const float* y, int64_t count, cudaStream_t stream);

// Tokens: the lookup of `rows` elements (otke_token_ops.h), and its adjoint: g_table [vocab, e] set to the sum of
// the rows of dx [rows, e] by their ids (one column per thread, rows in order: deterministic, the CPU's order).
void token_lookup(const otke_tokens::Lookup& lookup, int64_t rows, cudaStream_t stream);
void token_table_gradient(float* g_table, int64_t vocab, const float* dx, const int32_t* ids, int64_t rows, int e,
                          cudaStream_t stream);

// out = a o b over `count` entries (the MLP's dropout mask); out may be a or b.
void multiply(float* out, const float* a, const float* b, int64_t count, cudaStream_t stream);
// x *= a over `count` entries (a rank's share of the batch before the ranks' gradient sum).
void scale_values(float* x, int64_t count, float a, cudaStream_t stream);

// Mean or max pooling over each set's valid elements (otke_pool_ops.h): forward writes a.phi (and a.argmax for max),
// backward writes a.dpsi from a.dphi.
void pool_forward(const otke_pool::Args& a, cudaStream_t stream);
void pool_backward(const otke_pool::Args& a, cudaStream_t stream);

// One Adam / AdamW step over `size` parameters (elementwise::adam_update).
void adam_step(float* value, float* m, float* v, const float* grad, int64_t size,
               const elementwise::AdamCoefficients& c, bool decay, cudaStream_t stream);

}  // namespace inductive::cuda
