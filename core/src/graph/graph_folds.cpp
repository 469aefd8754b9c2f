// GraphiT's 10-fold split files (see inductive/graph.h and graphit-fold-idx/SOURCE.md).
#include <string>

#include "data/text_lines.h"
#include "inductive/error.h"
#include "inductive/graph.h"
#include "inductive/files.h"
#include "inductive/gzip.h"

namespace inductive {

std::vector<int32_t> parse_index_list(const std::string& text, const std::string& what, int n_graphs) {
  std::vector<int32_t> out;
  std::vector<size_t> seen_on(static_cast<size_t>(std::max(n_graphs, 0)), 0);
  detail::LineReader reader(text);
  std::string line;
  while (reader.next(line)) {
    const std::string t = detail::trim(line);
    if (t.empty()) continue;
    long index;
    INDUCTIVE_CHECK(detail::parse_index(t, index), ErrorCode::kInvalidArgument, what, ": line ", reader.number(), ": '",
                    t.substr(0, 40), "' is not a non-negative integer graph index");
    INDUCTIVE_CHECK(index < n_graphs, ErrorCode::kInvalidArgument, what, ": line ", reader.number(), ": graph index ",
                    index, " is out of range: expected 0..", n_graphs - 1, " (the dataset has ", n_graphs, " graphs)");
    INDUCTIVE_CHECK(seen_on[index] == 0, ErrorCode::kInvalidArgument, what, ": line ", reader.number(),
                    ": graph index ", index, " repeats line ", seen_on[index], ": expected unique indices");
    seen_on[index] = reader.number();
    out.push_back(static_cast<int32_t>(index));
  }
  INDUCTIVE_CHECK(!out.empty(), ErrorCode::kInvalidArgument, what, ": no index: expected one graph index per line");
  return out;
}

std::vector<GraphFold> read_graphit_folds(const std::string& dir, int n_graphs, int n_folds) {
  INDUCTIVE_CHECK(n_graphs >= 1, ErrorCode::kInvalidArgument, "graphit folds: the dataset has ", n_graphs,
                  " graphs: expected >= 1");
  INDUCTIVE_CHECK(n_folds >= 1, ErrorCode::kInvalidArgument, "graphit folds: n_folds is ", n_folds, ": expected >= 1");
  auto read = [&](const std::string& path) {
    const auto bytes = read_dataset_bytes(path);
    return parse_index_list(std::string(bytes.begin(), bytes.end()), path, n_graphs);
  };
  std::vector<GraphFold> folds(n_folds);
  for (int k = 1; k <= n_folds; ++k) {
    const std::string kk = std::to_string(k);
    GraphFold& f = folds[k - 1];
    const std::string test_path = dir + "/test_idx-" + kk + ".txt";
    f.test = read(test_path);
    f.train = read(dir + "/inner_folds/train_idx-" + kk + "-1.txt");
    f.val = read(dir + "/inner_folds/val_idx-" + kk + "-1.txt");
    // train, val, test must partition the dataset: a graph in two lists leaks test data into training.
    std::vector<int8_t> owner(n_graphs, -1);
    const char* names[3] = {"train", "val", "test"};
    const std::vector<int32_t>* lists[3] = {&f.train, &f.val, &f.test};
    for (int s = 0; s < 3; ++s)
      for (int32_t i : *lists[s]) {
        INDUCTIVE_CHECK(owner[i] < 0, ErrorCode::kInvalidArgument, "graphit folds: ", dir, ": fold ", k, ": graph ", i,
                        " is in both ", names[owner[i]], " and ", names[s], ": expected disjoint train/val/test");
        owner[i] = static_cast<int8_t>(s);
      }
    const size_t covered = f.train.size() + f.val.size() + f.test.size();
    INDUCTIVE_CHECK(covered == static_cast<size_t>(n_graphs), ErrorCode::kInvalidArgument, "graphit folds: ", dir,
                    ": fold ", k, ": train/val/test cover ", covered, " graphs, expected all ", n_graphs,
                    " (wrong dataset for these folds?)");
  }
  return folds;
}

}  // namespace inductive
