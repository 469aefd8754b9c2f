// inductive/fasta.h - FASTA files: records of a '>' header line and sequence lines (letters kept as written;
// line breaks and spaces removed; ';' comment lines skipped). Method-neutral: OTKE's sequences (inductive/sequence.h)
// and any other reader use it.
#pragma once

#include <string>
#include <vector>

namespace inductive {

struct FastaRecord {
  std::string name;      // header without '>' (may be empty)
  std::string sequence;  // letters as in the file, line breaks and spaces removed
};

// Parses FASTA text; `what` names the source in messages. Errors (kInvalidArgument): no record, text before the
// first header, a record with an empty sequence (named with its header and line).
std::vector<FastaRecord> parse_fasta(const std::string& text, const std::string& what);
std::vector<FastaRecord> read_fasta(const std::string& path);

}  // namespace inductive
