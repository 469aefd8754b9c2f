// LIBSVM / svmlight reader (see inductive/feature_table.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "inductive/error.h"
#include "inductive/feature_table.h"
#include "inductive/gzip.h"
#include "data/text_lines.h"

namespace inductive {

FeatureTable parse_libsvm(const std::string& text, const LibsvmOptions& options, const std::string& what) {
  INDUCTIVE_CHECK(options.n_features >= 0, ErrorCode::kInvalidArgument, what, ": n_features must be >= 0: got ",
                  options.n_features);
  std::vector<int64_t> ptr(1, 0);
  std::vector<int32_t> col;
  std::vector<float> val;
  std::vector<double> y;
  std::vector<std::pair<long, double>> row;
  long max_index = -1, min_index = -1;
  size_t max_line = 0, zero_line = 0;
  detail::LineReader lines(text);
  std::string line;
  while (lines.next(line)) {
    const size_t ln = lines.number();
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t pos = 0;
    auto next_token = [&](std::string& tok) {
      while (pos < line.size() && detail::is_space(line[pos])) ++pos;
      const size_t start = pos;
      while (pos < line.size() && !detail::is_space(line[pos])) ++pos;
      tok.assign(line, start, pos - start);
      return !tok.empty();
    };
    std::string tok;
    if (!next_token(tok)) continue;  // blank or comment-only line
    double label;
    INDUCTIVE_CHECK(detail::parse_double(tok, label), ErrorCode::kInvalidArgument, what, ": line ", ln, ": label '",
                    tok, "' is not a finite number");
    row.clear();
    while (next_token(tok)) {
      if (tok.compare(0, 4, "qid:") == 0) continue;
      const size_t colon = tok.find(':');
      INDUCTIVE_CHECK(colon != std::string::npos, ErrorCode::kInvalidArgument, what, ": line ", ln, ": feature '", tok,
                      "' is not index:value");
      long index;
      double value;
      if (!detail::parse_index(tok.substr(0, colon), index)) {
        const std::string text = tok.substr(0, colon);
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, what, ": line ", ln, ": feature index '", text,
                       digits ? "' is too large: indices go up to 2147483646 (feature counts are 32-bit integers)"
                              : "' is not a non-negative integer");
      }
      INDUCTIVE_CHECK(detail::parse_double(tok.substr(colon + 1), value), ErrorCode::kInvalidArgument, what, ": line ",
                      ln, ": value '", tok.substr(colon + 1), "' of feature ", index, " is not a finite number");
      // Values are stored as float32: a larger one would become infinite, silently.
      INDUCTIVE_CHECK(std::fabs(value) <= std::numeric_limits<float>::max(), ErrorCode::kInvalidArgument, what,
                      ": line ", ln, ": value '", tok.substr(colon + 1), "' of feature ", index,
                      " is beyond float32's range (", std::numeric_limits<float>::max(), ")");
      row.emplace_back(index, value);
    }
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t k = 0; k < row.size(); ++k) {
      INDUCTIVE_CHECK(k == 0 || row[k].first != row[k - 1].first, ErrorCode::kInvalidArgument, what, ": line ", ln,
                      ": feature index ", row[k].first, " appears twice");
      if (row[k].first > max_index) {
        max_index = row[k].first;
        max_line = ln;
      }
      if (min_index < 0 || row[k].first < min_index) {
        min_index = row[k].first;
        if (min_index == 0) zero_line = ln;
      }
      if (row[k].second == 0.0) continue;
      col.push_back(static_cast<int32_t>(row[k].first));
      val.push_back(static_cast<float>(row[k].second));
    }
    ptr.push_back(static_cast<int64_t>(val.size()));
    y.push_back(label);
  }
  INDUCTIVE_CHECK(!y.empty(), ErrorCode::kInvalidArgument, what, ": no sample (every line is blank or a comment)");
  const bool zero_based =
      options.index_base == IndexBase::kZero || (options.index_base == IndexBase::kAuto && min_index == 0);
  INDUCTIVE_CHECK(zero_based || min_index != 0, ErrorCode::kInvalidArgument, what, ": line ", zero_line,
                  ": feature index 0 in a 1-based file (use index base 0 or auto)");
  if (!zero_based)
    for (auto& c : col) --c;
  const long dim = max_index < 0 ? 0 : (zero_based ? max_index + 1 : max_index);
  int n_features = static_cast<int>(dim);
  if (options.n_features > 0) {
    INDUCTIVE_CHECK(dim <= options.n_features, ErrorCode::kInvalidArgument, what, ": line ", max_line,
                    ": feature index ", max_index, " exceeds the declared dimension: got ", dim,
                    " features, expected at most ", options.n_features);
    n_features = options.n_features;
  }
  INDUCTIVE_CHECK(n_features > 0, ErrorCode::kInvalidArgument, what,
                  ": no feature in any sample (declare n_features to read label-only data)");
  FeatureTable t;
  t.sparse = true;
  t.csr.rows = static_cast<int>(y.size());
  t.csr.cols = n_features;
  t.csr.row_ptr = std::move(ptr);
  t.csr.col = std::move(col);
  t.csr.val = std::move(val);
  t.y = std::move(y);
  if (options.dense) {
    t.dense = t.csr.to_dense();
    t.csr = SparseRows{};
    t.sparse = false;
  }
  return t;
}

MatF SparseRows::to_dense() const {
  MatF d = MatF::Zero(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) d(i, col[k]) = val[k];
  return d;
}

FeatureTable read_libsvm(const std::string& path, const LibsvmOptions& options) {
  const auto bytes = read_dataset_bytes(path);
  return parse_libsvm(std::string(bytes.begin(), bytes.end()), options, path);
}

}  // namespace inductive
