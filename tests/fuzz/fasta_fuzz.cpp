// libFuzzer target: parse_fasta on arbitrary text, then the k-mer encoding OTKE applies to every record (DNA, k 3).
#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/sequence.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  std::vector<inductive::FastaRecord> records;
  try {
    records = inductive::parse_fasta(inductive::fuzz::text(data, size), "fuzz.fa");
  } catch (const inductive::Error&) {
    return 0;
  }
  const inductive::Alphabet dna = inductive::Alphabet::from_name("dna");
  for (const auto& r : records) {
    try {
      const std::vector<int8_t> code = inductive::encode_sequence(dna, r.sequence, r.name);
      if (code.size() != r.sequence.size()) finding("fasta_fuzz", "encoding changed the length");
      for (int8_t c : code)
        if (c < 0 || c >= dna.size()) finding("fasta_fuzz", "a letter code outside the alphabet");
    } catch (const inductive::Error&) {
    }
  }
  return 0;
}
