// Embind bindings of the core for the `inductive` npm package (web/src wraps them; see web/src/module.ts).
//
// Only translation lives here: arguments arrive as numbers and pointers into wasm memory that the TS layer
// filled, results are written to buffers it allocated, and errors come back as data.
//
// Errors: every entry point runs under `guarded` (guarded.h) and reports failure as data. Screening lives in
// bindings_screening.cpp.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/error.h"
#include "inductive/head_fit.h"
#include "inductive/logistic.h"
#include "inductive/model_file.h"
#include "inductive/model_kinds.h"
#include "inductive/otke.h"
#include "inductive/otke_inputs.h"
#include "inductive/sinkhorn.h"
#include "inductive/parallel.h"
#include "inductive/version.h"
#include "camel_case.h"
#include "guarded.h"
#include "model_handle.h"

namespace {

using inductive::wasm::guarded;
using inductive::wasm::ptr;

// One batched Sinkhorn call. Addresses are byte offsets in wasm memory; 0 means "absent" (n/p: all full
// length, a/b: uniform, outputs other than plan: not wanted). Layouts are those of inductive/sinkhorn.h.
struct SinkhornCall {
  uintptr_t cost = 0, n = 0, p = 0, a = 0, b = 0;
  int batch = 0, n_max = 0, p_max = 0;
  double eps = inductive::SinkhornOptions{}.eps;
  int max_iter = inductive::SinkhornOptions{}.max_iter;
  double tol = inductive::SinkhornOptions{}.tol;
  bool similarity = inductive::SinkhornOptions{}.similarity;
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
    const inductive::SinkhornOutput<float> out{
        ptr<float>(c.plan),         ptr<float>(c.f),           ptr<float>(c.g),         ptr<int32_t>(c.n_iter),
        ptr<float>(c.marginal_err), ptr<uint8_t>(c.converged), ptr<float>(c.cost_value)};
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

// ---- OTKE ----------------------------------------------------------------------------------------------------------
//
// An OtkeHandle owns one inductive::OtkeModel (JS: `new module.OtkeHandle()`, then `load`, and `delete()` when
// done). Calls take and fill buffers the TS layer allocated, like sinkhornBatch.

// One embedding call. The input is either sequences (`sequences` true; `bytes`: their letters back to back,
// `offsets`: batch + 1 byte offsets into `bytes`) or padded vector sets (`x`: [batch, n_max, dim], `lengths`:
// [batch]). `name_bytes`/`name_offsets` (optional, packed like sequences) name the sequences in error messages,
// whose checks (letters, length >= k) are the core's. Outputs, each optional (address 0: not wanted):
// embeddings [batch, D]; plans [q, batch, plan_stride, p] (plan_stride >= the longest set; rows past a set's
// length are 0); with `predict`, logits and probabilities [batch, C] of the head (an error when it has none).
struct OtkeEmbedCall {
  int batch = 0;
  bool sequences = false;
  uintptr_t bytes = 0, offsets = 0, name_bytes = 0, name_offsets = 0;
  uintptr_t x = 0, lengths = 0;
  int n_max = 0, dim = 0;
  uintptr_t embeddings = 0, plans = 0;
  int plan_stride = 0;
  bool predict = false;
  uintptr_t logits = 0, probabilities = 0;
};

// The head applied to given embeddings x [batch, dim]; outputs as in OtkeEmbedCall.
struct OtkePredictCall {
  uintptr_t x = 0;
  int batch = 0, dim = 0;
  uintptr_t logits = 0, probabilities = 0;
};

// A new linear head on embeddings x [batch, dim] with labels [batch] in [0, classes). lambda > 0 fixes the L2
// penalty; 0 chooses it (see fit_head).
struct OtkeFitHeadCall {
  uintptr_t x = 0, labels = 0;
  int batch = 0, dim = 0, classes = 0;
  std::string label_names = "[]";  // JSON array of `classes` names, or empty
  // The fields' defaults are core's (inductive/head_fit.h).
  double lambda = inductive::HeadFitOptions{}.lambda;
  int min_per_class = inductive::HeadFitOptions{}.min_per_class;
  int max_folds = inductive::HeadFitOptions{}.max_folds;
  int max_iter = inductive::HeadFitOptions{}.logistic.max_iter;
  double tol = inductive::HeadFitOptions{}.logistic.tol;
  std::string holdout = "[]";  // JSON array of sample indices that choose lambda (the thesis' protocol), or []
  double holdout_fraction = inductive::HeadFitOptions{}.holdout_fraction;  // > 0, no holdout: core's head_holdout
  double seed = 0;                                                         // of that holdout
  bool refit = inductive::HeadFitOptions{}.refit;  // holdout: refit on every sample at the chosen lambda
  std::string lambda_grid = "[]";  // JSON array of lambdas to choose from, or [] (core's default_head_lambda_grid)
};

// The unsupervised fit's settings beyond the model config (inductive::OtkeFitOptions).
struct OtkeFitCall {
  std::string config = "{}";
  double seed = static_cast<double>(inductive::OtkeFitOptions{}.seed);
  int kmeans_iters = inductive::OtkeFitOptions{}.kmeans_iters;
  double max_samples = static_cast<double>(inductive::OtkeFitOptions{}.max_samples);
  std::string reference_update = inductive::name_of(inductive::OtkeFitOptions{}.reference_update);
  int barycenter_iters = inductive::BarycenterOptions{}.iters;
  double barycenter_eps = inductive::BarycenterOptions{}.eps;
};

// Strings packed back to back (`offsets`: count + 1 byte offsets; `bytes` is 0 when every string is empty).
std::vector<std::string> unpack_strings(uintptr_t bytes, uintptr_t offsets, int count) {
  std::vector<std::string> out;
  if (offsets == 0) return out;
  const int32_t* o = ptr<const int32_t>(offsets);
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    out.emplace_back();
    if (o[i + 1] > o[i]) out.back().assign(ptr<const char>(bytes) + o[i], ptr<const char>(bytes) + o[i + 1]);
  }
  return out;
}

void write_rows(const inductive::MatF& m, uintptr_t address) {
  if (address != 0) std::memcpy(ptr<float>(address), m.data(), sizeof(float) * static_cast<size_t>(m.size()));
}

class OtkeHandle : private inductive::wasm::ModelHandle<inductive::OtkeModel> {
 public:
  bool load(uintptr_t address, size_t size) { return load_file(address, size); }

  // {"config": <the file's config>, "featureDim", "embedDim", "outputDim", "formatVersion", "producer"};
  // featureDim is the width of the sets embed() takes (1, token indices, for a text model).
  std::string describe() const {
    if (!loaded_) return "";
    const inductive::OtkeConfig& c = model_.config;
    return nlohmann::json{
        {"config", c.to_json()},       {"featureDim", c.input_width()},    {"embedDim", c.embed_dim()},
        {"outputDim", c.output_dim()}, {"formatVersion", format_version_}, {"producer", producer_}}
        .dump();
  }

  bool embed(const OtkeEmbedCall& c) {
    return guarded([&] {
      check_loaded("embed");
      inductive::SetBatch features;
      if (c.sequences) {
        features = model_.sequence_features(unpack_strings(c.bytes, c.offsets, c.batch),
                                            unpack_strings(c.name_bytes, c.name_offsets, c.batch));
      } else {
        // A sequence model takes sets too: those of its local features (one-hot k-mers, dim k |alphabet|).
        features = inductive::SetBatch(c.batch, c.n_max, c.dim);
        if (!features.x.empty()) std::copy_n(ptr<const float>(c.x), features.x.size(), features.x.data());
        if (!features.n.empty()) std::copy_n(ptr<const int32_t>(c.lengths), features.n.size(), features.n.data());
      }
      INDUCTIVE_CHECK(c.plans == 0 || model_.config.pooling == inductive::OtkePooling::kOtk,
                      inductive::ErrorCode::kInvalidArgument, "transportPlans: this model pools with '",
                      model_.config.pooling, "'; transport plans exist for otk pooling only");
      std::vector<std::vector<float>> plans;
      const inductive::MatF e = model_.embed(features, c.plans != 0 ? &plans : nullptr);
      write_rows(e, c.embeddings);
      if (c.plans != 0) write_plans(plans, features, c.plans, c.plan_stride);
      if (c.predict) write_predictions(e, c.logits, c.probabilities);
    });
  }

  bool predict(const OtkePredictCall& c) {
    return guarded([&] {
      check_loaded("predict");
      write_predictions(inductive::CMapF(ptr<const float>(c.x), c.batch, c.dim), c.logits, c.probabilities);
    });
  }

  // Fits a new head on (x, labels) into `out`, a copy of this model (core fit_head: inductive/head_fit.h);
  // returns a JSON report ("" on failure).
  std::string fit_head(const OtkeFitHeadCall& c, OtkeHandle& out, emscripten::val progress) {
    std::string report;
    guarded([&] {
      check_loaded("fitHead");
      const int C = c.classes, m = c.batch;
      INDUCTIVE_CHECK(m >= 1, inductive::ErrorCode::kInvalidArgument, "fitHead: no labelled sample given");
      INDUCTIVE_CHECK(c.dim == model_.config.output_dim(), inductive::ErrorCode::kShapeMismatch,
                      "fitHead: embeddings have dimension ", c.dim, ", expected ", model_.config.output_dim(),
                      " (this model's output dimension)");
      const nlohmann::json names = nlohmann::json::parse(c.label_names);
      INDUCTIVE_CHECK(names.empty() || static_cast<int>(names.size()) == C, inductive::ErrorCode::kShapeMismatch,
                      "fitHead: ", names.size(), " label names for ", C, " classes");
      INDUCTIVE_CHECK(c.max_iter >= 1 && std::isfinite(c.tol) && c.tol >= 0, inductive::ErrorCode::kInvalidArgument,
                      "fitHead: maxIter must be >= 1 and tol >= 0: got ", c.max_iter, " and ", c.tol);
      const inductive::CMapF x(ptr<const float>(c.x), m, c.dim);
      const std::vector<int32_t> y(ptr<const int32_t>(c.labels), ptr<const int32_t>(c.labels) + m);
      inductive::HeadFitOptions options;
      options.lambda = c.lambda;
      options.min_per_class = c.min_per_class;
      options.max_folds = c.max_folds;
      for (const auto& n : names) options.class_names.push_back(n.get<std::string>());
      options.logistic.max_iter = c.max_iter;
      options.logistic.tol = c.tol;
      options.holdout = nlohmann::json::parse(c.holdout).get<std::vector<int32_t>>();
      options.holdout_fraction = c.holdout_fraction;
      INDUCTIVE_CHECK(
          std::isfinite(c.seed) && c.seed >= 0 && c.seed <= 9007199254740991.0 && std::floor(c.seed) == c.seed,
          inductive::ErrorCode::kInvalidArgument, "fitHead: seed must be an integer in [0, 2^53): got ", c.seed);
      options.seed = static_cast<uint64_t>(c.seed);
      options.refit = c.refit;
      options.grid = nlohmann::json::parse(c.lambda_grid).get<std::vector<double>>();
      const auto report_progress = inductive::wasm::js_progress(progress, "fitHead");
      options.progress = report_progress;
      const inductive::HeadFit fit = inductive::fit_head(x, y, C, options);
      out.adopt(model_.with_linear_head(fit.head, options.class_names));
      report = inductive::wasm::camel_case_keys(inductive::head_fit_report(fit)).dump();
    });
    return report;
  }

  // Unsupervised learning (core fit_otke_unsupervised: Nyström anchors by k-means++ / spherical k-means, references
  // by k-means or 2-Wasserstein k-means) of a new model, into this (empty) handle. `config` is the model-file config
  // as JSON; keys it leaves out take the core's defaults. The input is sequences or padded sets, as for embed.
  bool fit_unsupervised(const OtkeEmbedCall& c, const OtkeFitCall& f, emscripten::val progress) {
    return guarded([&] {
      inductive::OtkeModel model;
      model.config = inductive::OtkeConfig::from_json(nlohmann::json::parse(f.config));
      INDUCTIVE_CHECK(model.config.classes == 0, inductive::ErrorCode::kInvalidArgument,
                      "fitOtke: the unsupervised fit makes a model without a head; fit one with fitHead");
      INDUCTIVE_CHECK(c.batch >= 1, inductive::ErrorCode::kInvalidArgument, "fitOtke: no training sample given");
      inductive::OtkeFitOptions options;
      options.seed = static_cast<uint64_t>(f.seed);
      options.kmeans_iters = f.kmeans_iters;
      options.max_samples = static_cast<int64_t>(f.max_samples);
      options.reference_update =
          inductive::parse_enum(inductive::kOtkeReferenceUpdates, f.reference_update, "fitOtke: referenceUpdate");
      options.barycenter.iters = f.barycenter_iters;
      options.barycenter.eps = f.barycenter_eps;
      options.barycenter.validate();
      options.progress = inductive::wasm::js_progress(progress, "fitOtke");
      if (c.sequences) {
        INDUCTIVE_CHECK(model.config.input_type == inductive::OtkeInput::kSequence,
                        inductive::ErrorCode::kInvalidArgument, "fitOtke: sequences need input type 'sequence'");
        // Only the sampled k-mers are built: a million sequences fit in the tab (core: inductive/otke.h).
        inductive::fit_otke_unsupervised(model, unpack_strings(c.bytes, c.offsets, c.batch),
                                         unpack_strings(c.name_bytes, c.name_offsets, c.batch), options);
      } else {
        inductive::SetBatch features(c.batch, c.n_max, c.dim);
        if (!features.x.empty()) std::copy_n(ptr<const float>(c.x), features.x.size(), features.x.data());
        if (!features.n.empty()) std::copy_n(ptr<const int32_t>(c.lengths), features.n.size(), features.n.data());
        inductive::fit_otke_unsupervised(model, features, options);
      }
      adopt(std::move(model));
    });
  }

  bool serialize() { return serialize_model(); }
  uintptr_t bytes_address() const { return model_bytes_address(); }
  size_t bytes_size() const { return model_bytes_size(); }
  void release_bytes() { release_model_bytes(); }

 private:
  // Per reference r: plan[r] is [batch, n_max, p] for the batch's own n_max; the caller's layout has plan_stride rows.
  void write_plans(const std::vector<std::vector<float>>& plans, const inductive::SetBatch& f, uintptr_t address,
                   int plan_stride) const {
    const int q = static_cast<int>(plans.size()), p = model_.config.otk.p, B = f.batch;
    INDUCTIVE_CHECK(plan_stride >= f.n_max, inductive::ErrorCode::kShapeMismatch, "transportPlans: room for ",
                    plan_stride, " rows per plan, the longest input needs ", f.n_max);
    float* out = ptr<float>(address);
    std::fill(out, out + static_cast<size_t>(q) * B * plan_stride * p, 0.0f);
    // [q, B, plan_stride, p]: the core's copy_plans with the browser's strides (the CLI's are [B, q, n_max, p]).
    inductive::copy_plans(plans, f, p, out, static_cast<int64_t>(plan_stride) * p,
                          static_cast<int64_t>(B) * plan_stride * p);
  }

  void write_predictions(const Eigen::Ref<const inductive::MatF>& e, uintptr_t logits, uintptr_t probabilities) const {
    const inductive::MatF z = model_.predict(e);
    write_rows(z, logits);
    // One class of C (softmax rows), or for a multilabel model an independent sigmoid per label.
    if (probabilities != 0) write_rows(inductive::output_probabilities(model_.config, z), probabilities);
  }
};

std::string last_error_code() { return inductive::wasm::last_error().code; }
std::string last_error_message() { return inductive::wasm::last_error().message; }
std::string version() { return inductive::version(); }
std::string producer() { return inductive::producer(); }
std::string simd_kernel() { return inductive::sinkhorn_kernel_name(); }
int threads() { return inductive::parallel_threads(); }
void set_threads(int n) { inductive::set_parallel_threads(n); }
std::string thread_runtime() { return inductive::parallel_runtime(); }

}  // namespace

EMSCRIPTEN_BINDINGS(inductive) {
  using emscripten::function;
  inductive::register_core_model_kinds();  // modelInfo and every load check files of core's kinds
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

  emscripten::value_object<OtkeEmbedCall>("OtkeEmbedCall")
      .field("batch", &OtkeEmbedCall::batch)
      .field("sequences", &OtkeEmbedCall::sequences)
      .field("bytes", &OtkeEmbedCall::bytes)
      .field("offsets", &OtkeEmbedCall::offsets)
      .field("nameBytes", &OtkeEmbedCall::name_bytes)
      .field("nameOffsets", &OtkeEmbedCall::name_offsets)
      .field("x", &OtkeEmbedCall::x)
      .field("lengths", &OtkeEmbedCall::lengths)
      .field("nMax", &OtkeEmbedCall::n_max)
      .field("dim", &OtkeEmbedCall::dim)
      .field("embeddings", &OtkeEmbedCall::embeddings)
      .field("plans", &OtkeEmbedCall::plans)
      .field("planStride", &OtkeEmbedCall::plan_stride)
      .field("predict", &OtkeEmbedCall::predict)
      .field("logits", &OtkeEmbedCall::logits)
      .field("probabilities", &OtkeEmbedCall::probabilities);
  emscripten::value_object<OtkePredictCall>("OtkePredictCall")
      .field("x", &OtkePredictCall::x)
      .field("batch", &OtkePredictCall::batch)
      .field("dim", &OtkePredictCall::dim)
      .field("logits", &OtkePredictCall::logits)
      .field("probabilities", &OtkePredictCall::probabilities);
  emscripten::value_object<OtkeFitHeadCall>("OtkeFitHeadCall")
      .field("x", &OtkeFitHeadCall::x)
      .field("labels", &OtkeFitHeadCall::labels)
      .field("batch", &OtkeFitHeadCall::batch)
      .field("dim", &OtkeFitHeadCall::dim)
      .field("classes", &OtkeFitHeadCall::classes)
      .field("labelNames", &OtkeFitHeadCall::label_names)
      .field("lambda", &OtkeFitHeadCall::lambda)
      .field("minPerClass", &OtkeFitHeadCall::min_per_class)
      .field("maxFolds", &OtkeFitHeadCall::max_folds)
      .field("maxIter", &OtkeFitHeadCall::max_iter)
      .field("tol", &OtkeFitHeadCall::tol)
      .field("holdout", &OtkeFitHeadCall::holdout)
      .field("holdoutFraction", &OtkeFitHeadCall::holdout_fraction)
      .field("seed", &OtkeFitHeadCall::seed)
      .field("refit", &OtkeFitHeadCall::refit)
      .field("lambdaGrid", &OtkeFitHeadCall::lambda_grid);
  emscripten::value_object<OtkeFitCall>("OtkeFitCall")
      .field("config", &OtkeFitCall::config)
      .field("seed", &OtkeFitCall::seed)
      .field("kmeansIters", &OtkeFitCall::kmeans_iters)
      .field("maxSamples", &OtkeFitCall::max_samples)
      .field("referenceUpdate", &OtkeFitCall::reference_update)
      .field("barycenterIters", &OtkeFitCall::barycenter_iters)
      .field("barycenterEps", &OtkeFitCall::barycenter_eps);
  emscripten::class_<OtkeHandle>("OtkeHandle")
      .constructor<>()
      .function("load", &OtkeHandle::load)
      .function("describe", &OtkeHandle::describe)
      .function("embed", &OtkeHandle::embed)
      .function("predict", &OtkeHandle::predict)
      .function("fitHead", &OtkeHandle::fit_head)
      .function("fitUnsupervised", &OtkeHandle::fit_unsupervised)
      .function("serialize", &OtkeHandle::serialize)
      .function("bytesAddress", &OtkeHandle::bytes_address)
      .function("bytesSize", &OtkeHandle::bytes_size)
      .function("releaseBytes", &OtkeHandle::release_bytes);
  function("modelInfo", &model_info);
  function("lastErrorCode", &last_error_code);
  function("lastErrorMessage", &last_error_message);
  function("version", &version);
  function("producer", &producer);
  function("simdKernel", &simd_kernel);
  function("threads", &threads);
  function("setThreads", &set_threads);
  function("threadRuntime", &thread_runtime);
}
