// CudaExec::launch: one thread per item of a graphit_device_ops.h functor, and its instantiation for each of them
// (the device pass, host C++ in graphit_stepper_cuda.cpp, links against these).
#include "graphit_exec_cuda.h"
#include "launch_items.cuh"

namespace inductive::cuda {

template <typename F>
void CudaExec::launch(int64_t count, const F& functor) {
  launch_items(count, functor, stream, "GraphiT kernel launch");
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
