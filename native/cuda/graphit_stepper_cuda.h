// native/cuda/graphit_stepper_cuda.h - GraphiT training steps on one CUDA device (the "cuda" backend's
// GraphitStepper, inductive/graphit_stepper.h).
//
// The arithmetic is GraphitDevicePass (graphit_device_pass.h) on the CUDA executor: parameters, gradients, Adam's
// moments and BatchNorm's running statistics live on the device for the whole run; a step packs its batch on the
// host (LapPE sign flips and the batch hook as the CPU does), uploads it, and brings back one loss per graph and the
// outputs. Dropout multipliers are drawn on the host from the epoch's generator, in the CPU's order, so a seed gives
// the CPU's masks. pull() copies parameters, statistics and moments back in the CPU's layout: checkpoints and model
// files are the CPU's files. Data parallel (a communicator with several ranks): one GPU per rank, BatchNorm's sums
// and the gradients summed over the ranks by NCCL (nccl_allreduce.h), the gradients by buckets during the backward
// pass.
#pragma once

#include <memory>

#include "inductive/graphit_stepper.h"

namespace inductive::cuda {

// Makes the CUDA stepper on `device` (already validated), or throws Error{kBackend} naming what it cannot run.
// `nccl_alone`: sum over options.communicator through NCCL even when it has one rank (the 1-GPU NCCL smoke test).
std::unique_ptr<GraphitStepper> make_cuda_graphit_stepper(int device, GraphitModel& model, Adam& adam,
                                                          const GraphitDataset& train,
                                                          const GraphitTrainOptions& options, bool nccl_alone = false);

// GraphitModel::predict on `device` (evaluation mode, batches of `batch_size`).
MatF cuda_graphit_predict(int device, const GraphitModel& model, const std::vector<GraphitGraph>& graphs,
                          int batch_size);
std::vector<MatF> cuda_graphit_attention_maps(int device, const GraphitModel& model, const GraphitGraph& graph,
                                              MatF* outputs);

}  // namespace inductive::cuda
