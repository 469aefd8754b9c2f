// CudaExec::launch: one thread per item of a graphit_device_ops.h functor, and its instantiation for each of them
// (the device pass, host C++ in graphit_stepper_cuda.cpp, links against these).
#include "graphit_exec_cuda.h"

namespace inductive::cuda {
namespace {

constexpr int kItemThreads = 128;

template <typename F>
__global__ void each_item(F functor, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) functor(i);
}

}  // namespace

template <typename F>
void CudaExec::launch(int64_t count, const F& functor) {
  const int64_t blocks = (count + kItemThreads - 1) / kItemThreads;
  each_item<F><<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kItemThreads, 0, stream>>>(functor, count);
  check(cudaGetLastError(), "GraphiT kernel launch");
}

#define INDUCTIVE_GRAPHIT_FUNCTOR(F) template void CudaExec::launch<graphit_ops::F>(int64_t, const graphit_ops::F&);
INDUCTIVE_GRAPHIT_FUNCTOR(EmbedInit)
INDUCTIVE_GRAPHIT_FUNCTOR(AttentionForwardRow)
INDUCTIVE_GRAPHIT_FUNCTOR(AttentionBackwardScores)
INDUCTIVE_GRAPHIT_FUNCTOR(AttentionBackwardRows)
INDUCTIVE_GRAPHIT_FUNCTOR(BiasScaleResidual)
INDUCTIVE_GRAPHIT_FUNCTOR(BiasRelu)
INDUCTIVE_GRAPHIT_FUNCTOR(BiasAdd)
INDUCTIVE_GRAPHIT_FUNCTOR(Multiply)
INDUCTIVE_GRAPHIT_FUNCTOR(GradGate)
INDUCTIVE_GRAPHIT_FUNCTOR(Copy)
INDUCTIVE_GRAPHIT_FUNCTOR(ColumnSumAdd)
INDUCTIVE_GRAPHIT_FUNCTOR(EmbeddingGrad)
INDUCTIVE_GRAPHIT_FUNCTOR(LayerNormRow)
INDUCTIVE_GRAPHIT_FUNCTOR(DropoutMask)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormColumnSums)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormCentredSums)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormFinish)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormEvalRstd)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormApply)
INDUCTIVE_GRAPHIT_FUNCTOR(NormAffineGrad)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormGradMeans)
INDUCTIVE_GRAPHIT_FUNCTOR(LayerNormInputGrad)
INDUCTIVE_GRAPHIT_FUNCTOR(BatchNormInputGrad)
INDUCTIVE_GRAPHIT_FUNCTOR(Pool)
INDUCTIVE_GRAPHIT_FUNCTOR(Unpool)
INDUCTIVE_GRAPHIT_FUNCTOR(GraphLoss)
INDUCTIVE_GRAPHIT_FUNCTOR(AdamStep)
#undef INDUCTIVE_GRAPHIT_FUNCTOR

}  // namespace inductive::cuda
