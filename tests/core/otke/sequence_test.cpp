// FASTA, alphabets and k-mer features: what the OTKE sequence input accepts and how it rejects bad input.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/sequence.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

TEST(Fasta, ParsesWrappedAndSingleLineRecords) {
  const auto r = parse_fasta(">seq one\nACGT\nAC\r\n\n> 42\nGGGG\n;comment\n>last\nT", "t.fa");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "seq one");
  EXPECT_EQ(r[0].sequence, "ACGTAC");
  EXPECT_EQ(r[1].name, "42");
  EXPECT_EQ(r[1].sequence, "GGGG");
  EXPECT_EQ(r[2].sequence, "T");
}

TEST(Fasta, RejectsMalformedText) {
  expect_error([] { parse_fasta("", "e.fa"); }, ErrorCode::kInvalidArgument, "e.fa: no FASTA record");
  expect_error([] { parse_fasta("ACGT\n>x\nAC\n", "d.fa"); }, ErrorCode::kInvalidArgument,
               "d.fa: line 1: sequence data before the first '>'");
  expect_error([] { parse_fasta(">a\nAC\n>empty\n>c\nG\n", "m.fa"); }, ErrorCode::kInvalidArgument,
               "record 'empty' (line 3) has an empty sequence");
  expect_error([] { read_fasta("/nonexistent.fa"); }, ErrorCode::kIo, "/nonexistent.fa");
}

TEST(Alphabet, NamesLettersAndCase) {
  const Alphabet dna = Alphabet::dna();
  EXPECT_EQ(dna.size(), 4);
  EXPECT_EQ(dna.index('G'), 2);
  EXPECT_EQ(dna.index('g'), 2);
  EXPECT_EQ(dna.index('N'), -1);
  EXPECT_EQ(Alphabet::from_name("protein").size(), 20);
  EXPECT_EQ(Alphabet::from_name("letters:ACGU").name(), "letters:ACGU");
  EXPECT_EQ(Alphabet::from_name("dna").name(), "dna");
  expect_error([] { Alphabet::from_name("rna"); }, ErrorCode::kInvalidArgument, "unknown alphabet 'rna'");
  expect_error([] { Alphabet("ACA"); }, ErrorCode::kInvalidArgument, "appears twice");
}

TEST(Alphabet, EncodeNamesTheInvalidLetterAndItsPosition) {
  const auto e = encode_sequence(Alphabet::dna(), "acgT", "s");
  EXPECT_EQ(e, (std::vector<int8_t>{0, 1, 2, 3}));
  expect_error([] { encode_sequence(Alphabet::dna(), "ACNGT", "sequence 'x'"); }, ErrorCode::kInvalidArgument,
               "sequence 'x': invalid letter 'N' at position 3: expected one of ACGT");
  expect_error([] { encode_sequence(Alphabet::dna(), "", "s"); }, ErrorCode::kInvalidArgument, "empty sequence");
}

TEST(Kmers, AreUnitNormOneHotsWithTrueLengths) {
  const auto dna = Alphabet::dna();
  const auto batch = kmer_features({encode_sequence(dna, "ACGTA", "a"), encode_sequence(dna, "GGG", "b")}, 4, 3);
  EXPECT_EQ(batch.batch, 2);
  EXPECT_EQ(batch.dim, 12);
  EXPECT_EQ(batch.n, (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(batch.n_max, 3);
  const float v = 1.0f / std::sqrt(3.0f);
  // First k-mer of "ACGTA" is ACG: A at slot 0, C at 4 + 1, G at 8 + 2.
  const float* r = batch.row(0, 0);
  for (int c = 0; c < 12; ++c) EXPECT_FLOAT_EQ(r[c], (c == 0 || c == 5 || c == 10) ? v : 0.0f) << c;
  // Padding rows stay zero.
  for (int c = 0; c < 12; ++c) EXPECT_EQ(batch.row(1, 2)[c], 0.0f);
  expect_error([&] { kmer_features({encode_sequence(dna, "AC", "s")}, 4, 3, {"short"}); }, ErrorCode::kInvalidArgument,
               "sequence 'short' is shorter than k: got length 2, expected >= 3");
}

TEST(SetBatch, ValidateNamesEmptySetsAndNonFiniteFeatures) {
  SetBatch b = make_set_batch({{1, 2, 3, 4}, {5, 6}}, 2);
  EXPECT_EQ(b.n, (std::vector<int32_t>{2, 1}));
  b.validate("t");
  b.n[1] = 0;
  expect_error([&] { b.validate("t"); }, ErrorCode::kInvalidArgument, "t: set 1 is empty");
  b.n[1] = 1;
  b.row(0, 1)[1] = std::nanf("");
  expect_error([&] { b.validate("t"); }, ErrorCode::kInvalidArgument, "set 0 has a non-finite feature at element 1");
}

}  // namespace
}  // namespace inductive
