// FASTA reading and alphabets (see inductive/sequence.h).
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "inductive/sequence.h"
#include "inductive/text_lines.h"

namespace inductive {

Alphabet::Alphabet(const std::string& letters) : letters_(letters) {
  index_.fill(-1);
  INDUCTIVE_CHECK(!letters.empty() && letters.size() <= 64, ErrorCode::kInvalidArgument,
                  "alphabet: expected 1..64 letters: got ", letters.size());
  for (size_t i = 0; i < letters.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(letters[i]);
    INDUCTIVE_CHECK(std::isgraph(c) && c != '>', ErrorCode::kInvalidArgument,
                    "alphabet: letters must be printable ASCII other than '>': got code ", int(c));
    const int upper = std::toupper(c), lower = std::tolower(c);
    INDUCTIVE_CHECK(index_[upper] < 0, ErrorCode::kInvalidArgument, "alphabet: letter '", letters[i],
                    "' appears twice in '", letters, "' (letters are case-insensitive)");
    index_[upper] = index_[lower] = static_cast<int8_t>(i);
  }
}

Alphabet Alphabet::dna() { return Alphabet("ACGT"); }
Alphabet Alphabet::protein() { return Alphabet("ARNDCQEGHILKMFPSTWYV"); }

Alphabet Alphabet::from_name(const std::string& name) {
  if (name == "dna") return dna();
  if (name == "protein") return protein();
  const std::string prefix = "letters:";
  if (name.compare(0, prefix.size(), prefix) == 0) return Alphabet(name.substr(prefix.size()));
  INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "alphabet: unknown alphabet '", name,
                 "': expected dna, protein or letters:<LETTERS>");
}

std::string Alphabet::name() const {
  if (letters_ == "ACGT") return "dna";
  if (letters_ == "ARNDCQEGHILKMFPSTWYV") return "protein";
  return "letters:" + letters_;
}

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
  std::ifstream in(path, std::ios::binary);
  INDUCTIVE_CHECK(in.good(), ErrorCode::kIo, path, ": cannot open FASTA file");
  std::ostringstream buf;
  buf << in.rdbuf();
  INDUCTIVE_CHECK(!in.bad(), ErrorCode::kIo, path, ": read failed");
  return parse_fasta(buf.str(), path);
}

std::vector<int8_t> encode_sequence(const Alphabet& alphabet, const std::string& sequence, const std::string& what) {
  INDUCTIVE_CHECK(!sequence.empty(), ErrorCode::kInvalidArgument, what, ": empty sequence");
  std::vector<int8_t> out(sequence.size());
  for (size_t i = 0; i < sequence.size(); ++i) {
    const int idx = alphabet.index(sequence[i]);
    if (idx < 0) {
      const unsigned char c = static_cast<unsigned char>(sequence[i]);
      char shown[16];
      if (std::isprint(c))
        std::snprintf(shown, sizeof shown, "'%c'", c);
      else
        std::snprintf(shown, sizeof shown, "byte 0x%02x", c);
      INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, what, ": invalid letter ", shown, " at position ", i + 1,
                     ": expected one of ", alphabet.letters(), " (alphabet ", alphabet.name(), ")");
    }
    out[i] = static_cast<int8_t>(idx);
  }
  return out;
}

}  // namespace inductive
