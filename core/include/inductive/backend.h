// inductive/backend.h - where whole operations run: the interface every backend implements (the CPU always, CUDA
// in native builds with a GPU).
//
// Methods are whole operations (a batched Sinkhorn solve, a training run's steps, a model's inference), so the
// virtual call costs nothing next to the work. The CPU backend is the oracle the CUDA tests compare against.
//
// Layering: an interface on core's ground floor (common/), which includes nothing of the folders above it: the
// Sinkhorn and method types it names are only declared here. The trainers of otke/ and graphit/ program against it,
// and the implementations (the CPU backend in core/src/backends, CUDA in native/cuda) live above every method, so no
// include runs from a lower floor up to a method. Making a backend by name is inductive/backend_registry.h's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "inductive/error.h"
#include "inductive/linalg.h"

namespace inductive {

template <typename T>
struct SinkhornProblem;
template <typename T>
struct SinkhornOutput;
struct SinkhornOptions;
class Adam;
class OtkeModel;
class OtkeStepper;
struct OtkeLossOptions;
class GraphitModel;
class GraphitStepper;
struct GraphitDataset;
struct GraphitGraph;
struct GraphitTrainOptions;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda:0 (NVIDIA H100 ...)"
  // Same contract as inductive::sinkhorn_log (float32, host pointers in and out).
  virtual void sinkhorn_log(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                            const SinkhornOutput<float>& out) = 0;
  // A supervised OTKE training run's state on this backend (inductive/otke_stepper.h). The CPU trains `model` and
  // `adam` in place; a device backend copies them in and throws Error{kBackend} for a configuration it cannot run.
  virtual std::unique_ptr<OtkeStepper> otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) = 0;
  // A GraphiT training run's state on this backend (inductive/graphit_stepper.h), over the training set `train`
  // (which must outlive it). The CPU trains `model` and `adam` in place; a backend without GraphiT training throws
  // Error{kBackend} saying so (the default), before any work.
  virtual std::unique_ptr<GraphitStepper> graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                          const GraphitTrainOptions& options) {
    (void)model, (void)adam, (void)train, (void)options;
    INDUCTIVE_FAIL(ErrorCode::kBackend, "graphit train: backend ", name(),
                   " cannot train GraphiT models yet; use --backend cpu (the model file is the same)");
  }
  // GraphitModel::predict on this backend: evaluation-mode outputs (graphs x outputs) in batches of `batch_size`.
  // A backend without GraphiT inference throws Error{kBackend} saying so (the default).
  virtual MatF graphit_predict(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size) {
    (void)model, (void)graphs, (void)batch_size;
    INDUCTIVE_FAIL(ErrorCode::kBackend, "graphit predict: backend ", name(),
                   " cannot run GraphiT models; use --backend cpu");
  }
  // GraphitModel::attention_maps on this backend: one graph's head-averaged attention probabilities per layer
  // (n x n each), evaluation mode, and (`outputs` not null) the same forward pass's outputs (1 x outputs). A backend
  // without GraphiT inference throws Error{kBackend} saying so (the default).
  virtual std::vector<MatF> graphit_attention_maps(const GraphitModel& model, const GraphitGraph& graph,
                                                   MatF* outputs) {
    (void)model, (void)graph, (void)outputs;
    INDUCTIVE_FAIL(ErrorCode::kBackend, "graphit attention: backend ", name(),
                   " cannot explain GraphiT models; use --backend cpu");
  }
  // True for the CPU backend: the reference, which trains the host model in place (data-parallel training runs
  // there for now).
  virtual bool is_cpu() const { return false; }
};

}  // namespace inductive
