// GraphiT config <-> JSON, strict (see inductive/graphit.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <set>

#include "inductive/graphit.h"
#include "io/json_section.h"

namespace inductive {

namespace {

using nlohmann::json;
using Section = JsonSection;

// Every section is read strictly (unknown keys are errors): see io/json_section.h.
Section section(const json& j, const char* key) { return Section(JsonSection::of(j, key), "graphit config", key); }

}  // namespace

GraphitConfig GraphitConfig::with_dim(int d, int layers, int heads) {
  GraphitConfig c;
  c.d = d;
  c.layers = layers;
  c.heads = heads;
  c.ffn = 2 * d;
  c.hidden = d;
  return c;
}

void GraphitConfig::validate() const {
  auto in_range = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  INDUCTIVE_CHECK(in_range(vocab, 0, 1 << 20) && in_range(features, 0, 1 << 20) && in_range(pe_dim, 0, 1 << 16) &&
                      in_range(path_dim, 0, 1 << 20),
                  ErrorCode::kInvalidArgument, "graphit config: input dimensions must be in 0..2^20: got vocab ", vocab,
                  ", features ", features, ", pe ", pe_dim, ", path ", path_dim);
  INDUCTIVE_CHECK(vocab > 0 || features > 0 || pe_dim > 0 || path_dim > 0, ErrorCode::kInvalidArgument,
                  "graphit config: no node input (input.vocab, features, pe and path are all 0)");
  INDUCTIVE_CHECK(node_labels.empty() || static_cast<int>(node_labels.size()) == vocab, ErrorCode::kInvalidArgument,
                  "graphit config: input.node_labels has ", node_labels.size(), " entries, expected vocab = ", vocab);
  {
    std::set<std::string> unique(node_labels.begin(), node_labels.end());
    INDUCTIVE_CHECK(unique.size() == node_labels.size(), ErrorCode::kInvalidArgument,
                    "graphit config: input.node_labels has duplicate entries");
  }
  INDUCTIVE_CHECK(in_range(d, 1, 65536), ErrorCode::kInvalidArgument,
                  "graphit config: encoder.d must be in 1..65536: got ", d);
  INDUCTIVE_CHECK(in_range(layers, 0, 1024), ErrorCode::kInvalidArgument,
                  "graphit config: encoder.layers must be in 0..1024: got ", layers);
  INDUCTIVE_CHECK(heads >= 1 && d % heads == 0, ErrorCode::kInvalidArgument, "graphit config: encoder.heads (", heads,
                  ") must be >= 1 and divide d (", d, ")");
  INDUCTIVE_CHECK(in_range(ffn, 1, 1 << 20), ErrorCode::kInvalidArgument,
                  "graphit config: encoder.ffn must be in 1..2^20: got ", ffn);
  INDUCTIVE_CHECK(std::isfinite(dropout) && dropout >= 0 && dropout < 1, ErrorCode::kInvalidArgument,
                  "graphit config: encoder.dropout must be in [0, 1): got ", dropout);
  INDUCTIVE_CHECK(in_range(hidden, 1, 1 << 20), ErrorCode::kInvalidArgument,
                  "graphit config: readout.hidden must be in 1..2^20: got ", hidden);
  if (classification())
    INDUCTIVE_CHECK(in_range(outputs, 2, 100000), ErrorCode::kInvalidArgument,
                    "graphit config: task.outputs (classes) must be >= 2: got ", outputs);
  else
    INDUCTIVE_CHECK(in_range(outputs, 1, 100000), ErrorCode::kInvalidArgument,
                    "graphit config: task.outputs (targets) must be >= 1: got ", outputs);
  INDUCTIVE_CHECK(class_labels.empty() || (classification() && static_cast<int>(class_labels.size()) == outputs),
                  ErrorCode::kInvalidArgument, "graphit config: task.labels has ", class_labels.size(), " names for ",
                  outputs, " classes");
  if (has_graph) {
    graph.validate();
    INDUCTIVE_CHECK(graph.kernel == kernel, ErrorCode::kInvalidArgument, "graphit config: encoder.kernel is ",
                    kernel ? "true" : "false", " but graph.kernel is ", graph.kernel ? "set" : "null");
    INDUCTIVE_CHECK(graph.lap_pe == pe_dim, ErrorCode::kInvalidArgument, "graphit config: input.pe is ", pe_dim,
                    " but graph.lap_pe is ", graph.lap_pe);
    const int g = graph.gckn ? graph.gckn_options.path_size * graph.gckn_options.n_filters : 0;
    INDUCTIVE_CHECK(g == path_dim, ErrorCode::kInvalidArgument, "graphit config: input.path is ", path_dim,
                    " but graph.gckn gives ", g, " path features");
  }
}

nlohmann::json GraphitConfig::to_json() const {
  json j;
  j["input"] =
      json{{"vocab", vocab}, {"features", features}, {"pe", pe_dim}, {"path", path_dim}, {"node_labels", node_labels}};
  j["encoder"] = json{{"d", d},
                      {"layers", layers},
                      {"heads", heads},
                      {"ffn", ffn},
                      {"norm", enum_name(kGraphitNorms, norm)},
                      {"dropout", dropout},
                      {"kernel", kernel},
                      {"degree_scaling", degree_scaling}};
  j["readout"] = json{{"pooling", enum_name(kGraphitPoolings, pooling)}, {"hidden", hidden}};
  j["task"] = json{{"type", enum_name(kGraphitTasks, task)}, {"outputs", outputs}, {"labels", class_labels}};
  if (has_graph) j["graph"] = graph.to_json();
  return j;
}

GraphitConfig GraphitConfig::from_json(const nlohmann::json& j) {
  INDUCTIVE_CHECK(j.is_object(), ErrorCode::kInvalidArgument, "graphit config: must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    INDUCTIVE_CHECK(it.key() == "input" || it.key() == "encoder" || it.key() == "readout" || it.key() == "task" ||
                        it.key() == "graph",
                    ErrorCode::kInvalidArgument, "graphit config: unknown section '", it.key(),
                    "' (expected input, encoder, readout, task, graph)");
  GraphitConfig c;
  if (j.contains("graph") && !j.at("graph").is_null()) {
    c.graph = GraphitInputSpec::from_json(j.at("graph"));
    c.has_graph = true;
  }
  {
    Section s = section(j, "input");
    c.vocab = s.integer("vocab", c.vocab);
    c.features = s.integer("features", c.features);
    c.pe_dim = s.integer("pe", c.pe_dim);
    c.path_dim = s.integer("path", c.path_dim);
    c.node_labels = s.strings("node_labels");
    s.finish();
  }
  {
    Section s = section(j, "encoder");
    c.d = s.integer("d", c.d);
    c.layers = s.integer("layers", c.layers);
    c.heads = s.integer("heads", c.heads);
    // The default width is 2d, saturated: a d far out of range must reach validate's message, not overflow here.
    c.ffn = s.integer("ffn", static_cast<int>(std::clamp<int64_t>(2 * int64_t{c.d}, INT_MIN, INT_MAX)));
    c.norm = parse_enum(kGraphitNorms, s.str("norm", "layer"), "graphit config: encoder.norm");
    c.dropout = s.number("dropout", c.dropout);
    c.kernel = s.boolean("kernel", c.kernel);
    c.degree_scaling = s.boolean("degree_scaling", c.kernel);
    s.finish();
  }
  {
    Section s = section(j, "readout");
    c.pooling = parse_enum(kGraphitPoolings, s.str("pooling", "mean"), "graphit config: readout.pooling");
    c.hidden = s.integer("hidden", c.d);
    s.finish();
  }
  {
    Section s = section(j, "task");
    c.task = parse_enum(kGraphitTasks, s.str("type", "classification"), "graphit config: task.type");
    c.outputs = s.integer("outputs", c.task == GraphitTask::kRegression ? 1 : c.outputs);
    c.class_labels = s.strings("labels");
    s.finish();
  }
  c.validate();
  return c;
}

}  // namespace inductive
