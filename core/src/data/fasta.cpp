// FASTA reading (see inductive/fasta.h).
#include "inductive/fasta.h"

#include <cctype>

#include "inductive/error.h"
#include "inductive/files.h"
#include "inductive/text_lines.h"

namespace inductive {

std::vector<FastaRecord> parse_fasta(const std::string& text, const std::string& what) {
  std::vector<FastaRecord> records;
  std::vector<size_t> header_line;
  LineReader lines(text);
  std::string line;
  while (lines.next(line)) {
    const size_t line_no = lines.number();
    if (line.empty()) continue;
    if (line[0] == '>') {
      size_t b = 1;
      while (b < line.size() && std::isspace(static_cast<unsigned char>(line[b]))) ++b;
      records.push_back({line.substr(b), {}});
      header_line.push_back(line_no);
      continue;
    }
    if (line[0] == ';') continue;  // old-style comment line
    INDUCTIVE_CHECK(!records.empty(), ErrorCode::kInvalidArgument, what, ": line ", line_no,
                    ": sequence data before the first '>' header (is this a FASTA file?)");
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) records.back().sequence.push_back(c);
  }
  INDUCTIVE_CHECK(!records.empty(), ErrorCode::kInvalidArgument, what, ": no FASTA record (expected '>name' lines)");
  for (size_t r = 0; r < records.size(); ++r)
    INDUCTIVE_CHECK(!records[r].sequence.empty(), ErrorCode::kInvalidArgument, what, ": record '", records[r].name,
                    "' (line ", header_line[r], ") has an empty sequence");
  return records;
}

std::vector<FastaRecord> read_fasta(const std::string& path) {
  return parse_fasta(read_file_text(path, "FASTA file"), path);
}

}  // namespace inductive
