// Tokeniser and vocabulary for OTKE on text (see inductive/tokens.h).
#include "inductive/tokens.h"

#include <algorithm>

#include "inductive/error.h"

namespace inductive {

namespace {

// Locale-independent ASCII classes (std::isspace etc. depend on the C locale and on the sign of char).
bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_alnum(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
// Printable ASCII that is neither a letter, a digit nor a space.
bool is_punct(unsigned char c) { return c > ' ' && c < 127 && !is_alnum(c); }

void split_chunk(const std::string& chunk, std::vector<std::string>& out) {
  const size_t n = chunk.size();
  const auto at = [&](size_t i) { return static_cast<unsigned char>(chunk[i]); };
  bool all_punct = true;
  for (size_t i = 0; i < n && all_punct; ++i) all_punct = is_punct(at(i));
  if (all_punct) {
    out.push_back(chunk);
    return;
  }
  size_t begin = 0, end = n;
  // A leading apostrophe directly followed by a letter or digit starts a clitic ("'s", "'90s"): keep it.
  while (begin < end && is_punct(at(begin)) && !(at(begin) == '\'' && begin + 1 < end && is_alnum(at(begin + 1))))
    out.emplace_back(1, chunk[begin++]);
  size_t trail = end;
  while (trail > begin && is_punct(at(trail - 1))) --trail;
  if (trail > begin) out.push_back(chunk.substr(begin, trail - begin));
  for (size_t i = trail; i < end; ++i) out.emplace_back(1, chunk[i]);
}

}  // namespace

std::vector<std::string> tokenize(const std::string& text, bool lowercase) {
  std::vector<std::string> out;
  std::string chunk;
  for (size_t i = 0; i <= text.size(); ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (is_space(c)) {
      if (!chunk.empty()) split_chunk(chunk, out);
      chunk.clear();
    } else {
      chunk.push_back(lowercase && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
    }
  }
  return out;
}

void VocabularyOptions::validate() const {
  INDUCTIVE_CHECK(min_count >= 1, ErrorCode::kInvalidArgument, "vocabulary: min_count must be >= 1: got ", min_count);
  INDUCTIVE_CHECK(max_size >= 2 && max_size <= (1 << 20), ErrorCode::kInvalidArgument,
                  "vocabulary: max_size must be in 2..2^20 (<unk> and at least one token): got ", max_size);
}

Vocabulary::Vocabulary(std::vector<std::string> tokens, bool lowercase)
    : tokens_(std::move(tokens)), lowercase_(lowercase) {
  INDUCTIVE_CHECK(!tokens_.empty() && tokens_[0] == kUnknownToken, ErrorCode::kInvalidArgument,
                  "vocabulary: entry 0 must be '", kUnknownToken, "'");
  index_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& t = tokens_[i];
    INDUCTIVE_CHECK(!t.empty(), ErrorCode::kInvalidArgument, "vocabulary: entry ", i, " is empty");
    for (char c : t)
      INDUCTIVE_CHECK(!is_space(static_cast<unsigned char>(c)), ErrorCode::kInvalidArgument, "vocabulary: entry ", i,
                      " ('", t, "') contains whitespace; tokens never do");
    INDUCTIVE_CHECK(index_.emplace(t, static_cast<int32_t>(i)).second, ErrorCode::kInvalidArgument,
                    "vocabulary: entry ", i, " ('", t, "') repeats entry ", index_.at(t));
  }
}

Vocabulary Vocabulary::build(const std::vector<std::string>& texts, const VocabularyOptions& options) {
  options.validate();
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& text : texts)
    for (std::string& t : tokenize(text, options.lowercase)) ++counts[std::move(t)];
  counts.erase(kUnknownToken);  // "<unk>" in the text is the unknown token, not a word
  std::vector<std::pair<std::string, int64_t>> kept;
  for (auto& [token, count] : counts)
    if (count >= options.min_count) kept.emplace_back(token, count);
  // Most frequent first; ties in byte order, so the vocabulary does not depend on hashing.
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (static_cast<int64_t>(kept.size()) > options.max_size - 1) kept.resize(options.max_size - 1);
  std::vector<std::string> tokens{kUnknownToken};
  for (auto& [token, count] : kept) tokens.push_back(std::move(token));
  return Vocabulary(std::move(tokens), options.lowercase);
}

int32_t Vocabulary::index(const std::string& token) const {
  const auto it = index_.find(token);
  return it == index_.end() ? 0 : it->second;
}

std::vector<int32_t> Vocabulary::encode(const std::string& text) const {
  std::vector<int32_t> ids;
  for (const std::string& t : tokenize(text, lowercase_)) ids.push_back(index(t));
  return ids;
}

}  // namespace inductive
