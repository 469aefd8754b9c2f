// Embind bindings of the core for the `inductive` npm package (web/src wraps them; see web/src/module.ts).
//
// Only translation lives here: arguments arrive as numbers and pointers into wasm memory that the TS layer
// filled, results are written to buffers it allocated, and errors come back as data. No algorithm code.
//
// Errors: every entry point runs under `guarded`, which catches everything and records {code, message} for
// lastErrorCode()/lastErrorMessage(). We return a status instead of throwing a JS Error from C++ because a JS
// throw unwinds through wasm frames without running C++ destructors (the exception object and any string
// alive at that point leak), whereas returning from the catch block cleans up normally.
#include <emscripten/bind.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "inductive/error.h"
#include "inductive/model_file.h"
#include "inductive/sinkhorn.h"
#include "inductive/version.h"

namespace {

// The last failure, read by the TS layer right after a call reports one. Static storage: no growth per error.
std::string g_error_code;
std::string g_error_message;

// Runs `body`; returns true on success, false after recording why it failed.
template <typename F>
bool guarded(F&& body) {
  try {
    body();
    return true;
  } catch (const inductive::Error& e) {
    g_error_code = inductive::error_code_name(e.code());
    g_error_message = e.what();
  } catch (const std::bad_alloc&) {
    // Not a core ErrorCode: wasm memory is capped (2 GiB), so this is a limit the caller can act on.
    g_error_code = "out_of_memory";
    g_error_message = "inductive: out of wasm memory (the heap cannot grow past 2 GiB); use smaller batches";
  } catch (const std::exception& e) {
    g_error_code = "internal";
    g_error_message = std::string("inductive: unexpected error: ") + e.what();
  } catch (...) {
    g_error_code = "internal";
    g_error_message = "inductive: unexpected non-standard exception";
  }
  return false;
}

template <typename T>
T* ptr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// One batched Sinkhorn call. Addresses are byte offsets in wasm memory; 0 means "absent" (n/p: all full
// length, a/b: uniform, outputs other than plan: not wanted). Layouts are those of inductive/sinkhorn.h.
struct SinkhornCall {
  uintptr_t cost = 0, n = 0, p = 0, a = 0, b = 0;
  int batch = 0, n_max = 0, p_max = 0;
  double eps = 0.5;
  int max_iter = 100;
  double tol = 0;
  bool similarity = false;
  uintptr_t plan = 0, f = 0, g = 0, n_iter = 0, marginal_err = 0, converged = 0, cost_value = 0;
};

bool sinkhorn_batch(const SinkhornCall& c) {
  return guarded([&] {
    inductive::SinkhornProblem<float> problem;
    problem.cost = ptr<const float>(c.cost);
    problem.batch = c.batch;
    problem.n_max = c.n_max;
    problem.p_max = c.p_max;
    problem.n = ptr<const int32_t>(c.n);
    problem.p = ptr<const int32_t>(c.p);
    problem.a = ptr<const float>(c.a);
    problem.b = ptr<const float>(c.b);
    inductive::SinkhornOptions options;
    options.eps = c.eps;
    options.max_iter = c.max_iter;
    options.tol = c.tol;
    options.similarity = c.similarity;
    const inductive::SinkhornOutput<float> out{ptr<float>(c.plan),       ptr<float>(c.f),
                                               ptr<float>(c.g),          ptr<int32_t>(c.n_iter),
                                               ptr<float>(c.marginal_err), ptr<uint8_t>(c.converged),
                                               ptr<float>(c.cost_value)};
    inductive::sinkhorn_log(problem, options, out);
  });
}

// Parses the model file at [address, address + size) and describes it as JSON (camelCase keys, as the TS
// ModelInfo type); "" on failure. Tensor data is not copied out: only names, types and shapes.
std::string model_info(uintptr_t address, size_t size) {
  std::string json;
  guarded([&] {
    const inductive::ModelView view = inductive::read_model(ptr<const uint8_t>(address), size);
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& t : view.tensors)
      tensors.push_back({{"name", t.name},
                         {"dtype", inductive::dtype_name(t.dtype)},
                         {"shape", t.shape},
                         {"byteLength", t.end - t.begin}});
    json = nlohmann::json{{"formatVersion", view.format_version},
                          {"model", view.model},
                          {"config", view.config},
                          {"producer", view.producer},
                          {"tensors", tensors}}
               .dump();
  });
  return json;
}

std::string last_error_code() { return g_error_code; }
std::string last_error_message() { return g_error_message; }
std::string version() { return inductive::version(); }
std::string producer() { return inductive::producer(); }
std::string simd_kernel() { return inductive::sinkhorn_kernel_name(); }

}  // namespace

EMSCRIPTEN_BINDINGS(inductive) {
  using emscripten::function;
  emscripten::value_object<SinkhornCall>("SinkhornCall")
      .field("cost", &SinkhornCall::cost)
      .field("n", &SinkhornCall::n)
      .field("p", &SinkhornCall::p)
      .field("a", &SinkhornCall::a)
      .field("b", &SinkhornCall::b)
      .field("batch", &SinkhornCall::batch)
      .field("nMax", &SinkhornCall::n_max)
      .field("pMax", &SinkhornCall::p_max)
      .field("eps", &SinkhornCall::eps)
      .field("maxIter", &SinkhornCall::max_iter)
      .field("tol", &SinkhornCall::tol)
      .field("similarity", &SinkhornCall::similarity)
      .field("plan", &SinkhornCall::plan)
      .field("f", &SinkhornCall::f)
      .field("g", &SinkhornCall::g)
      .field("nIter", &SinkhornCall::n_iter)
      .field("marginalError", &SinkhornCall::marginal_err)
      .field("converged", &SinkhornCall::converged)
      .field("costValue", &SinkhornCall::cost_value);
  function("sinkhornBatch", &sinkhorn_batch);
  function("modelInfo", &model_info);
  function("lastErrorCode", &last_error_code);
  function("lastErrorMessage", &last_error_message);
  function("version", &version);
  function("producer", &producer);
  function("simdKernel", &simd_kernel);
}
