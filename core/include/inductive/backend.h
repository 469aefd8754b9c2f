// inductive/backend.h - where whole operations run: the CPU (always) or CUDA (native builds with a GPU).
//
// Methods are whole operations (a batched Sinkhorn solve, later kernel attention, screening scores), so the
// virtual call costs nothing next to the work. The CPU backend is the oracle the CUDA tests compare against.
// Asking for a backend this build or machine lacks throws Error{kBackend}; there is no silent CPU fallback.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "inductive/linalg.h"
#include "inductive/sinkhorn.h"

namespace inductive {

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
                                                          const GraphitTrainOptions& options);
  // GraphitModel::predict on this backend: evaluation-mode outputs (graphs x outputs) in batches of `batch_size`.
  // A backend without GraphiT inference throws Error{kBackend} saying so (the default).
  virtual MatF graphit_predict(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size);
};

std::unique_ptr<Backend> make_cpu_backend();

// "cpu" or "cuda" / "cuda:<device>". CUDA is available only when the CLI/native build registered it
// (see register_backend_factory); otherwise Error{kBackend} says why.
std::unique_ptr<Backend> make_backend(const std::string& spec);

// Native builds with CUDA register the "cuda" factory at start-up (core itself has no CUDA code).
using BackendFactory = std::unique_ptr<Backend> (*)(int device);
void register_backend_factory(const std::string& kind, BackendFactory factory);

}  // namespace inductive
