// inductive/text_samples.h - the text tables labelled samples arrive in, parsed once for every front end (the CLI,
// the bindings, the MPI driver): GLUE-style TSV of sentences, and label<TAB>sequence lines.
//
// Both are method-neutral: they return strings and label indices, and the caller turns samples into features.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace inductive {

struct TextSamples {
  std::vector<std::string> samples;      // sentences or sequences, in file order
  std::vector<std::string> names;        // per sample, for messages: "SOURCE line N"
  std::vector<int32_t> labels;           // per sample, an index into class_names; empty when unlabelled
  std::vector<std::string> class_names;  // the distinct labels, sorted (the order does not depend on line order)
};

// GLUE-style TSV: a header line naming the tab-separated columns, 'sentence' (required) and 'label' (required when
// `labelled`); other columns are ignored (e.g. 'index' of GLUE test files); blank lines are skipped. Fields are split
// on TAB only, without quoting: GLUE sentences hold quotes and backticks. Every row has the header's field count, a
// sentence with a non-space character, and (labelled) a label without spaces. `source` names the text in messages.
// Throws Error{kInvalidArgument} naming the source and line.
TextSamples parse_glue_tsv(const std::string& text, const std::string& source, bool labelled);

// One sample per line, label<TAB>sequence; whitespace inside the sequence (spaces, tabs, CR) is dropped; '#' lines and
// blank lines are skipped. Throws Error{kInvalidArgument} naming the source and line.
TextSamples parse_labelled_sequences_tsv(const std::string& text, const std::string& source);

// Sets out.class_names to the sorted distinct labels and out.labels to each sample's index among them.
void index_labels(const std::vector<std::string>& label_of_sample, TextSamples& out);

}  // namespace inductive
