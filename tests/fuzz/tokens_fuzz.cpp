// libFuzzer target: the text tokeniser and vocabulary of OTKE tokens models (SST-2 style sentences). Every token is
// non-empty and free of ASCII whitespace; a vocabulary built from the input's lines encodes each line to indices in
// [0, size), and a line's encoding has as many indices as the line has tokens.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/tokens.h"

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  if (size == 0) return 0;
  const bool lowercase = data[0] & 1;
  const std::string text = inductive::fuzz::text(data + 1, size - 1);
  std::vector<std::string> lines(1);
  for (char c : text) {
    if (c == '\n')
      lines.emplace_back();
    else
      lines.back().push_back(c);
  }
  for (const std::string& line : lines)
    for (const std::string& t : inductive::tokenize(line, lowercase)) {
      if (t.empty()) finding("tokens_fuzz", "an empty token");
      for (char c : t)
        if (is_space(c)) finding("tokens_fuzz", "a token holding whitespace");
    }
  try {
    inductive::VocabularyOptions o;
    o.lowercase = lowercase;
    o.min_count = 1 + (data[0] >> 1 & 3);
    const inductive::Vocabulary v = inductive::Vocabulary::build(lines, o);
    for (const std::string& line : lines) {
      const std::vector<int32_t> ids = v.encode(line);
      if (ids.size() != inductive::tokenize(line, lowercase).size())
        finding("tokens_fuzz", "one index per token expected");
      for (int32_t id : ids)
        if (id < 0 || id >= v.size()) finding("tokens_fuzz", "an index outside the vocabulary");
    }
  } catch (const inductive::Error&) {
  }
  return 0;
}
