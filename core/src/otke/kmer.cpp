// One-hot k-mer local features (see inductive/sequence.h).
#include <algorithm>
#include <cmath>

#include "inductive/sequence.h"

namespace inductive {

SetBatch kmer_features(const std::vector<std::vector<int8_t>>& sequences, int alphabet_size, int k,
                       const std::vector<std::string>& names) {
  INDUCTIVE_CHECK(k >= 1 && k <= 64, ErrorCode::kInvalidArgument, "k-mers: k must be in 1..64: got ", k);
  INDUCTIVE_CHECK(alphabet_size >= 1 && alphabet_size <= 64, ErrorCode::kInvalidArgument,
                  "k-mers: alphabet size must be in 1..64: got ", alphabet_size);
  INDUCTIVE_CHECK(!sequences.empty(), ErrorCode::kInvalidArgument, "k-mers: no sequence given");
  int longest = 0;
  for (size_t s = 0; s < sequences.size(); ++s) {
    const int len = static_cast<int>(sequences[s].size());
    INDUCTIVE_CHECK(len >= k, ErrorCode::kInvalidArgument, "k-mers: sequence ",
                    (s < names.size() ? "'" + names[s] + "'" : std::to_string(s)), " is shorter than k: got length ",
                    len, ", expected >= ", k);
    longest = std::max(longest, len - k + 1);
  }
  const int dim = k * alphabet_size;
  SetBatch out(static_cast<int>(sequences.size()), longest, dim);
  const float value = static_cast<float>(1.0 / std::sqrt(static_cast<double>(k)));  // unit-norm k-mers
  for (size_t s = 0; s < sequences.size(); ++s) {
    const auto& seq = sequences[s];
    const int n = static_cast<int>(seq.size()) - k + 1;
    out.n[s] = n;
    for (int i = 0; i < n; ++i) {
      float* row = out.row(static_cast<int>(s), i);
      for (int t = 0; t < k; ++t) {
        const int letter = seq[i + t];
        INDUCTIVE_CHECK(letter >= 0 && letter < alphabet_size, ErrorCode::kInvalidArgument, "k-mers: letter index ",
                        letter, " out of range for an alphabet of ", alphabet_size);
        row[t * alphabet_size + letter] = value;
      }
    }
  }
  return out;
}

}  // namespace inductive
