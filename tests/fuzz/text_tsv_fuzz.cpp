// libFuzzer target: the GLUE TSV of sentences (labelled or not) and label<TAB>sequence tables (the first byte picks
// which), then the tokeniser on every accepted sentence. An accepted table has one name per sample, samples that are
// not blank (sequences without whitespace), and, when labelled, one label per sample inside sorted, distinct
// class names.
#include <algorithm>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/text_samples.h"
#include "inductive/tokens.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  if (size == 0) return 0;
  const int mode = data[0] % 3;  // 0: GLUE labelled, 1: GLUE unlabelled, 2: label<TAB>sequence
  const std::string text = inductive::fuzz::text(data + 1, size - 1);
  inductive::TextSamples t;
  try {
    t = mode == 2 ? inductive::parse_labelled_sequences_tsv(text, "fuzz.tsv")
                  : inductive::parse_glue_tsv(text, "fuzz.tsv", mode == 0);
  } catch (const inductive::Error&) {
    return 0;
  }
  const char* me = "text_tsv_fuzz";
  if (t.samples.empty()) finding(me, "accepted a table without samples");
  if (t.names.size() != t.samples.size()) finding(me, "one name per sample expected");
  for (const std::string& s : t.samples) {
    if (s.find_first_not_of(" \t\r\n\v\f") == std::string::npos) finding(me, "a blank sample");
    if (mode == 2 && s.find_first_of(" \t\r\n\v\f") != std::string::npos) finding(me, "a sequence holding whitespace");
    if (mode != 2 && s.find('\n') != std::string::npos) finding(me, "a sentence spanning lines");
    if (mode != 2 && inductive::tokenize(s, false).empty()) finding(me, "a non-blank sentence without a token");
  }
  const bool labelled = mode != 1;
  if (!labelled && !(t.labels.empty() && t.class_names.empty())) finding(me, "labels in an unlabelled table");
  if (labelled) {
    if (t.labels.size() != t.samples.size()) finding(me, "one label per sample expected");
    if (!std::is_sorted(t.class_names.begin(), t.class_names.end()) ||
        std::adjacent_find(t.class_names.begin(), t.class_names.end()) != t.class_names.end())
      finding(me, "class names not sorted and distinct");
    std::vector<bool> used(t.class_names.size());
    for (int32_t l : t.labels) {
      if (l < 0 || static_cast<size_t>(l) >= t.class_names.size()) finding(me, "a label outside the classes");
      used[l] = true;
    }
    if (std::find(used.begin(), used.end(), false) != used.end()) finding(me, "a class no sample has");
  }
  return 0;
}
