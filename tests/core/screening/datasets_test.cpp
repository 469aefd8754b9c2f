// Dataset readers: LIBSVM (index bases, label styles, blank lines, comments, precise errors), CSV, MNIST idx, gzip
// (every block type, named headers, several members, corruption), label transforms; real files when present.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "inductive/gzip.h"
#include "inductive/screening/datasets.h"
#include "../test_util.h"
#include "gzip_fixtures.h"

namespace inductive {
namespace {

using testing::expect_error;

// The repository's data/ folder (vendored extracts, data/SOURCE.md): always present, so these tests never skip.
std::string vendored(const std::string& rel) { return std::string(INDUCTIVE_TEST_DATA) + "/../../data/" + rel; }
bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::string fixture_text(int lines) {
  std::string s;
  for (int k = 0; k < lines; ++k) s += "line " + std::to_string(k) + ": " + std::to_string(k * k) + "\n";
  return s;
}

std::string inflate(const unsigned char* data, size_t size) {
  const auto out = gunzip(data, size, "fixture");
  return std::string(out.begin(), out.end());
}

double value(const Dataset& d, int i, int j) {
  VecD e = VecD::Zero(d.p());
  e[j] = 1.0;
  return d.x->row_dot(i, e.data());
}

TEST(Gzip, InflatesStoredFixedAndDynamicBlocks) {
  EXPECT_EQ(inflate(kGzipStored, kGzipStored_size), kGzipSmallText);
  EXPECT_EQ(inflate(kGzipFixed, kGzipFixed_size), kGzipSmallText);
  EXPECT_EQ(inflate(kGzipDynamic, kGzipDynamic_size), fixture_text(kGzipBigLines));
  EXPECT_EQ(inflate(kGzipNamed, kGzipNamed_size), kGzipSmallText);  // FNAME header field skipped
  EXPECT_EQ(inflate(kGzipTwoMembers, kGzipTwoMembers_size), kGzipSmallText + fixture_text(kGzipBigLines));
}

TEST(Gzip, CorruptionIsDetected) {
  std::vector<unsigned char> bad(kGzipDynamic, kGzipDynamic + kGzipDynamic_size);
  bad[bad.size() - 6] ^= 0x55;  // inside the CRC-32
  expect_error([&] { gunzip(bad.data(), bad.size(), "x.gz"); }, ErrorCode::kBadModelFile, "x.gz: gzip CRC-32 mismatch");
  expect_error([&] { gunzip(kGzipDynamic, kGzipDynamic_size / 2, "x.gz"); }, ErrorCode::kBadModelFile,
               "x.gz: corrupt gzip data: unexpected end of compressed data");
  const unsigned char not_gzip[20] = {'h', 'e', 'l', 'l', 'o'};
  expect_error([&] { gunzip(not_gzip, sizeof not_gzip, "x.gz"); }, ErrorCode::kBadModelFile, "expected magic 1f 8b");
  expect_error([&] { gunzip(kGzipDynamic, kGzipDynamic_size, "x.gz", 100); }, ErrorCode::kBadModelFile,
               "larger than the allowed maximum");
}

// A header with FHCRC: its CRC-16 is checked, as zlib does (gzip_fuzz found ours skipping it: it inflated a stream
// with a wrong header CRC that zlib refuses). 'abc' x 20, with the right CRC-16 (0x8a3a) and with the fuzzer's.
TEST(Gzip, TheHeaderCrcIsChecked) {
  std::vector<unsigned char> good = {0x1f, 0x8b, 0x08, 0x02, 0x1e, 0x00, 0x35, 0x98, 0x07, 0x6b,
                                     0x3a, 0x8a, 0x4b, 0x4c, 0x4a, 0x4e, 0x24, 0x17, 0x01, 0x00,
                                     0x2d, 0xfa, 0x91, 0xe1, 0x3c, 0x00, 0x00, 0x00};
  const std::vector<uint8_t> out = gunzip(good.data(), good.size(), "h.gz");
  std::string abc;
  for (int i = 0; i < 20; ++i) abc += "abc";
  EXPECT_EQ(std::string(out.begin(), out.end()), abc);
  std::vector<unsigned char> found = good;
  found[10] = 0x04, found[11] = 0xff;  // the fuzzer's reproducer
  expect_error([&] { gunzip(found.data(), found.size(), "h.gz"); }, ErrorCode::kBadModelFile,
               "h.gz: gzip header CRC-16 mismatch: got 35386, expected 65284");
}

// A dynamic block whose distance code is incomplete (not a single one-bit code): zlib refuses it ("invalid
// distances set"); ours inflated it until gzip_fuzz found the difference. Ours now applies zlib's completeness rules.
TEST(Gzip, IncompleteHuffmanCodesAreRefusedAsZlibDoes) {
  const std::vector<unsigned char> found = {
      0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x03, 0x4b, 0x4c, 0x4a, 0x4e, 0x24, 0x17,
      0x01, 0x00, 0x2d, 0xfa, 0x91, 0xe1, 0x3c, 0x00, 0x00, 0x00, 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00,
      0x05, 0x00, 0x00, 0x03, 0x2d, 0x53, 0x49, 0x8e, 0xdc, 0x30, 0x0c, 0xbc, 0xcf, 0x57, 0x78, 0x90,
      0xb8, 0xf3, 0x39, 0x19, 0x60, 0x6e, 0xfd, 0x80, 0xc9, 0xef, 0x53, 0x2c, 0x05, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  };
  expect_error([&] { gunzip(found.data(), found.size(), "f.gz"); }, ErrorCode::kBadModelFile,
               "f.gz: corrupt gzip data: incomplete Huffman code");
  // Every fixture, fixed-code blocks (whose distance code is incomplete by definition) included, still inflates.
  EXPECT_EQ(inflate(kGzipFixed, kGzipFixed_size), kGzipSmallText);
  EXPECT_EQ(inflate(kGzipDynamic, kGzipDynamic_size), fixture_text(kGzipBigLines));
}

TEST(Libsvm, ReadsOneBasedIndicesPlusMinusLabelsBlankLinesAndComments) {
  const Dataset d = to_dataset(
      parse_libsvm("# header comment\n+1 1:0.5 3:2\n\n-1 2:1.5   # trailing comment\r\n-1\n+1 qid:3 3:-1 \n"));
  ASSERT_EQ(d.n(), 4);
  EXPECT_EQ(d.p(), 3);
  EXPECT_TRUE(d.x->is_sparse());
  EXPECT_EQ(d.y, (std::vector<double>{1, -1, -1, 1}));
  EXPECT_DOUBLE_EQ(value(d, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(value(d, 0, 2), 2.0);
  EXPECT_DOUBLE_EQ(value(d, 1, 1), 1.5);
  EXPECT_DOUBLE_EQ(d.x->row_sq_norm(2), 0.0);  // a label-only line is an all-zero sample
  EXPECT_DOUBLE_EQ(value(d, 3, 2), -1.0);
}

TEST(Libsvm, IndexBaseIsDetectedOrImposedAndDimensionDeclared) {
  const Dataset zero = to_dataset(parse_libsvm("1 0:1 2:2\n0 1:3\n"));
  EXPECT_EQ(zero.p(), 3);  // an index 0 makes the file 0-based (scikit-learn's rule)
  EXPECT_DOUBLE_EQ(value(zero, 0, 0), 1.0);
  EXPECT_EQ(zero.y, (std::vector<double>{1, 0}));
  LibsvmOptions opt;
  opt.index_base = IndexBase::kZero;
  EXPECT_EQ(to_dataset(parse_libsvm("1 1:1 3:2\n", opt)).p(), 4);
  opt.index_base = IndexBase::kOne;
  expect_error([&] { to_dataset(parse_libsvm("1 2:1\n-1 0:1\n", opt, "t.svm")); }, ErrorCode::kInvalidArgument,
               "t.svm: line 2: feature index 0 in a 1-based file");
  LibsvmOptions dim;
  dim.n_features = 10;
  dim.dense = true;
  const Dataset wide = to_dataset(parse_libsvm("2.5 3:1\n-0.5 1:1\n", dim));
  EXPECT_EQ(wide.p(), 10);
  EXPECT_FALSE(wide.x->is_sparse());
  EXPECT_EQ(wide.y, (std::vector<double>{2.5, -0.5}));  // real-valued targets for regression
  dim.n_features = 2;
  expect_error([&] { to_dataset(parse_libsvm("1 1:1\n1 3:1\n", dim, "t.svm")); }, ErrorCode::kInvalidArgument,
               "t.svm: line 2: feature index 3 exceeds the declared dimension: got 3 features, expected at most 2");
}

TEST(Libsvm, ErrorsNameTheLineAndTheToken) {
  expect_error([] { to_dataset(parse_libsvm("1 1:1\nabc 1:2\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 2: label 'abc' is not a finite number");
  expect_error([] { to_dataset(parse_libsvm("1 1:1\n\n1 1-2\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 3: feature '1-2' is not index:value");
  expect_error([] { to_dataset(parse_libsvm("1 x:2\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 1: feature index 'x' is not a non-negative integer");
  expect_error([] { to_dataset(parse_libsvm("1 2147483647:1\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 1: feature index '2147483647' is too large: indices go up to 2147483646");
  expect_error([] { to_dataset(parse_libsvm("1 -3:1\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 1: feature index '-3' is not a non-negative integer");
  expect_error([] { to_dataset(parse_libsvm("1 2:nan\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 1: value 'nan' of feature 2 is not a finite number");
  expect_error([] { to_dataset(parse_libsvm("1 2:1 2:3\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 1: feature index 2 appears twice");
  expect_error([] { to_dataset(parse_libsvm("\n# nothing\n", {}, "f")); }, ErrorCode::kInvalidArgument, "f: no sample");
  // Differential fuzzing against scikit-learn (tests/oracle/test_differential_fuzz.py): hexadecimal is no number
  // there, values beyond float32 would have become infinite, a CR inside a line separates tokens, and an underflow
  // reads as zero as in Python.
  expect_error([] { to_dataset(parse_libsvm("1 3:0x8\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "value '0x8' of feature 3 is not a finite number");
  expect_error([] { to_dataset(parse_libsvm("1 1:1e-3 2:-2.5E82\n", {}, "f")); }, ErrorCode::kInvalidArgument,
               "f: line 1: value '-2.5E82' of feature 2 is beyond float32's range");
  const Dataset cr = to_dataset(parse_libsvm("1 2:1 \r12:3\n1 1:1e-400\n", {}, "f"));
  EXPECT_EQ(cr.n(), 2);
  EXPECT_EQ(cr.p(), 12);
  EXPECT_EQ(cr.x->nnz(), 2);  // the underflow is a zero, not stored
}

TEST(Csv, ReadsLabelsFromAnyColumnWithOrWithoutHeader) {
  const Dataset last = to_dataset(parse_csv("1,2,0\n3,4,1\n"));
  EXPECT_EQ(last.n(), 2);
  EXPECT_EQ(last.p(), 2);
  EXPECT_EQ(last.y, (std::vector<double>{0, 1}));
  EXPECT_DOUBLE_EQ(value(last, 1, 0), 3.0);
  CsvOptions opt;
  opt.header = true;
  opt.label_column = 0;
  opt.delimiter = ';';
  const Dataset first = to_dataset(parse_csv("y;a;b\n-1; 0.5; 2\n1;1e-3;-4\n\n", opt));
  EXPECT_EQ(first.y, (std::vector<double>{-1, 1}));
  EXPECT_DOUBLE_EQ(value(first, 1, 0), 1e-3f);
  EXPECT_DOUBLE_EQ(value(first, 1, 1), -4.0);
  CsvOptions none;
  none.has_label = false;
  EXPECT_EQ(to_dataset(parse_csv("1,2\n3,4\n", none)).p(), 2);
}

TEST(Csv, ErrorsNameLineAndColumn) {
  expect_error([] { to_dataset(parse_csv("1,2,3\n4,5\n", {}, "d.csv")); }, ErrorCode::kInvalidArgument,
               "d.csv: line 2: got 2 columns, expected 3");
  expect_error([] { to_dataset(parse_csv("1,2,3\n4,x,6\n", {}, "d.csv")); }, ErrorCode::kInvalidArgument,
               "d.csv: line 2, column 2: 'x' is not a finite number");
  CsvOptions opt;
  opt.label_column = 5;
  expect_error([&] { to_dataset(parse_csv("1,2\n", opt, "d.csv")); }, ErrorCode::kInvalidArgument,
               "label column 5 out of range");
}

std::vector<uint8_t> be32(uint32_t v) { return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}; }

TEST(MnistIdx, ReadsImagesScaledAndLabels) {
  std::vector<uint8_t> img, lab;
  for (uint32_t v : {0x803u, 2u, 2u, 2u})
    for (uint8_t b : be32(v)) img.push_back(b);
  for (uint8_t px : {0, 255, 51, 102, 1, 2, 3, 4}) img.push_back(px);
  for (uint32_t v : {0x801u, 2u})
    for (uint8_t b : be32(v)) lab.push_back(b);
  lab.push_back(7);
  lab.push_back(9);
  const Dataset d = to_dataset(parse_mnist_idx(img, lab));
  EXPECT_EQ(d.n(), 2);
  EXPECT_EQ(d.p(), 4);
  EXPECT_EQ(d.y, (std::vector<double>{7, 9}));
  EXPECT_NEAR(value(d, 0, 1), 1.0, 1e-7);
  EXPECT_NEAR(value(d, 0, 2), 0.2, 1e-7);
  lab[7] = 3;  // count says 3 labels
  expect_error([&] { to_dataset(parse_mnist_idx(img, lab, 1.0, "m")); }, ErrorCode::kShapeMismatch,
               "m: 2 images for 3 labels");
  img.pop_back();
  lab[7] = 2;
  expect_error([&] { to_dataset(parse_mnist_idx(img, lab, 1.0, "m")); }, ErrorCode::kBadModelFile,
               "got 7 pixel bytes, expected 8");
  img[3] = 0x01;
  expect_error([&] { to_dataset(parse_mnist_idx(img, lab, 1.0, "m")); }, ErrorCode::kBadModelFile,
               "idx magic 2049, expected 2051");
}

TEST(Labels, OneVsRestAndSignedLabels) {
  EXPECT_EQ(one_vs_rest({9, 1, 9, 0}, 9), (std::vector<double>{1, -1, 1, -1}));
  expect_error(
      [] {
        one_vs_rest({9, 1, 9, 0}, 10);
      },
      ErrorCode::kInvalidArgument, "one-vs-rest label 10 does not occur in the 4 labels");
  expect_error([] { one_vs_rest({9, 9}, 9); }, ErrorCode::kInvalidArgument, "every label is 9");
  EXPECT_EQ(to_signed_labels({0, 1, 1, 0}), (std::vector<double>{-1, 1, 1, -1}));
  EXPECT_EQ(to_signed_labels({2, 1}), (std::vector<double>{1, -1}));
  EXPECT_EQ(to_signed_labels({-1, 1}), (std::vector<double>{-1, 1}));
  expect_error(
      [] {
        to_signed_labels({0, 1, 2});
      },
      ErrorCode::kInvalidArgument, "two distinct labels: got 3 (use one_vs_rest)");
  expect_error([] { to_signed_labels({1, 1}); }, ErrorCode::kInvalidArgument, "got 1");
}

TEST(RealData, DigitsCsvGzMatchesItsDescription) {
  const std::string path = vendored("screening/digits.csv.gz");
  ASSERT_TRUE(exists(path)) << path << " is missing (data/SOURCE.md)";
  const Dataset d = to_dataset(read_csv(path));
  EXPECT_EQ(d.n(), 1797);
  EXPECT_EQ(d.p(), 64);
  int nines = 0;
  for (double v : d.y) nines += v == 9;
  EXPECT_EQ(nines, 180);
}

TEST(RealData, A9aLibsvmGzMatchesItsDescription) {
  const std::string path = vendored("screening/a9a.gz");
  ASSERT_TRUE(exists(path)) << path << " is missing (data/SOURCE.md)";
  const Dataset d = to_dataset(read_libsvm(path));
  EXPECT_EQ(d.n(), 32561);
  EXPECT_EQ(d.p(), 123);
  EXPECT_EQ(d.x->nnz(), 451592);
  int pos = 0;
  for (double v : d.y) pos += v == 1;
  EXPECT_EQ(pos, 7841);
}

TEST(RealData, MnistTestIdxGzMatchesItsDescription) {
  const std::string img = vendored("screening/t10k-images-idx3-ubyte.gz");
  const std::string lab = vendored("screening/t10k-labels-idx1-ubyte.gz");
  ASSERT_TRUE(exists(img) && exists(lab)) << "MNIST test idx files are missing (data/SOURCE.md)";
  const Dataset d = to_dataset(read_mnist_idx(img, lab));
  EXPECT_EQ(d.n(), 10000);
  EXPECT_EQ(d.p(), 784);
  std::vector<int> counts(10, 0);
  for (double v : d.y) ++counts[static_cast<int>(v)];
  EXPECT_EQ(counts, (std::vector<int>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}));
}

}  // namespace
}  // namespace inductive
