// GraphiT training steps on a CUDA device: DeviceGraphitStepper on the CUDA executor (see graphit_stepper_cuda.h).
#include "graphit_stepper_cuda.h"

#include "blas.h"
#include "cuda_util.h"
#include "graphit_device_stepper.h"
#include "graphit_exec_cuda.h"
#include "nccl_allreduce.h"

namespace inductive::cuda {
namespace {

// NCCL over the run's ranks, joined after the device is set up and before the stepper (which keeps a pointer).
struct CudaRanks {
  CudaRanks(const CudaExec& exec, const GraphitTrainOptions& o, bool nccl_alone) {
    if (o.communicator && (o.communicator->size() > 1 || nccl_alone))
      nccl = std::make_unique<NcclAllreduce>(*o.communicator, exec.device, exec.stream);
  }
  std::unique_ptr<NcclAllreduce> nccl;
};

class CudaGraphitStepper final : private CudaExecResources,
                                 private CudaRanks,
                                 public graphit_device::DeviceGraphitStepper<CudaExec> {
 public:
  CudaGraphitStepper(int device, GraphitModel& model, Adam& adam, const GraphitDataset& train,
                     const GraphitTrainOptions& o, bool nccl_alone)
      : CudaExecResources(device),
        CudaRanks(exec, o, nccl_alone),
        DeviceGraphitStepper<CudaExec>(exec, model, adam, train, o, nccl.get()) {}
};

}  // namespace

std::unique_ptr<GraphitStepper> make_cuda_graphit_stepper(int device, GraphitModel& model, Adam& adam,
                                                          const GraphitDataset& train,
                                                          const GraphitTrainOptions& options, bool nccl_alone) {
  return std::make_unique<CudaGraphitStepper>(device, model, adam, train, options, nccl_alone);
}

MatF cuda_graphit_predict(int device, const GraphitModel& model, const std::vector<GraphitGraph>& graphs,
                          int batch_size) {
  CudaExecResources r(device);
  return graphit_device::device_graphit_predict(r.exec, model, graphs, batch_size);
}

std::vector<MatF> cuda_graphit_attention_maps(int device, const GraphitModel& model, const GraphitGraph& graph,
                                              MatF* outputs) {
  CudaExecResources r(device);
  return graphit_device::device_graphit_attention_maps(r.exec, model, graph, outputs);
}

}  // namespace inductive::cuda
