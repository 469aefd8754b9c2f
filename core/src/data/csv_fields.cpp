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

}  // namespace inductive
