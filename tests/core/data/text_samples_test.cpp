// GLUE TSV and label<TAB>sequence tables: what every front end reads sentences and sequences with.
#include "inductive/text_samples.h"

#include <gtest/gtest.h>

#include <functional>

#include "inductive/error.h"

namespace inductive {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(GlueTsv, ReadsSentencesAndSortedLabelsWhateverTheColumnOrder) {
  const TextSamples t =
      parse_glue_tsv("label\tsentence\r\npos\tit 's a \"gem\" `\n\nneg\tdull .\npos\tfine\n", "f.tsv", true);
  EXPECT_EQ(t.samples, (std::vector<std::string>{"it 's a \"gem\" `", "dull .", "fine"}));
  EXPECT_EQ(t.names, (std::vector<std::string>{"f.tsv line 2", "f.tsv line 4", "f.tsv line 5"}));
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"neg", "pos"}));
  EXPECT_EQ(t.labels, (std::vector<int32_t>{1, 0, 1}));
}

TEST(GlueTsv, UnlabelledFilesIgnoreOtherColumns) {
  const TextSamples t = parse_glue_tsv("index\tsentence\n0\ta b\n1\tc\n", "test.tsv", false);
  EXPECT_EQ(t.samples, (std::vector<std::string>{"a b", "c"}));
  EXPECT_TRUE(t.labels.empty());
  EXPECT_TRUE(t.class_names.empty());
}

TEST(GlueTsv, RefusesWhatCannotBeASample) {
  EXPECT_NE(error_of([] { parse_glue_tsv("\n\n", "f", true); }).find("f: empty file"), std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("text\tlabel\n", "f", true); }).find("no 'sentence' column"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("sentence\n", "f", true); }).find("no 'label' column"), std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("sentence\tsentence\n", "f", false); }).find("appears twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_glue_tsv("sentence\tlabel\na\t1\tx\n", "f", true);
            }).find("f: line 2: expected 2 tab-separated fields (as the header), got 3"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("sentence\tlabel\n  \t1\n", "f", true); }).find("line 2: empty sentence"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("sentence\tlabel\na\t\n", "f", true); }).find("line 2: missing label"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("sentence\tlabel\na\tb c\n", "f", true); }).find("label contains a space"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_glue_tsv("sentence\tlabel\n\n", "f", true); }).find("no sentence after the header"),
            std::string::npos);
}

TEST(LabelledSequencesTsv, DropsSpacesInsideSequencesAndSkipsComments) {
  const TextSamples t = parse_labelled_sequences_tsv("# c\nb\tAC GT\n\na\tT\tT\n", "s.tsv");
  EXPECT_EQ(t.samples, (std::vector<std::string>{"ACGT", "TT"}));
  EXPECT_EQ(t.names, (std::vector<std::string>{"s.tsv line 2", "s.tsv line 4"}));
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.labels, (std::vector<int32_t>{1, 0}));
}

TEST(LabelledSequencesTsv, RefusesLinesWithoutLabelOrSequence) {
  EXPECT_NE(error_of([] { parse_labelled_sequences_tsv("a ACGT\n", "s"); }).find("s: line 1: expected label<TAB>"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_labelled_sequences_tsv("\tACGT\n", "s"); }).find("line 1: empty label"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_labelled_sequences_tsv("a\t \n", "s"); }).find("line 1: empty sequence"),
            std::string::npos);
  // text_tsv_fuzz's first finding: a CR (or form feed) alone was taken for a one-letter sequence.
  EXPECT_NE(error_of([] {
              parse_labelled_sequences_tsv(std::string("se\xf8se\0\t\r\r", 9), "s");
            }).find("line 1: empty sequence"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_labelled_sequences_tsv("# only\n", "s"); }).find("s: no sample"), std::string::npos);
}

}  // namespace
}  // namespace inductive
