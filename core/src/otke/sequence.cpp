// Alphabets and sequence encoding (see inductive/sequence.h).
#include <cctype>
#include <cstdio>

#include "inductive/sequence.h"

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
