// The native twin of the demo's browser benchmark (?bench, web/demo/src/bench/): the same three workloads, read
// from the same web/demo/src/bench/workloads.json and generated from the same seeds, through the same core calls
// the wasm bindings make (Sinkhorn batch; OTKE sequence features, embedding and head; GraphiT molecules, prepare
// and predict), at 1 and 2 threads. web/demo/e2e/bench.e2e.mjs runs both and prints browser / native ratios.
//
//   parity_bench --workloads web/demo/src/bench/workloads.json --models data/models [--threads 1,2]
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "bench_memory.h"
#include "bench_timing.h"
#include "inductive/graphit.h"
#include "inductive/heap.h"
#include "inductive/logistic.h"
#include "inductive/model_file.h"
#include "inductive/otke.h"
#include "inductive/parallel.h"
#include "inductive/sinkhorn.h"
#include "inductive/smiles.h"

namespace {

using nlohmann::json;

#if defined(__EMSCRIPTEN__)
constexpr const char* kBuild = "wasm (Node)";  // bench/CMakeLists.txt: the same workloads under Node, for profiles
#else
constexpr const char* kBuild = "native";
#endif

// xorshift32, as web/demo/src/bench/inputs.ts writes it: floats in [0, 1) from the top 24 bits.
struct Xorshift {
  uint32_t x;
  uint32_t next() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  }
  float uniform() { return static_cast<float>(next() >> 8) / 16777216.0f; }
};

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

int main(int argc, char** argv) {
  std::string workloads_path, models, threads_arg;
  bool phases = false;
  inductive::bench::BenchArgs args("parity_bench", "the browser benchmark's workloads natively (JSON on stdout)");
  args.option("--workloads", "FILE", "web/demo/src/bench/workloads.json", &workloads_path);
  args.option("--models", "DIR", "folder of the model files it names (data/models)", &models);
  args.option("--threads", "LIST", "thread counts, comma-separated (default 1,2)", &threads_arg);
  args.flag("--phases",
            "also time GraphiT's phases apart (parse, prepare, predict, and parse_and_prepare as the row runs them: "
            "graphit_phases_s)",
            &phases);
  if (const int rc = args.parse(argc, argv); rc >= 0) return rc;
  std::vector<int> thread_counts = {1, 2};
  if (!threads_arg.empty() && !inductive::bench::BenchArgs::int_list("--threads", threads_arg, 1, 256, &thread_counts))
    return 2;
  if (workloads_path.empty() || models.empty()) {
    std::fprintf(stderr, "error: --workloads and --models are required (see --help)\n");
    return 2;
  }
  inductive::keep_batch_buffers_in_heap();  // as the CLI does (inductive/heap.h)
  try {
    const std::vector<uint8_t> text = read_file(workloads_path);
    const json w = json::parse(text.begin(), text.end());
    const int repeats = w.at("repeats").get<int>();

    // Sinkhorn: batch problems of n x p uniform costs.
    const json& s = w.at("sinkhorn");
    const int B = s.at("batch"), n = s.at("n"), p = s.at("p");
    Xorshift rs{s.at("seed").get<uint32_t>()};
    std::vector<float> cost(static_cast<size_t>(B) * n * p);
    for (float& c : cost) c = rs.uniform();
    inductive::SinkhornOptions so;
    so.eps = s.at("eps").get<float>();
    so.max_iter = s.at("maxIter").get<int>();
    so.tol = 0;
    // Every output the package's sinkhornBatch returns.
    std::vector<float> plan(cost.size()), f(static_cast<size_t>(B) * n), g(static_cast<size_t>(B) * p);
    std::vector<float> marginal_err(B), cost_value(B);
    std::vector<int32_t> n_iter(B);
    std::vector<uint8_t> converged(B);
    inductive::SinkhornProblem<float> problem;
    problem.cost = cost.data();
    problem.batch = B;
    problem.n_max = n;
    problem.p_max = p;
    inductive::SinkhornOutput<float> out{plan.data(),         f.data(),         g.data(),         n_iter.data(),
                                         marginal_err.data(), converged.data(), cost_value.data()};

    // OTKE: random DNA sequences through the promoter model (features, embedding, head).
    const json& o = w.at("otke");
    const std::vector<uint8_t> otke_bytes = read_file(models + "/" + o.at("model").get<std::string>());
    const inductive::OtkeModel otke =
        inductive::OtkeModel::from_view(inductive::read_model(otke_bytes.data(), otke_bytes.size()));
    Xorshift ro{o.at("seed").get<uint32_t>()};
    std::vector<std::string> sequences(o.at("sequences").get<size_t>()), names(sequences.size());
    for (size_t i = 0; i < sequences.size(); ++i) {
      for (int k = 0; k < o.at("length").get<int>(); ++k) sequences[i] += "ACGT"[ro.next() >> 30];
      names[i] = "s" + std::to_string(i);
    }

    // GraphiT: every group on every ring, `copies` times, from SMILES to class probabilities.
    const json& gr = w.at("graphit");
    const std::vector<uint8_t> graphit_bytes = read_file(models + "/" + gr.at("model").get<std::string>());
    const inductive::GraphitModel graphit =
        inductive::GraphitModel::from_view(inductive::read_model(graphit_bytes.data(), graphit_bytes.size()));
    std::vector<std::string> molecules;
    for (int c = 0; c < gr.at("copies").get<int>(); ++c)
      for (const auto& ring : gr.at("rings"))
        for (const auto& group : gr.at("groups"))
          molecules.push_back(group.get<std::string>() + ring.get<std::string>());

    json rows = json::array();
    for (int threads : thread_counts) {
      inductive::set_parallel_threads(threads);
      inductive::bench::reset_peak_rss();  // each row's own peak, as each browser row is a fresh instance
      const double t_sinkhorn =
          inductive::bench::median_seconds(repeats, [&] { inductive::sinkhorn_log(problem, so, out); });
      const double t_otke = inductive::bench::median_seconds(repeats, [&] {
        const inductive::SetBatch features = otke.sequence_features(sequences, names);
        const inductive::MatF e = otke.embed(features, nullptr);
        const inductive::MatF probabilities = inductive::softmax_rows(otke.predict(e));
        (void)probabilities;
      });
      // The row's first half: the SMILES parsed inside prepare_many's parallel loop, as the bindings do.
      const auto parse_and_prepare = [&] {
        return graphit.prepare_many(
            static_cast<int>(molecules.size()),
            [&](int i) { return graphit.molecule_graph(inductive::parse_smiles(molecules[static_cast<size_t>(i)])); },
            [&](int i) { return molecules[static_cast<size_t>(i)]; });
      };
      const double t_graphit = inductive::bench::median_seconds(repeats, [&] {
        const std::vector<inductive::GraphitGraph> graphs = parse_and_prepare();
        const inductive::MatF out = inductive::softmax_rows(graphit.predict(graphs));
        (void)out;
      });
      json row_phases = nullptr;
      if (phases) {  // the same work as t_graphit, one phase at a time (where the time goes, natively and in wasm)
        std::vector<inductive::Graph> parsed;
        std::vector<inductive::GraphitGraph> prepared;
        const int count = static_cast<int>(molecules.size());
        const double t_parse = inductive::bench::median_seconds(repeats, [&] {
          parsed.clear();
          for (const std::string& m : molecules) parsed.push_back(graphit.molecule_graph(inductive::parse_smiles(m)));
        });
        const double t_prepare = inductive::bench::median_seconds(repeats, [&] {
          prepared = graphit.prepare_many(
              count, [&](int i) { return parsed[static_cast<size_t>(i)]; },
              [&](int i) { return molecules[static_cast<size_t>(i)]; });
        });
        const double t_predict = inductive::bench::median_seconds(
            repeats, [&] { (void)inductive::softmax_rows(graphit.predict(prepared)); });
        const double t_parse_prepare =
            inductive::bench::median_seconds(repeats, [&] { prepared = parse_and_prepare(); });
        row_phases = {
            {"parse", t_parse}, {"prepare", t_prepare}, {"predict", t_predict}, {"parse_and_prepare", t_parse_prepare}};
      }
      rows.push_back({{"threads", threads},
                      {"graphit_phases_s", row_phases},
                      {"sinkhorn_problems_per_s", B / t_sinkhorn},
                      {"otke_sequences_per_s", static_cast<double>(sequences.size()) / t_otke},
                      {"graphit_molecules_per_s", static_cast<double>(molecules.size()) / t_graphit},
                      {"peak_rss_bytes", inductive::bench::peak_rss_bytes()}});
    }
    std::printf("%s\n",
                json{{"build", kBuild}, {"runtime", inductive::parallel_runtime()}, {"rows", rows}}.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
