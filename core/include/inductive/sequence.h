// inductive/sequence.h - biological sequences: alphabets and k-mer local features (thesis ch. 2, §1.1); FASTA
// files are read by inductive/fasta.h (method-neutral, included here).
//
// A sequence of length L over an alphabet of size A becomes n = L - k + 1 local features, the one-hot k-mers
// x_i = onehot(s_i .. s_{i+k-1}) in R^{k A}, L2-normalised (every one-hot k-mer has norm sqrt(k), so x_i is the
// one-hot divided by sqrt(k)): the CKN convention the Gaussian kernel on unit vectors expects.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "inductive/error.h"
#include "inductive/fasta.h"
#include "inductive/set_batch.h"

namespace inductive {

class Alphabet {
 public:
  // Letters in index order, e.g. "ACGT"; case-insensitive; letters must be unique printable ASCII.
  explicit Alphabet(const std::string& letters);
  static Alphabet dna();      // "ACGT"
  static Alphabet protein();  // the 20 standard amino acids "ARNDCQEGHILKMFPSTWYV"
  // "dna", "protein" or an explicit letter list ("letters:ACGU").
  static Alphabet from_name(const std::string& name);

  const std::string& letters() const { return letters_; }
  int size() const { return static_cast<int>(letters_.size()); }
  // Index of a letter, -1 when it is not in the alphabet.
  int index(char c) const { return index_[static_cast<unsigned char>(c)]; }
  // The canonical name to store in a model config ("dna", "protein" or "letters:...").
  std::string name() const;

 private:
  std::string letters_;
  std::array<int8_t, 256> index_{};
};

// Letters -> indices. An invalid letter throws kInvalidArgument naming `what`, the position and the letter.
std::vector<int8_t> encode_sequence(const Alphabet& alphabet, const std::string& sequence, const std::string& what);

// One-hot k-mer features of a batch of encoded sequences, as a padded SetBatch of dim k * A. A sequence shorter
// than k throws kInvalidArgument naming it (there is no k-mer to embed).
SetBatch kmer_features(const std::vector<std::vector<int8_t>>& sequences, int alphabet_size, int k,
                       const std::vector<std::string>& names = {});

}  // namespace inductive
