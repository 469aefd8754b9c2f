// Field splitting, plain and with CSV quotes (see inductive/text_lines.h).
#include <string>
#include <vector>

#include "inductive/error.h"
#include "inductive/text_lines.h"

namespace inductive {

std::vector<std::string> split_fields(const std::string& line, char delimiter) {
  std::vector<std::string> fields;
  size_t begin = 0;
  for (size_t end; (end = line.find(delimiter, begin)) != std::string::npos; begin = end + 1)
    fields.push_back(line.substr(begin, end - begin));
  fields.push_back(line.substr(begin));
  return fields;
}

std::vector<std::string> split_csv_fields(const std::string& line, char delimiter, const std::string& what,
                                          size_t line_number) {
  std::vector<std::string> fields(1);
  size_t i = 0;
  bool at_field_start = true;
  while (i < line.size()) {
    const char c = line[i];
    if (at_field_start && c == '"') {
      ++i;
      for (;;) {
        INDUCTIVE_CHECK(i < line.size(), ErrorCode::kInvalidArgument, what, ": line ", line_number,
                        ": a quoted field is not closed");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            fields.back() += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        fields.back() += line[i++];
      }
      INDUCTIVE_CHECK(i == line.size() || line[i] == delimiter, ErrorCode::kInvalidArgument, what, ": line ",
                      line_number, ": text after a closing quote: got '", line.substr(i, 10), "'");
      at_field_start = false;
      continue;
    }
    if (c == delimiter) {
      fields.emplace_back();
      at_field_start = true;
    } else {
      fields.back() += c;
      at_field_start = false;
    }
    ++i;
  }
  return fields;
}

CsvRows::CsvRows(const std::string& text, std::string what) : lines_(text), what_(std::move(what)) {
  INDUCTIVE_CHECK(lines_.next(text_line_), ErrorCode::kInvalidArgument, what_,
                  ": empty file (a header line is needed)");
  header_ = split_csv_fields(text_line_, ',', what_, 1);
}

int CsvRows::column(const std::string& name) const {
  for (size_t k = 0; k < header_.size(); ++k)
    if (header_[k] == name) return static_cast<int>(k);
  std::string names;
  for (const auto& h : header_) names += (names.empty() ? "" : ", ") + h;
  INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, what_, ": no column '", name, "' in the header (its columns: ", names,
                 ")");
}

bool CsvRows::next(std::vector<std::string>& fields) {
  while (lines_.next(text_line_)) {
    if (text_line_.empty()) continue;
    fields = split_csv_fields(text_line_, ',', what_, lines_.number());
    return true;
  }
  return false;
}

}  // namespace inductive
