// inductive/tokens.h - text as sets of tokens for OTKE (input type "tokens", e.g. SST-2 sentences).
//
// Tokeniser (deterministic, byte-based, identical in the native and wasm builds):
//   1. with `lowercase`, ASCII A-Z become a-z (other bytes, UTF-8 included, are kept as they are);
//   2. the text is split on ASCII whitespace (space, \t, \n, \r, \v, \f) into chunks;
//   3. a chunk made only of ASCII punctuation ("...", "--", "``") is one token; any other chunk gives its leading
//      and its trailing punctuation characters one token each and keeps its inner part whole ("good." -> "good" ".",
//      "(great)" -> "(" "great" ")", "co-star" and "n't" stay whole). A leading apostrophe followed by a letter or
//      digit is not peeled, so the PTB clitics of GLUE text ("'s", "'re", "'ll", "'90s") stay whole.
// On PTB-tokenised text (GLUE SST-2: tokens already separated by spaces) this is almost whitespace splitting.
//
// Vocabulary: index 0 is "<unk>" (every token not in the vocabulary maps to it); the other tokens are those seen at
// least `min_count` times in the training text, most frequent first (ties by byte order), at most `max_size`
// entries in all. There is no padding token: sets of different lengths are padded by SetBatch lengths.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace inductive {

inline constexpr const char* kUnknownToken = "<unk>";

// The tokens of `text` (possibly none, e.g. for an empty or all-space text).
std::vector<std::string> tokenize(const std::string& text, bool lowercase);

struct VocabularyOptions {
  int min_count = 1;       // tokens seen fewer times map to <unk>
  int max_size = 1 << 20;  // entries including <unk>
  bool lowercase = true;
  void validate() const;
};

class Vocabulary {
 public:
  Vocabulary() = default;
  // tokens[0] must be "<unk>"; tokens must be unique, non-empty and free of whitespace (what tokenize() can make).
  // Throws kInvalidArgument naming the first bad entry.
  Vocabulary(std::vector<std::string> tokens, bool lowercase);

  // Counts the tokens of `texts` and keeps the frequent ones (see the header comment).
  static Vocabulary build(const std::vector<std::string>& texts, const VocabularyOptions& options);

  int size() const { return static_cast<int>(tokens_.size()); }
  bool lowercase() const { return lowercase_; }
  const std::vector<std::string>& tokens() const { return tokens_; }
  // Index of a token, 0 (<unk>) when absent.
  int32_t index(const std::string& token) const;
  // Token indices of a text (empty when the text has no token).
  std::vector<int32_t> encode(const std::string& text) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> index_;
  bool lowercase_ = true;
};

}  // namespace inductive
