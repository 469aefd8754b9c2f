// Element-wise and small reduction kernels of the OTKE training step (contracts in otke_kernels.h).
#include "otke_kernels.h"

#include <cmath>

#include "cuda_util.h"
#include "graphit_device_ops.h"
#include "launch_items.cuh"

namespace inductive::cuda {
namespace {

constexpr int kBlock = 256;

int blocks_for(int64_t count) { return static_cast<int>(std::min<int64_t>((count + kBlock - 1) / kBlock, 65535 * 8)); }

__global__ void positional_kernel(const float* in, float* out, const int32_t* n, int batch, int n_max, int p,
                                  double inv_sigma2) {
  const int64_t total = static_cast<int64_t>(batch) * n_max * p;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int j = static_cast<int>(e % p);
    const int64_t row = e / p;
    const int i = static_cast<int>(row % n_max), b = static_cast<int>(row / n_max);
    out[e] = i < n[b] ? in[e] * elementwise::positional_weight(i, n[b], j, p, inv_sigma2) : 0.f;
  }
}

// One block: each thread takes rows; the loss sum is reduced in a fixed order (deterministic).
__global__ void head_loss_kernel(otke_head::RowLoss f, double* loss_sum) {
  __shared__ double red[kBlock];
  double loss = 0;
  for (int b = threadIdx.x; b < f.a.batch; b += blockDim.x) loss += f(b);
  if (!f.a.labels) return;
  red[threadIdx.x] = loss;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (int t = 0; t < blockDim.x; ++t) total += red[t];
    loss_sum[0] = total;
  }
}

__global__ void column_sums_kernel(const float* x, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0;
  for (int r = 0; r < rows; ++r) s += x[static_cast<int64_t>(r) * cols + c];
  out[c] = s;
}

__global__ void adam_kernel(float* value, float* m, float* v, const float* grad, int64_t size,
                            elementwise::AdamCoefficients c, bool decay) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < size;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    elementwise::adam_update(value[e], m[e], v[e], grad[e], c, decay);
}

__global__ void gather_kernel(const float* data, const int32_t* data_n, int data_n_max, int dim, const int32_t* index,
                              int batch, float* out, int32_t* out_n, int n_max) {
  const int64_t per_set = static_cast<int64_t>(n_max) * dim;
  const int64_t total = per_set * batch;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int b = static_cast<int>(e / per_set);
    const int64_t within = e % per_set;
    const int i = static_cast<int>(within / dim);
    const int src = index[b];
    out[e] = i < data_n[src] ? data[static_cast<int64_t>(src) * data_n_max * dim + within] : 0.f;
    if (within == 0) out_n[b] = data_n[src];
  }
}

constexpr float kNormFloor = elementwise::kNystromNormFloor;

// One warp per row: the squared norm summed over the row's lanes, then the row scaled.
__global__ void normalize_rows_kernel(const float* x, float* xhat, float* norm, int64_t rows, int dim) {
  const int64_t warp = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= rows) return;
  const float* r = x + warp * dim;
  float s = 0;
  for (int c = lane; c < dim; c += 32) s += r[c] * r[c];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  const float nrm = sqrtf(s);
  const float inv = 1.0f / fmaxf(nrm, kNormFloor);
  for (int c = lane; c < dim; c += 32) xhat[warp * dim + c] = r[c] * inv;
  if (lane == 0) norm[warp] = nrm;
}

__global__ void gaussian_kernel(float* kx, int64_t count, float inv) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    kx[e] = expf((kx[e] - 1.0f) * inv);
}

__global__ void scale_rows_kernel(float* y, const float* s, int64_t rows, int cols) {
  const int64_t count = rows * cols;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[e] *= s[e / cols];
}

__global__ void kappa_backward_kernel(float* da, const float* kx, int64_t count, float inv) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    da[e] *= kx[e] * inv;
}

}  // namespace

void normalize_rows(const float* x, float* xhat, float* norm, int64_t rows, int dim, cudaStream_t stream) {
  const int64_t threads = rows * 32;
  normalize_rows_kernel<<<static_cast<int>((threads + kBlock - 1) / kBlock), kBlock, 0, stream>>>(x, xhat, norm, rows,
                                                                                                  dim);
  check(cudaGetLastError(), "normalize rows kernel launch");
}

void gaussian_on_sphere(float* kx, int64_t count, float sigma, cudaStream_t stream) {
  gaussian_kernel<<<blocks_for(count), kBlock, 0, stream>>>(kx, count, 1.0f / (sigma * sigma));
  check(cudaGetLastError(), "gaussian kernel launch");
}

void scale_rows(float* y, const float* s, int64_t rows, int cols, cudaStream_t stream) {
  scale_rows_kernel<<<blocks_for(rows * cols), kBlock, 0, stream>>>(y, s, rows, cols);
  check(cudaGetLastError(), "scale rows kernel launch");
}

void kappa_backward(float* da, const float* kx, int64_t count, float sigma, cudaStream_t stream) {
  kappa_backward_kernel<<<blocks_for(count), kBlock, 0, stream>>>(da, kx, count, 1.0f / (sigma * sigma));
  check(cudaGetLastError(), "kappa backward kernel launch");
}

void gather_sets(const float* data, const int32_t* data_n, int data_n_max, int dim, const int32_t* index, int batch,
                 float* out, int32_t* out_n, int n_max, cudaStream_t stream) {
  gather_kernel<<<blocks_for(static_cast<int64_t>(batch) * n_max * dim), kBlock, 0, stream>>>(
      data, data_n, data_n_max, dim, index, batch, out, out_n, n_max);
  check(cudaGetLastError(), "gather kernel launch");
}

void positional_weighting(const float* in, float* out, const int32_t* n, int batch, int n_max, int p, float sigma,
                          cudaStream_t stream) {
  const double inv = 1.0 / (static_cast<double>(sigma) * sigma);
  positional_kernel<<<blocks_for(static_cast<int64_t>(batch) * n_max * p), kBlock, 0, stream>>>(in, out, n, batch,
                                                                                                n_max, p, inv);
  check(cudaGetLastError(), "positional weighting kernel launch");
}

void head_loss(const otke_head::Args& a, double* loss_sum, cudaStream_t stream) {
  head_loss_kernel<<<1, kBlock, 0, stream>>>(otke_head::RowLoss{a}, loss_sum);
  check(cudaGetLastError(), "head loss kernel launch");
}

void column_sums(const float* x, float* out, int rows, int cols, cudaStream_t stream) {
  column_sums_kernel<<<(cols + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, out, rows, cols);
  check(cudaGetLastError(), "column sums kernel launch");
}

void adam_step(float* value, float* m, float* v, const float* grad, int64_t size,
               const elementwise::AdamCoefficients& c, bool decay, cudaStream_t stream) {
  if (size == 0) return;
  adam_kernel<<<blocks_for(size), kBlock, 0, stream>>>(value, m, v, grad, size, c, decay);
  check(cudaGetLastError(), "adam kernel launch");
}

void bias_relu(float* y, const float* bias, int64_t rows, int cols, cudaStream_t stream) {
  launch_items(rows * cols, graphit_ops::BiasRelu{y, bias, cols}, stream, "conv ReLU kernel launch");
}

void relu_gate(float* g, const float* y, int64_t count, cudaStream_t stream) {
  launch_items(count, graphit_ops::GradGate{g, nullptr, nullptr, y, 1}, stream, "conv ReLU backward kernel launch");
}

void multiply(float* out, const float* a, const float* b, int64_t count, cudaStream_t stream) {
  launch_items(count, graphit_ops::Multiply{out, a, b}, stream, "multiply kernel launch");
}

namespace {
struct Scale {
  float* x;
  float a;
  INDUCTIVE_HD void operator()(int64_t t) const { x[t] *= a; }
};
}  // namespace

void scale_values(float* x, int64_t count, float a, cudaStream_t stream) {
  launch_items(count, Scale{x, a}, stream, "scale kernel launch");
}

void token_lookup(const otke_tokens::Lookup& lookup, int64_t rows, cudaStream_t stream) {
  launch_items(rows * lookup.e, lookup, stream, "token lookup kernel launch");
}

void token_table_gradient(float* g_table, int64_t vocab, const float* dx, const int32_t* ids, int64_t rows, int e,
                          cudaStream_t stream) {
  check(cudaMemsetAsync(g_table, 0, static_cast<size_t>(vocab) * e * sizeof(float), stream), "cudaMemsetAsync");
  launch_items(e, graphit_ops::EmbeddingGrad{g_table, dx, ids, rows, e}, stream, "token gradient kernel launch");
}

// A functor header's pass (`pass(exec, args)`) as kernels on `stream`.
template <typename Args>
void on_stream(void (*pass)(StreamExec&, const Args&), const Args& a, cudaStream_t stream, const char* what) {
  StreamExec exec{stream, what};
  pass(exec, a);
}

void nystrom_norm_gradient(const otke_nystrom::Args& a, cudaStream_t stream) {
  on_stream(otke_nystrom::norm_gradient<StreamExec>, a, stream, "nystrom norm gradient kernel launch");
}
void nystrom_input_gradient(const otke_nystrom::Args& a, cudaStream_t stream) {
  on_stream(otke_nystrom::input_gradient<StreamExec>, a, stream, "nystrom input gradient kernel launch");
}
void pool_forward(const otke_pool::Args& a, cudaStream_t stream) {
  on_stream(otke_pool::forward<StreamExec>, a, stream, "pooling kernel launch");
}
void pool_backward(const otke_pool::Args& a, cudaStream_t stream) {
  on_stream(otke_pool::backward<StreamExec>, a, stream, "pooling backward kernel launch");
}

}  // namespace inductive::cuda
