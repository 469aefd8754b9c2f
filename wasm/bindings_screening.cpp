// Embind bindings of safe sample screening (core: inductive/screening.h, thesis ch. 4). Translation only: a
// DatasetHandle owns one parsed dataset (LIBSVM / CSV text, gzip or not, or dense arrays); `screen` builds the
// ERM problem from JSON options, runs the core's solve_and_screen, writes per-sample outputs into buffers the TS
// layer allocated and returns a JSON report. Errors are data (guarded.h).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "camel_case.h"
#include "guarded.h"
#include "inductive/screening/path.h"
#include "inductive/error.h"
#include "inductive/gzip.h"
#include "inductive/screening.h"

namespace {

using inductive::ErrorCode;
using inductive::wasm::guarded;
using inductive::wasm::ptr;
using nlohmann::json;

// Options of one screening run, from the TS layer's JSON (camelCase; every key optional, unknown keys refused).
struct ScreenSettings {
  inductive::Loss loss = inductive::Loss::squared_hinge();
  inductive::Penalty penalty = inductive::Penalty::l2();
  double lambda = inductive::kDefaultErmLambda;
  bool intercept = false;
  bool has_positive = false;
  double positive = 0;
  inductive::SolverOptions solver;
  inductive::ScreenOptions regions;             // the static test (ellipsoid steps)
  bool static_screen = false;                   // path: screen each warm start too
  std::optional<inductive::KernelSpec> kernel;  // screen: the kernel problem instead of the linear one
};

ScreenSettings parse_settings(const std::string& text) {
  const json j = json::parse(text);  // the TS layer writes it: a parse error is a bug there (-> internal)
  INDUCTIVE_CHECK(j.is_object(), ErrorCode::kInvalidArgument, "screen: options must be an object");
  static const std::set<std::string> known = {
      "loss",    "mu",       "penalty",  "l1Ratio",        "lambda",       "intercept",  "tol",   "maxEpochs",
      "dynamic", "positive", "gapEvery", "ellipsoidSteps", "staticScreen", "workingSet", "kernel"};
  for (const auto& item : j.items()) {
    INDUCTIVE_CHECK(known.count(item.key()) != 0, ErrorCode::kInvalidArgument, "screen: unknown option '", item.key(),
                    "'");
  }
  auto number = [&](const char* key, double fallback) {
    if (!j.contains(key)) return fallback;
    INDUCTIVE_CHECK(j[key].is_number(), ErrorCode::kInvalidArgument, "screen: option ", key, " must be a number: got ",
                    j[key].dump());
    return j[key].get<double>();
  };
  auto string = [&](const char* key, const char* fallback) {
    if (!j.contains(key)) return std::string(fallback);
    INDUCTIVE_CHECK(j[key].is_string(), ErrorCode::kInvalidArgument, "screen: option ", key, " must be a string: got ",
                    j[key].dump());
    return j[key].get<std::string>();
  };
  auto boolean = [&](const char* key, bool fallback) {
    if (!j.contains(key)) return fallback;
    INDUCTIVE_CHECK(j[key].is_boolean(), ErrorCode::kInvalidArgument, "screen: option ", key,
                    " must be true or false: got ", j[key].dump());
    return j[key].get<bool>();
  };
  auto integer = [&](const char* key, int fallback) {
    const double v = number(key, fallback);
    INDUCTIVE_CHECK(v == std::floor(v) && v >= 1 && v <= 1e9, ErrorCode::kInvalidArgument, "screen: option ", key,
                    " must be an integer >= 1: got ", v);
    return static_cast<int>(v);
  };
  // Keys left out take core's defaults (the CLI's too): Loss{}, Penalty{}, SolverOptions{}, ScreenOptions{}.
  ScreenSettings s;
  s.loss = inductive::Loss::from_name(string("loss", inductive::Loss{}.name()), number("mu", inductive::Loss{}.mu));
  s.loss.validate();
  s.penalty = inductive::Penalty::from_name(string("penalty", inductive::Penalty{}.name()),
                                            number("l1Ratio", inductive::kDefaultL1Ratio));
  s.penalty.validate();
  s.lambda = number("lambda", inductive::kDefaultErmLambda);
  INDUCTIVE_CHECK(std::isfinite(s.lambda) && s.lambda > 0, ErrorCode::kInvalidArgument,
                  "screen: lambda must be a finite number > 0, got ", s.lambda);
  s.intercept = boolean("intercept", false);
  if (j.contains("positive") && !j["positive"].is_null()) {
    s.has_positive = true;
    s.positive = number("positive", 0);
  }
  const inductive::SolverOptions solver;
  s.solver.tol = number("tol", solver.tol);
  s.solver.max_epochs = integer("maxEpochs", solver.max_epochs);
  s.solver.gap_every = integer("gapEvery", solver.gap_every);
  s.solver.dynamic_screening = boolean("dynamic", inductive::kDefaultDynamicScreening);
  s.solver.working_set = boolean("workingSet", false);  // path only (the TS layer refuses it elsewhere)
  s.solver.validate();
  const double steps = number("ellipsoidSteps", inductive::ScreenOptions{}.ellipsoid_steps);
  INDUCTIVE_CHECK(steps == std::floor(steps) && steps >= 0 && steps <= 1e6, ErrorCode::kInvalidArgument,
                  "screen: option ellipsoidSteps must be an integer >= 0: got ", steps);
  s.regions.ellipsoid_steps = static_cast<int>(steps);
  s.static_screen = boolean("staticScreen", false);
  if (j.contains("kernel") && !j["kernel"].is_null()) {
    const json& k = j["kernel"];  // the TS layer checked the shape; values are checked here, as on the CLI
    inductive::KernelSpec spec;   // keys left out keep its defaults
    if (k.contains("type"))
      spec.kind = inductive::parse_enum(inductive::kKernelKinds, k["type"].get<std::string>(), "kernel.type");
    spec.gamma = k.value("gamma", spec.gamma);
    spec.degree = k.value("degree", spec.degree);
    spec.coef0 = k.value("coef0", spec.coef0);
    spec.validate();
    s.kernel = spec;
  }
  return s;
}

// Per-sample outputs, each optional (address 0): screened flags [n] (u8), static scores [n] (f32, > 0 <=>
// screened by the static test at the solution), margins [n] (f32, a_i^T w + b: the fitted decision values /
// predictions), coefficients [p + 1] (f32, w then the intercept b; linear problem only), alpha [n] (f64, the dual
// coefficients of a kernel model; kernel problem only).
struct ScreenCall {
  std::string options = "{}";
  uintptr_t screened = 0, scores = 0, margins = 0, coefficients = 0, alpha = 0;
};

class DatasetHandle {
 public:
  // Text in [address, address + size) (gzip allowed); format "libsvm" or "csv"; options JSON: csv {header,
  // labelColumn, delimiter}, libsvm {}.
  bool load_text(uintptr_t address, size_t size, const std::string& format, const std::string& options) {
    return guarded([&] {
      const json o = json::parse(options);
      // One copy of the text, not three (a 200 MB file peaked at 1 GB of wasm memory): the parser reads it from
      // a string made straight from the caller's buffer, or from the inflated bytes.
      const uint8_t* in = ptr<const uint8_t>(address);
      const std::string text = inductive::is_gzip(in, size)
          ? [&] { const std::vector<uint8_t> inflated = inductive::gunzip(in, size, format);
                  return std::string(inflated.begin(), inflated.end()); }()
          : std::string(reinterpret_cast<const char*>(in), size);
      inductive::Dataset d;
      if (format == "libsvm") {
        d = inductive::to_dataset(inductive::parse_libsvm(text, {}, "libsvm"));
      } else if (format == "csv") {
        inductive::CsvOptions csv;  // keys left out keep its defaults
        csv.header = o.value("header", csv.header);
        csv.label_column = o.value("labelColumn", csv.label_column);
        const std::string delimiter = o.value("delimiter", std::string(1, csv.delimiter));
        INDUCTIVE_CHECK(delimiter.size() == 1, ErrorCode::kInvalidArgument,
                        "csv: delimiter must be one character: got '", delimiter, "'");
        csv.delimiter = delimiter[0];
        d = inductive::to_dataset(inductive::parse_csv(text, csv, "csv"));
      } else {
        INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "loadDataset: format must be 'libsvm' or 'csv': got '", format,
                       "'");
      }
      set(std::move(d));
    });
  }

  // Dense row-major x [n, p] (f32) and labels/targets y [n] (f32).
  bool load_dense(uintptr_t x, int n, int p, uintptr_t y) {
    return guarded([&] {
      INDUCTIVE_CHECK(n >= 1 && p >= 1, ErrorCode::kInvalidArgument, "loadDataset: no samples or no features, got ", n,
                      " x ", p);
      inductive::MatF values = inductive::CMapF(ptr<const float>(x), n, p);
      inductive::Dataset d;
      d.x = std::make_shared<inductive::DenseDesign>(std::move(values));  // checks NaN/Inf
      d.y.assign(ptr<const float>(y), ptr<const float>(y) + n);
      for (int i = 0; i < n; ++i) {
        INDUCTIVE_CHECK(std::isfinite(d.y[i]), ErrorCode::kInvalidArgument, "loadDataset: label ", i,
                        " is not finite: got ", d.y[i]);
      }
      set(std::move(d));
    });
  }

  // {"n", "p", "nnz", "sparse", "labels": distinct label values (at most 64, else null), "yMin", "yMax"}.
  std::string describe() const {
    if (!data_.x) return "";
    std::vector<double> values = data_.y;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return json{{"n", data_.n()},
                {"p", data_.p()},
                {"nnz", data_.x->nnz()},
                {"sparse", data_.x->is_sparse()},
                {"labels", values.size() <= 64 ? json(values) : json(nullptr)},
                {"yMin", values.empty() ? 0.0 : values.front()},
                {"yMax", values.empty() ? 0.0 : values.back()}}
        .dump();
  }

  // Solves and screens; `progress(epoch, primal, dual, gap, nActive)` after each gap check (return false to
  // stop). The JSON report ("" on failure) holds the counts, objectives, timings and the solver's history.
  std::string screen(const ScreenCall& c, emscripten::val progress) {
    std::string report;
    guarded([&] {
      INDUCTIVE_CHECK(data_.x != nullptr, ErrorCode::kInvalidArgument, "screen: no dataset loaded in this handle");
      ScreenSettings s = parse_settings(c.options);
      const inductive::ErmProblem problem = problem_of(s, s.lambda);
      if (!progress.isUndefined()) {
        s.solver.progress = [&](const inductive::SolverProgress& p) {
          const emscripten::val keep = progress(p.epoch, p.primal, p.dual, p.gap, p.n_active);
          if (!keep.isUndefined() && !keep.as<bool>())  // the solver keeps its certified iterate (cancelled: true)
            throw inductive::Error(ErrorCode::kCancelled, "screen: cancelled");
        };
      }
      std::optional<inductive::KernelScreenResult> kernel;
      if (s.kernel) kernel = inductive::kernel_solve_and_screen(problem, *s.kernel, s.solver, s.regions);
      const inductive::SolveAndScreenResult r =
          kernel ? std::move(kernel->result) : inductive::solve_and_screen(problem, s.solver, s.regions);
      const int n = problem.n(), p = problem.features();
      if (c.screened != 0) std::memcpy(ptr<uint8_t>(c.screened), r.screened.data(), static_cast<size_t>(n));
      if (c.scores != 0) {
        float* out = ptr<float>(c.scores);
        for (int i = 0; i < n; ++i) out[i] = static_cast<float>(r.at_solution.score[i]);
      }
      const double b = kernel ? kernel->intercept : r.fit.intercept(problem);
      if (c.margins != 0) {
        float* out = ptr<float>(c.margins);
        for (int i = 0; i < n; ++i)
          out[i] = static_cast<float>(kernel ? kernel->decision[i] : problem.x->row_dot(i, r.fit.x.data()) + b);
      }
      if (c.coefficients != 0 && !kernel) {
        float* out = ptr<float>(c.coefficients);
        for (int j = 0; j < p; ++j) out[j] = static_cast<float>(r.fit.x[j]);
        out[p] = static_cast<float>(b);
      }
      if (c.alpha != 0 && kernel) std::memcpy(ptr<double>(c.alpha), kernel->alpha.data(), sizeof(double) * n);
      report = inductive::wasm::camel_case_keys(
                   inductive::screen_report(problem, r, s.kernel ? &*s.kernel : nullptr, kernel ? &*kernel : nullptr))
                   .dump();
    });
    return report;
  }

  // A regularisation path (core regularization_path: warm starts; with `screening`, sequential and dynamic
  // screening) over the lambdas of a JSON array (or grid), with the settings of screen (its lambda unused).
  // `progress(stage, fraction)`: "solve" after each gap check, "path" after each lambda; returning false cancels the
  // whole path (the call fails with "cancelled"). The JSON report ("" on failure): one entry per lambda.
  std::string path(const std::string& options, const std::string& lambdas_json, bool screening,
                   emscripten::val progress) {
    std::string report;
    guarded([&] {
      INDUCTIVE_CHECK(data_.x != nullptr, ErrorCode::kInvalidArgument, "path: no dataset loaded in this handle");
      ScreenSettings s = parse_settings(options);
      INDUCTIVE_CHECK(!s.kernel, ErrorCode::kInvalidArgument,
                      "path: kernel screening runs one lambda at a time (screen); paths are linear only");
      // An array of lambdas, or the geometric grid {lambdaMax, ratio, count} (the CLI's defaults for what is left out).
      const json grid = json::parse(lambdas_json);
      const std::vector<double> lambdas =
          grid.is_array() ? grid.get<std::vector<double>>()
                          : inductive::geometric_lambdas(grid.value("lambdaMax", inductive::kDefaultPathLambdaMax),
                                                         grid.value("ratio", inductive::kDefaultPathRatio),
                                                         grid.value("count", inductive::kDefaultPathCount));
      const inductive::ErmProblem problem = problem_of(s, lambdas.empty() ? 1.0 : lambdas.front());
      const auto report_progress = inductive::wasm::js_progress(progress, "path");
      const double count = static_cast<double>(std::max<size_t>(lambdas.size(), 1));
      int done = 0;
      s.solver.progress = [&](const inductive::SolverProgress&) { report_progress("solve", done / count); };
      INDUCTIVE_CHECK(s.regions.ellipsoid_steps == 0 || s.static_screen, ErrorCode::kInvalidArgument,
                      "path: ellipsoidSteps shapes the static screening of warm starts: it needs staticScreen: true");
      inductive::PathOptions o;
      o.solver = s.solver;
      o.solver.working_set = s.solver.working_set && screening;
      o.screening = screening;
      o.static_screen = s.static_screen && screening;
      o.screen = s.regions;
      const std::vector<inductive::PathPoint> points =
          inductive::regularization_path(problem, lambdas, o, [&](const inductive::PathPoint&) {
            ++done;
            report_progress("path", done / count);
          });
      report = inductive::wasm::camel_case_keys(inductive::path_report(problem, o, points)).dump();
    });
    return report;
  }

  // Dataset compression (core compress_dataset, as `inductive compress`): `settings` as screen's (no kernel),
  // `compression` {testFraction, seed, fractions, rankings} (the TS layer fills every key). `progress(stage,
  // fraction)`: "fit", then "refit"; returning false cancels. The JSON report, "" on failure.
  std::string compression(const std::string& settings, const std::string& compression, emscripten::val progress) {
    std::string report;
    guarded([&] {
      INDUCTIVE_CHECK(data_.x != nullptr, ErrorCode::kInvalidArgument,
                      "compressionCurve: no dataset loaded in this handle");
      const ScreenSettings s = parse_settings(settings);
      INDUCTIVE_CHECK(!s.kernel, ErrorCode::kInvalidArgument, "compressionCurve: linear problems only (no kernel)");
      const json c = json::parse(compression);
      inductive::CompressionOptions o;
      o.fractions = c.at("fractions").get<std::vector<double>>();
      o.rankings.clear();
      for (const json& r : c.at("rankings"))
        o.rankings.push_back(inductive::parse_enum(inductive::kCompressionRankings, r.get<std::string>(), "rankings"));
      o.seed = c.at("seed").get<uint32_t>();
      o.solver = s.solver;
      o.screen = s.regions;
      o.progress = inductive::wasm::js_progress(progress, "compressionCurve");
      o.validate();
      const inductive::ErmProblem all = problem_of(s, s.lambda);
      const inductive::HeldOut h = inductive::hold_out(all, c.at("testFraction").get<double>(), o.seed);
      const inductive::CompressionReport r = inductive::compress_dataset(h.train, *h.test_x, h.test_y, o);
      report =
          inductive::wasm::camel_case_keys(inductive::compression_report(h.train, static_cast<int>(h.test_y.size()), r))
              .dump();
    });
    return report;
  }

 private:
  // The ERM problem of these settings on the loaded data, at `lambda`.
  inductive::ErmProblem problem_of(const ScreenSettings& s, double lambda) const {
    inductive::ErmProblem problem =
        inductive::erm_problem(data_, s.loss, s.penalty, lambda, s.intercept, s.has_positive ? &s.positive : nullptr);
    problem.validate();
    return problem;
  }

  void set(inductive::Dataset d) {
    INDUCTIVE_CHECK(d.n() >= 1 && d.p() >= 1, ErrorCode::kInvalidArgument,
                    "loadDataset: no samples or no features, got ", d.n(), " x ", d.p());
    data_ = std::move(d);
  }
  inductive::Dataset data_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(inductive_screening) {
  emscripten::value_object<ScreenCall>("ScreenCall")
      .field("options", &ScreenCall::options)
      .field("screened", &ScreenCall::screened)
      .field("scores", &ScreenCall::scores)
      .field("margins", &ScreenCall::margins)
      .field("coefficients", &ScreenCall::coefficients)
      .field("alpha", &ScreenCall::alpha);
  emscripten::class_<DatasetHandle>("DatasetHandle")
      .constructor<>()
      .function("loadText", &DatasetHandle::load_text)
      .function("loadDense", &DatasetHandle::load_dense)
      .function("describe", &DatasetHandle::describe)
      .function("screen", &DatasetHandle::screen)
      .function("compression", &DatasetHandle::compression)
      .function("path", &DatasetHandle::path);
  emscripten::function("maxKernelSamples", &inductive::max_kernel_samples);
}
