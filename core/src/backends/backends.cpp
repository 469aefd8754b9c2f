// The CPU backend and the registry of backends by name (inductive/backend_registry.h). This file sits on core's
// top floor: it knows every method's CPU code, so nothing below it has to know where its arithmetic runs.
#include "inductive/backend_registry.h"

#include <cstdlib>
#include <map>
#include <mutex>

#include "inductive/communicator.h"
#include "inductive/graphit.h"
#include "inductive/graphit_stepper.h"
#include "inductive/otke_stepper.h"

namespace inductive {

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool is_cpu() const override { return true; }
  void sinkhorn_log(const SinkhornProblem<float>& problem, const SinkhornOptions& options,
                    const SinkhornOutput<float>& out) override {
    inductive::sinkhorn_log(problem, options, out);
  }
  std::unique_ptr<OtkeStepper> otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) override {
    return make_cpu_otke_stepper(model, adam, loss);
  }
  std::unique_ptr<GraphitStepper> graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                  const GraphitTrainOptions& options) override {
    return make_cpu_graphit_stepper(model, adam, train, options);
  }
  MatF graphit_predict(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size) override {
    return model.predict(graphs, batch_size);
  }
  std::vector<MatF> graphit_attention_maps(const GraphitModel& model, const GraphitGraph& graph,
                                           MatF* outputs) override {
    return model.attention_maps(graph, outputs);
  }
};

std::map<std::string, BackendFactory>& factories() {
  static std::map<std::string, BackendFactory> f;
  return f;
}
std::mutex& factories_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

void register_backend_factory(const std::string& kind, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(factories_mutex());
  factories()[kind] = factory;
}

std::unique_ptr<Backend> make_backend(const std::string& spec) {
  if (spec == "cpu") return make_cpu_backend();
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  int device = 0;
  if (colon != std::string::npos) {
    char* end = nullptr;
    const long d = std::strtol(spec.c_str() + colon + 1, &end, 10);
    INDUCTIVE_CHECK(end && *end == '\0' && colon + 1 < spec.size() && d >= 0 && d < 1024, ErrorCode::kInvalidArgument,
                    "backend: bad device in '", spec, "': expected cuda:<index>, e.g. cuda:0");
    device = static_cast<int>(d);
  }
  BackendFactory factory = nullptr;
  {
    std::lock_guard<std::mutex> lock(factories_mutex());
    const auto it = factories().find(kind);
    if (it != factories().end()) factory = it->second;
  }
  // Under an MPI launcher, a bare "cuda" means one GPU per rank: the rank's local rank on its host selects it.
  const bool by_local_rank = colon == std::string::npos && launched_ranks() > 1;
  if (by_local_rank) device = launched_local_rank();
  if (factory && by_local_rank && device > 0) {
    try {
      return factory(device);
    } catch (const Error& e) {
      INDUCTIVE_FAIL(e.code(), e.what(), " (this rank is local rank ", device,
                     " of its host, and a bare --backend "
                     "cuda gives local rank r the device cuda:r: start at most one rank per GPU on each host, or "
                     "name the device, e.g. cuda:0 with CUDA_VISIBLE_DEVICES set per rank)");
    }
  }
  if (factory) return factory(device);
  if (kind == "cuda")
    INDUCTIVE_FAIL(ErrorCode::kBackend, "backend: '", spec,
                   "' requested but this build has no CUDA backend (rebuild natively with nvcc present, "
                   "-DINDUCTIVE_CUDA=ON)");
  INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "backend: unknown backend '", spec, "': expected cpu or cuda[:N]");
}

}  // namespace inductive
