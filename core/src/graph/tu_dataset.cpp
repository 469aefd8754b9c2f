// TU benchmark text-format reader (see inductive/graph.h and the README.txt of each TU dataset).
#include <algorithm>
#include <iterator>
#include <map>

#include "data/text_lines.h"
#include "inductive/error.h"
#include "inductive/graph.h"
#include "inductive/files.h"
#include "inductive/gzip.h"

namespace inductive {

namespace {

struct Line {
  size_t number;
  std::string text;  // trimmed, non-empty
};

// The non-blank lines of a one-record-per-line file. Trailing blank lines are fine (a final newline, an editor's
// extra one); a blank line followed by data would shift every later record, so it is an error.
std::vector<Line> records(const std::string& text, const std::string& what) {
  std::vector<Line> out;
  detail::LineReader reader(text);
  std::string line;
  size_t blank = 0;
  while (reader.next(line)) {
    std::string t = detail::trim(line);
    if (t.empty()) {
      if (blank == 0) blank = reader.number();
      continue;
    }
    INDUCTIVE_CHECK(blank == 0, ErrorCode::kInvalidArgument, what, ": line ", blank,
                    ": blank line before more records: expected one record per line");
    out.push_back({reader.number(), std::move(t)});
  }
  return out;
}

// A whole-token integer (optional sign), fitting in int64.
bool parse_int(const std::string& token, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (i < token.size() && (token[i] == '-' || token[i] == '+')) negative = token[i++] == '-';
  if (i == token.size() || token.size() - i > 18) return false;
  int64_t v = 0;
  for (; i < token.size(); ++i) {
    if (token[i] < '0' || token[i] > '9') return false;
    v = v * 10 + (token[i] - '0');
  }
  out = negative ? -v : v;
  return true;
}

int64_t integer_record(const Line& l, const std::string& what, const char* noun) {
  int64_t v;
  INDUCTIVE_CHECK(parse_int(l.text, v), ErrorCode::kInvalidArgument, what, ": line ", l.number, ": ", noun, " '",
                  l.text.substr(0, 40), "' is not an integer");
  return v;
}

// Sorted distinct values and each value's index among them.
std::vector<int64_t> vocabulary(const std::vector<int64_t>& values) {
  std::vector<int64_t> v = values;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}
int32_t index_of(const std::vector<int64_t>& vocab, int64_t value) {
  return static_cast<int32_t>(std::lower_bound(vocab.begin(), vocab.end(), value) - vocab.begin());
}

std::string read_text(const std::string& path) {
  const auto bytes = read_dataset_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

GraphDataset parse_tu_dataset(const TuTexts& texts, const std::string& name) {
  const std::string f_ind = name + "_graph_indicator.txt", f_a = name + "_A.txt", f_gl = name + "_graph_labels.txt",
                    f_nl = name + "_node_labels.txt", f_na = name + "_node_attributes.txt";
  // Graph indicator: graph id of each node, 1, 1, ..., 2, ... with no gap (a graph without nodes) and no return.
  const std::vector<Line> ind = records(texts.graph_indicator, f_ind);
  INDUCTIVE_CHECK(!ind.empty(), ErrorCode::kInvalidArgument, f_ind, ": no node: expected one graph id per node");
  INDUCTIVE_CHECK(ind.size() < (1u << 31), ErrorCode::kInvalidArgument, f_ind, ": too many nodes: got ", ind.size());
  const int64_t n = static_cast<int64_t>(ind.size());
  std::vector<int32_t> graph_of(n), local_of(n);
  std::vector<int32_t> first_node;  // global 0-based id of each graph's first node
  int64_t current = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t gid = integer_record(ind[i], f_ind, "graph id");
    // The first node opens graph 1 (a first id of 0 used to pass as "the current graph" without opening one).
    INDUCTIVE_CHECK(i > 0 || gid == 1, ErrorCode::kInvalidArgument, f_ind, ": line ", ind[i].number, ": graph id ", gid,
                    ": expected 1 (graphs numbered from 1 in order)");
    if (gid != current) {
      INDUCTIVE_CHECK(gid == current + 1, ErrorCode::kInvalidArgument, f_ind, ": line ", ind[i].number, ": graph id ",
                      gid, " after ", current, ": expected ", current, " or ", current + 1,
                      " (graphs numbered from 1 in order, each with at least one node)");
      current = gid;
      first_node.push_back(static_cast<int32_t>(i));
    }
    graph_of[i] = static_cast<int32_t>(gid - 1);
    local_of[i] = static_cast<int32_t>(i - first_node.back());
  }
  const int n_graphs = static_cast<int>(first_node.size());
  std::vector<int> sizes(n_graphs);
  for (int g = 0; g < n_graphs; ++g)
    sizes[g] = static_cast<int>((g + 1 < n_graphs ? first_node[g + 1] : n) - first_node[g]);

  // Graph labels.
  const std::vector<Line> gl = records(texts.graph_labels, f_gl);
  INDUCTIVE_CHECK(static_cast<int>(gl.size()) == n_graphs, ErrorCode::kInvalidArgument, f_gl, ": got ", gl.size(),
                  " graph labels, expected ", n_graphs, " (the number of graphs in ", f_ind, ")");
  std::vector<int64_t> graph_values(n_graphs);
  for (int g = 0; g < n_graphs; ++g) graph_values[g] = integer_record(gl[g], f_gl, "graph label");

  // Node labels (optional).
  std::vector<int64_t> node_values(n, 0);
  if (!texts.node_labels.empty()) {
    const std::vector<Line> nl = records(texts.node_labels, f_nl);
    INDUCTIVE_CHECK(static_cast<int64_t>(nl.size()) == n, ErrorCode::kInvalidArgument, f_nl, ": got ", nl.size(),
                    " node labels, expected ", n, " (the number of nodes in ", f_ind, ")");
    for (int64_t i = 0; i < n; ++i) node_values[i] = integer_record(nl[i], f_nl, "node label");
  }

  // Node attributes (optional): comma-separated floats, the same count on every line.
  MatF attributes;
  if (!texts.node_attributes.empty()) {
    const std::vector<Line> na = records(texts.node_attributes, f_na);
    INDUCTIVE_CHECK(static_cast<int64_t>(na.size()) == n, ErrorCode::kInvalidArgument, f_na, ": got ", na.size(),
                    " lines, expected ", n, " (one per node)");
    std::vector<float> row;
    for (int64_t i = 0; i < n; ++i) {
      row.clear();
      for (const std::string& field : split_fields(na[i].text, ',')) {
        const std::string tok = detail::trim(field);
        double v;
        INDUCTIVE_CHECK(detail::parse_double(tok, v), ErrorCode::kInvalidArgument, f_na, ": line ", na[i].number,
                        ": attribute ", row.size() + 1, " '", tok.substr(0, 40), "' is not a finite number");
        row.push_back(static_cast<float>(v));
      }
      if (i == 0) attributes.resize(n, static_cast<Eigen::Index>(row.size()));
      INDUCTIVE_CHECK(static_cast<Eigen::Index>(row.size()) == attributes.cols(), ErrorCode::kInvalidArgument, f_na,
                      ": line ", na[i].number, ": got ", row.size(), " attributes, expected ", attributes.cols(),
                      " (as on line ", na[0].number, ")");
      for (size_t j = 0; j < row.size(); ++j) attributes(i, static_cast<Eigen::Index>(j)) = row[j];
    }
  }

  // Edges: "row, col", 1-based global ids, both ends in one graph.
  std::vector<std::vector<std::array<int32_t, 2>>> pairs(n_graphs);
  for (const Line& l : records(texts.a, f_a)) {
    const std::vector<std::string> fields = split_fields(l.text, ',');
    INDUCTIVE_CHECK(fields.size() == 2, ErrorCode::kInvalidArgument, f_a, ": line ", l.number, ": '",
                    l.text.substr(0, 40), "' is not 'row, col'");
    int64_t ends[2];
    const std::string toks[2] = {detail::trim(fields[0]), detail::trim(fields[1])};
    for (int k = 0; k < 2; ++k) {
      INDUCTIVE_CHECK(parse_int(toks[k], ends[k]), ErrorCode::kInvalidArgument, f_a, ": line ", l.number, ": node id '",
                      toks[k].substr(0, 40), "' is not an integer");
      INDUCTIVE_CHECK(ends[k] >= 1 && ends[k] <= n, ErrorCode::kInvalidArgument, f_a, ": line ", l.number, ": node id ",
                      ends[k], " is out of range: expected 1..", n, " (the nodes of ", f_ind, ")");
    }
    const int32_t u = static_cast<int32_t>(ends[0] - 1), v = static_cast<int32_t>(ends[1] - 1);
    INDUCTIVE_CHECK(graph_of[u] == graph_of[v], ErrorCode::kInvalidArgument, f_a, ": line ", l.number, ": edge (",
                    ends[0], ", ", ends[1], ") joins graph ", graph_of[u] + 1, " and graph ", graph_of[v] + 1,
                    ": expected both ends in one graph");
    pairs[graph_of[u]].push_back({local_of[u], local_of[v]});
  }

  GraphDataset ds;
  ds.name = name;
  ds.node_label_values = vocabulary(node_values);
  ds.class_values = vocabulary(graph_values);
  ds.node_attribute_dim = static_cast<int>(attributes.cols());
  ds.graphs.reserve(n_graphs);
  for (int g = 0; g < n_graphs; ++g) {
    std::vector<int32_t> labels(sizes[g]);
    for (int i = 0; i < sizes[g]; ++i) labels[i] = index_of(ds.node_label_values, node_values[first_node[g] + i]);
    Graph graph = Graph::from_edges(sizes[g], pairs[g], std::move(labels));
    if (attributes.size() > 0) graph.node_attributes = attributes.middleRows(first_node[g], sizes[g]);
    graph.label = index_of(ds.class_values, graph_values[g]);
    ds.graphs.push_back(std::move(graph));
  }
  return ds;
}

GraphDataset read_tu_dataset(const std::string& dir, const std::string& name) {
  const std::string prefix = dir + "/" + name + "_";
  TuTexts texts;
  texts.a = read_text(prefix + "A.txt");
  texts.graph_indicator = read_text(prefix + "graph_indicator.txt");
  texts.graph_labels = read_text(prefix + "graph_labels.txt");
  if (dataset_file_exists(prefix + "node_labels.txt")) texts.node_labels = read_text(prefix + "node_labels.txt");
  if (dataset_file_exists(prefix + "node_attributes.txt"))
    texts.node_attributes = read_text(prefix + "node_attributes.txt");
  return parse_tu_dataset(texts, name);
}

}  // namespace inductive
