// GLUE TSV and label<TAB>sequence tables (see inductive/text_samples.h).
#include "inductive/text_samples.h"

#include <algorithm>
#include <cctype>

#include "inductive/error.h"
#include "inductive/text_lines.h"

namespace inductive {

namespace {

std::string line_name(const std::string& source, size_t line) { return source + " line " + std::to_string(line); }

}  // namespace

void index_labels(const std::vector<std::string>& label_of_sample, TextSamples& out) {
  out.class_names = label_of_sample;
  std::sort(out.class_names.begin(), out.class_names.end());
  out.class_names.erase(std::unique(out.class_names.begin(), out.class_names.end()), out.class_names.end());
  out.labels.clear();
  out.labels.reserve(label_of_sample.size());
  for (const std::string& l : label_of_sample)
    out.labels.push_back(static_cast<int32_t>(std::lower_bound(out.class_names.begin(), out.class_names.end(), l) -
                                              out.class_names.begin()));
}

TextSamples parse_glue_tsv(const std::string& text, const std::string& source, bool labelled) {
  LineReader lines(text);
  std::string line;
  while (lines.next(line) && line.empty()) {
  }
  INDUCTIVE_CHECK(!line.empty(), ErrorCode::kInvalidArgument, source, ": empty file (expected a header line ",
                  labelled ? "'sentence<TAB>label'" : "naming a 'sentence' column", ")");
  const std::vector<std::string> header = split_fields(line, '\t');
  const size_t header_line = lines.number();
  int sentence_col = -1, label_col = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    for (size_t d = 0; d < c; ++d)
      INDUCTIVE_CHECK(header[d] != header[c], ErrorCode::kInvalidArgument, source, ": line ", header_line, ": column '",
                      header[c], "' appears twice in the header");
    if (header[c] == "sentence") sentence_col = static_cast<int>(c);
    if (header[c] == "label") label_col = static_cast<int>(c);
  }
  INDUCTIVE_CHECK(sentence_col >= 0, ErrorCode::kInvalidArgument, source, ": line ", header_line,
                  ": the header has no 'sentence' column (expected a GLUE header such as 'sentence<TAB>label'): got '",
                  line, "'");
  INDUCTIVE_CHECK(!labelled || label_col >= 0, ErrorCode::kInvalidArgument, source, ": line ", header_line,
                  ": the header has no 'label' column (expected 'sentence<TAB>label'): got '", line, "'");
  TextSamples out;
  std::vector<std::string> label_of_sample;
  while (lines.next(line)) {
    const size_t line_no = lines.number();
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_fields(line, '\t');
    INDUCTIVE_CHECK(fields.size() == header.size(), ErrorCode::kInvalidArgument, source, ": line ", line_no,
                    ": expected ", header.size(), " tab-separated fields (as the header), got ", fields.size());
    const std::string& sentence = fields[sentence_col];
    INDUCTIVE_CHECK(sentence.find_first_not_of(" \t\r\n\v\f") != std::string::npos, ErrorCode::kInvalidArgument, source,
                    ": line ", line_no, ": empty sentence");
    if (labelled) {
      const std::string& label = fields[label_col];
      INDUCTIVE_CHECK(!label.empty() && label.find_first_of(" \v\f") == std::string::npos, ErrorCode::kInvalidArgument,
                      source, ": line ", line_no,
                      label.empty() ? ": missing label" : ": label contains a space: got '" + label + "'");
      label_of_sample.push_back(label);
    }
    out.samples.push_back(sentence);
    out.names.push_back(line_name(source, line_no));
  }
  INDUCTIVE_CHECK(!out.samples.empty(), ErrorCode::kInvalidArgument, source, ": no sentence after the header");
  if (labelled) index_labels(label_of_sample, out);
  return out;
}

TextSamples parse_labelled_sequences_tsv(const std::string& text, const std::string& source) {
  TextSamples out;
  std::vector<std::string> label_of_sample;
  LineReader lines(text);
  std::string line;
  while (lines.next(line)) {
    const size_t line_no = lines.number();
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    INDUCTIVE_CHECK(tab != std::string::npos, ErrorCode::kInvalidArgument, source, ": line ", line_no,
                    ": expected label<TAB>sequence, found no tab");
    INDUCTIVE_CHECK(tab > 0, ErrorCode::kInvalidArgument, source, ": line ", line_no, ": empty label");
    // Whitespace is layout, never a letter: a stray CR or form feed would otherwise become a one-letter sequence.
    std::string sequence;
    for (size_t i = tab + 1; i < line.size(); ++i)
      if (!std::isspace(static_cast<unsigned char>(line[i]))) sequence.push_back(line[i]);
    INDUCTIVE_CHECK(!sequence.empty(), ErrorCode::kInvalidArgument, source, ": line ", line_no, ": empty sequence");
    label_of_sample.push_back(line.substr(0, tab));
    out.samples.push_back(std::move(sequence));
    out.names.push_back(line_name(source, line_no));
  }
  INDUCTIVE_CHECK(!out.samples.empty(), ErrorCode::kInvalidArgument, source,
                  ": no sample (expected lines label<TAB>sequence)");
  index_labels(label_of_sample, out);
  return out;
}

}  // namespace inductive
