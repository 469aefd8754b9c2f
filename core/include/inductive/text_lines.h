// inductive/text_lines.h - line splitting shared by every text reader (FASTA, TSV, LIBSVM, CSV).
#pragma once

#include <string>
#include <vector>

namespace inductive {

// Iterates over the lines of a text ("\n" or "\r\n"), numbering them from 1.
class LineReader {
 public:
  explicit LineReader(const std::string& text) : text_(text) {}
  bool next(std::string& line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string::npos) end = text_.size();
    line.assign(text_, pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pos_ = end + 1;
    ++number_;
    return true;
  }
  size_t number() const { return number_; }

 private:
  const std::string& text_;
  size_t pos_ = 0, number_ = 0;
};

// The fields of one line split at every `delimiter`, as they are (no quoting, no trimming): TSV (GLUE sentences keep
// their quote characters), the TU files and numeric CSV. "a,,b" gives three fields, "" gives one empty field.
std::vector<std::string> split_fields(const std::string& line, char delimiter);

// The fields of one CSV line (RFC 4180 quoting: "a,b" is one field, "" inside quotes is a quote). Quoted fields
// spanning lines are not supported. Throws Error{kInvalidArgument} naming `what` and the line for an unclosed
// quote or text after a closing quote.
std::vector<std::string> split_csv_fields(const std::string& line, char delimiter, const std::string& what,
                                          size_t line_number);

// A comma-separated file with a header line (molecule CSVs: SMILES and label columns), read row by row: columns by
// name, blank lines skipped, fields split with CSV quotes. `what` names the text in messages, which give its line.
class CsvRows {
 public:
  // Reads the header; an empty text is an Error{kInvalidArgument}. `text` must outlive this (it is not copied: a
  // molecule CSV may be hundreds of MB), as for LineReader.
  CsvRows(const std::string& text, std::string what);
  CsvRows(std::string&& text, std::string what) = delete;
  // The index of the header's column `name`; an Error naming the columns there are when none has that name.
  int column(const std::string& name) const;
  const std::vector<std::string>& header() const { return header_; }
  // The next non-blank row's fields (false at the end); line() is its line number.
  bool next(std::vector<std::string>& fields);
  size_t line() const { return lines_.number(); }

 private:
  LineReader lines_;
  std::string what_, text_line_;
  std::vector<std::string> header_;
};

}  // namespace inductive
