// CSV reader (see inductive/feature_table.h).
#include "data/text_lines.h"
#include "inductive/error.h"
#include "inductive/feature_table.h"
#include "inductive/gzip.h"

namespace inductive {

FeatureTable parse_csv(const std::string& text, const CsvOptions& options, const std::string& what) {
  INDUCTIVE_CHECK(options.delimiter != '\n' && options.delimiter != '\r' && options.delimiter != '"',
                  ErrorCode::kInvalidArgument, what, ": delimiter cannot be a newline or a quote");
  std::vector<float> values;
  std::vector<double> y;
  int columns = -1, label = -1;
  size_t rows = 0;
  detail::LineReader lines(text);
  std::string line;
  std::vector<std::string> fields;
  bool skipped_header = !options.header;
  while (lines.next(line)) {
    const size_t ln = lines.number();
    if (detail::trim(line).empty()) continue;
    if (!skipped_header) {
      skipped_header = true;
      continue;
    }
    fields = split_fields(line, options.delimiter);
    for (std::string& f : fields) f = detail::trim(f);
    if (columns < 0) {
      columns = static_cast<int>(fields.size());
      if (options.has_label) {
        label = options.label_column < 0 ? columns + options.label_column : options.label_column;
        INDUCTIVE_CHECK(label >= 0 && label < columns, ErrorCode::kInvalidArgument, what, ": label column ",
                        options.label_column, " out of range for ", columns, " columns");
        INDUCTIVE_CHECK(columns >= 2, ErrorCode::kInvalidArgument, what, ": line ", ln,
                        ": a label column and no feature column");
      }
    }
    INDUCTIVE_CHECK(static_cast<int>(fields.size()) == columns, ErrorCode::kInvalidArgument, what, ": line ", ln,
                    ": got ", fields.size(), " columns, expected ", columns, " (as on the first data line)");
    for (int c = 0; c < columns; ++c) {
      double v;
      INDUCTIVE_CHECK(detail::parse_double(fields[c], v), ErrorCode::kInvalidArgument, what, ": line ", ln, ", column ",
                      c + 1, ": '", fields[c], "' is not a finite number");
      if (c == label)
        y.push_back(v);
      else
        values.push_back(static_cast<float>(v));
    }
    ++rows;
  }
  INDUCTIVE_CHECK(rows > 0, ErrorCode::kInvalidArgument, what, ": no data line");
  const int p = columns - (options.has_label ? 1 : 0);
  FeatureTable t;
  t.dense = Eigen::Map<MatF>(values.data(), static_cast<Eigen::Index>(rows), p);
  t.y = std::move(y);
  return t;
}

FeatureTable read_csv(const std::string& path, const CsvOptions& options) {
  const auto bytes = read_dataset_bytes(path);
  return parse_csv(std::string(bytes.begin(), bytes.end()), options, path);
}

}  // namespace inductive
