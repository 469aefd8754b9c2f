// The model file: what it holds after a round trip, the exact bytes it is made of, the files other tools wrote,
// and one precise error for each way a file can be wrong. Runs natively and under Node (NODERAWFS).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/model_file.h"
#include "inductive/version.h"
#include "../test_util.h"

namespace inductive {
namespace {

using nlohmann::json;
using testing::expect_error;

// INDUCTIVE_TEST_DATA is <repo>/tests/data today; written as "<repo>/data/../tests/data" it still resolves.
std::string fixture(const std::string& name) {
  for (const char* rel : {"/models/", "/../tests/data/models/"}) {
    const std::string path = std::string(INDUCTIVE_TEST_DATA) + rel + name;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fclose(f);
      return path;
    }
  }
  ADD_FAILURE() << "fixture " << name << " not found under " << INDUCTIVE_TEST_DATA;
  return name;
}

// A safetensors file built by hand from header text, so corrupt files need not come from our writer.
std::vector<uint8_t> raw_file(std::string header, size_t data_bytes = 0, bool pad = true) {
  if (pad) header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

std::string metadata(const std::string& version = "1", const std::string& config = "{}") {
  return R"("__metadata__":{"format":"inductive","format_version":")" + version + R"(","model":"test","config":)" +
         json(config).dump() + R"(,"producer":"hand"})";
}

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, uint64_t begin,
                  uint64_t end) {
  return "\"" + name + R"(":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":[)" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

// Reads `bytes` and expects Error{code} whose message contains `fragment`.
void expect_bad(const std::vector<uint8_t>& bytes, const std::string& fragment,
                ErrorCode code = ErrorCode::kBadModelFile) {
  expect_error([&] { read_model(bytes.data(), bytes.size()); }, code, fragment);
}
void expect_bad_header(const std::string& header_body, size_t data_bytes, const std::string& fragment) {
  expect_bad(raw_file("{" + header_body + "}", data_bytes), fragment);
}

const std::vector<float> kWeight = {0.5f, -1.0f, 2.0f, 3.25f, -4.5f, 6.0f};
const std::vector<int32_t> kLabels = {1, -2, 3, 2147483647};

ModelContents sample() {
  ModelContents c;
  c.model = "test";
  c.config = {{"dim", 3}, {"eps", 0.5}, {"nested", {{"k", {1, 2, 3}}}}};
  c.tensors = {{"weight", DType::kF32, {2, 3}, kWeight.data()}, {"labels", DType::kI32, {4}, kLabels.data()}};
  return c;
}

// ---- contents ------------------------------------------------------------------------------------------------

TEST(ModelFile, Version1FixtureWrittenByPythonStaysReadable) {
  const auto bytes = read_file_bytes(fixture("v1_minimal.safetensors"));
  const ModelView v = read_model(bytes.data(), bytes.size());
  EXPECT_EQ(v.format_version, 1);
  EXPECT_EQ(v.model, "test");
  EXPECT_EQ(v.producer, "make_fixtures.py (python struct+json)");
  EXPECT_EQ(v.config, json::parse(R"({"dim": 3, "eps": 0.5, "name": "minimal"})"));
  ASSERT_EQ(v.tensors.size(), 2u);
  EXPECT_EQ(v.tensors[0].name, "weight") << "tensors are listed in file (offset) order";
  EXPECT_EQ(v.tensors[1].name, "labels");
  EXPECT_EQ(v.data_size, 40u);
  const float* w = v.f32("weight", {2, 3});
  EXPECT_EQ(std::vector<float>(w, w + 6), kWeight);
  const int32_t* l = v.i32("labels", {4});
  EXPECT_EQ(std::vector<int32_t>(l, l + 4), kLabels);
}

TEST(ModelFile, RoundTripKeepsTensorsConfigAndMetadata) {
  const ModelContents c = sample();
  const auto bytes = write_model(c);
  const ModelView v = read_model(bytes.data(), bytes.size());
  EXPECT_EQ(v.format_version, kFormatVersion);
  EXPECT_EQ(v.model, "test");
  EXPECT_EQ(v.producer, producer()) << "an empty producer means this build";
  EXPECT_EQ(v.config, c.config);
  const float* w = v.f32("weight", {2, 3});
  EXPECT_EQ(std::vector<float>(w, w + 6), kWeight);
  const int32_t* l = v.i32("labels", {4});
  EXPECT_EQ(std::vector<int32_t>(l, l + 4), kLabels);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(w), bytes.data() + (bytes.size() - 40 + 16)) << "a view, not a copy";

  ModelContents named = c;
  named.producer = "other-tool 2.0";
  const auto b2 = write_model(named);
  EXPECT_EQ(read_model(b2.data(), b2.size()).producer, "other-tool 2.0");
}

TEST(ModelFile, EmptyAndScalarTensorsRoundTrip) {
  ModelContents c;
  c.model = "test";
  const float one = 1.0f;
  c.tensors = {{"empty", DType::kF32, {0, 5}, nullptr}, {"scalar", DType::kF32, {}, &one}};
  const auto bytes = write_model(c);
  const ModelView v = read_model(bytes.data(), bytes.size());
  EXPECT_EQ(v.find("empty")->numel(), 0);
  EXPECT_EQ(*v.f32("scalar", {}), 1.0f);
}

TEST(ModelFile, WritingIsDeterministic) {
  ModelContents c = sample();
  const auto a = write_model(c);
  EXPECT_EQ(write_model(c), a);
  std::swap(c.tensors[0], c.tensors[1]);
  EXPECT_EQ(write_model(c), a) << "tensors are sorted by name, whatever order they are given in";
}

TEST(ModelFile, LayoutIsExactlyWhatSafetensorsWrites) {
  ModelContents c;
  c.model = "test";
  c.config = {{"b", 1}, {"a", 0.5}};
  c.producer = "p";
  const float x[2] = {1.0f, 2.0f};
  const int32_t y[1] = {7};
  c.tensors = {{"x", DType::kF32, {2}, x}, {"a.y", DType::kI32, {1, 1}, y}};
  const auto bytes = write_model(c);

  // Compact JSON, "__metadata__" first, then tensors by name with dtype/shape/data_offsets in that order.
  const std::string header =
      R"({"__metadata__":{"config":"{\"a\":0.5,\"b\":1}","format":"inductive","format_version":"1",)"
      R"("model":"test","producer":"p"},"a.y":{"dtype":"I32","shape":[1,1],"data_offsets":[0,4]},)"
      R"("x":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  const size_t n = header.size() + (8 - header.size() % 8) % 8;
  ASSERT_EQ(bytes.size(), 8 + n + 12);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | bytes[i];
  EXPECT_EQ(len, n) << "u64 little-endian header length";
  EXPECT_EQ((8 + len) % 8, 0u) << "data starts 8-byte aligned";
  const std::string text(bytes.begin() + 8, bytes.begin() + 8 + n);
  EXPECT_EQ(text, header + std::string(n - header.size(), ' ')) << "padded with spaces";
  int32_t y_back = 0;
  float x_back[2] = {};
  std::memcpy(&y_back, bytes.data() + 8 + n, 4);
  std::memcpy(x_back, bytes.data() + 8 + n + 4, 8);
  EXPECT_EQ(y_back, 7);
  EXPECT_EQ(x_back[1], 2.0f);
}

TEST(ModelFile, DescribeListsFormatConfigAndTensors) {
  const auto bytes = read_file_bytes(fixture("v1_minimal.safetensors"));
  const std::string d = describe_model(read_model(bytes.data(), bytes.size()));
  for (const char* line : {"format:         inductive\n", "format_version: 1\n", "model:          test\n",
                           "\"eps\": 0.5", "tensors:        2 (40 bytes)\n"}) {
    EXPECT_NE(d.find(line), std::string::npos) << "missing '" << line << "' in\n" << d;
  }
  EXPECT_NE(d.find("  weight  F32    [2, 3]  24\n"), std::string::npos) << d;
  EXPECT_NE(d.find("  labels  I32    [4]     16\n"), std::string::npos) << d;
}

TEST(ModelFile, DTypeNamesAndNumel) {
  EXPECT_STREQ(dtype_name(DType::kF32), "F32");
  EXPECT_STREQ(dtype_name(DType::kI32), "I32");
  TensorInfo t;
  t.shape = {2, 3, 4};
  EXPECT_EQ(t.numel(), 24);
  t.shape = {};
  EXPECT_EQ(t.numel(), 1) << "a scalar has one element";
}

// ---- typed access ----------------------------------------------------------------------------------------------

TEST(ModelFile, TypedAccessorsNameWhatIsWrong) {
  const auto bytes = write_model(sample());
  const ModelView v = read_model(bytes.data(), bytes.size());
  EXPECT_EQ(v.find("nope"), nullptr);
  expect_error([&] { v.f32("nope", {1}); }, ErrorCode::kBadModelFile, "tensor 'nope' is missing");
  expect_error([&] { v.f32("labels", {4}); }, ErrorCode::kBadModelFile, "'labels': dtype: got I32, expected F32");
  expect_error([&] { v.i32("weight", {2, 3}); }, ErrorCode::kBadModelFile, "'weight': dtype: got F32, expected I32");
  expect_error(
      [&] {
        v.f32("weight", {3, 2});
      },
      ErrorCode::kBadModelFile, "'weight' has wrong shape: got [2, 3], expected [3, 2]");
}

TEST(ModelFile, MisalignedDataIsRefusedRatherThanReadUnaligned) {
  // Other writers may leave the header unpadded; such a file is valid, but its floats cannot be viewed in place.
  const std::string header = "{" + metadata() + "," + entry("w", "F32", "[1]", 0, 4) + "}";
  auto bytes = raw_file(header.size() % 4 ? header : header + " ", 4, /*pad=*/false);
  const ModelView v = read_model(bytes.data(), bytes.size());
  expect_error([&] { v.f32("w", {1}); }, ErrorCode::kBadModelFile, "not 4-byte aligned");
}

// ---- corrupt files: the container ------------------------------------------------------------------------------

TEST(ModelFileCorrupt, FileShorterThanTheLengthPrefix) {
  const std::vector<uint8_t> seven(7, 0);
  expect_bad(seven, "size: got 7 bytes, expected at least 8");
  expect_error([] { read_model(nullptr, 0); }, ErrorCode::kBadModelFile, "size: got 0 bytes");
}

TEST(ModelFileCorrupt, HeaderLengthAboveTheLimitIsRejectedBeforeAllocating) {
  const auto fixture_bytes = read_file_bytes(fixture("huge_header.safetensors"));
  expect_bad(fixture_bytes, "header length: got 9223372036854775808 bytes, expected at most 16777216");
  auto max = raw_file("{}");
  std::memset(max.data(), 0xff, 8);
  expect_bad(max, "header length: got 18446744073709551615 bytes");
}

TEST(ModelFileCorrupt, HeaderLengthBeyondTheFile) {
  auto bytes = raw_file("{" + metadata() + "}");
  bytes[0] += 8;
  expect_bad(bytes, "bytes, but only");
}

TEST(ModelFileCorrupt, DataShorterThanDeclared) {
  expect_bad(read_file_bytes(fixture("truncated.safetensors")),
             "tensor 'labels': data_offsets [24, 40] end beyond the data section: got 34 bytes of data");
}

TEST(ModelFileCorrupt, OffsetsBeyondTheData) {
  expect_bad_header(metadata() + "," + entry("w", "F32", "[2]", 1000, 1008), 8,
                    "'w': data_offsets [1000, 1008] end beyond the data section");
}

TEST(ModelFileCorrupt, OffsetsThatDisagreeWithTheShape) {
  expect_bad_header(metadata() + "," + entry("w", "F32", "[2,3]", 0, 20), 20,
                    "'w': data_offsets [0, 20] span 20 bytes, expected 24 for F32 [2, 3]");
  expect_bad_header(metadata() + "," + entry("w", "F32", "[2]", 8, 0), 8,
                    "'w': data_offsets: got [8,0], expected [begin, end] with 0 <= begin <= end");
  expect_bad_header(metadata() + R"(,"w":{"dtype":"F32","shape":[1],"data_offsets":[0]})", 4,
                    "'w': data_offsets: got [0]");
}

TEST(ModelFileCorrupt, OverlappingTensors) {
  expect_bad(read_file_bytes(fixture("overlapping.safetensors")), "tensors 'a' [0, 24] and 'b' [16, 40] overlap");
}

TEST(ModelFileCorrupt, GapsBetweenOrBeforeTensors) {
  expect_bad_header(metadata() + "," + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[1]", 8, 12), 12,
                    "'b': data_offsets begin at 8, expected 4 (the end of 'a'): a gap of 4 bytes");
  expect_bad_header(metadata() + "," + entry("a", "F32", "[1]", 4, 8), 8,
                    "'a': data_offsets begin at 4, expected 0 (the first tensor)");
  expect_bad_header(metadata() + "," + entry("a", "F32", "[1]", 0, 4), 12,
                    "data section: got 12 bytes, expected 4 (the end of the last tensor): 8 trailing bytes");
}

TEST(ModelFileCorrupt, HeaderIsNotJson) {
  expect_bad(read_file_bytes(fixture("bad_json.safetensors")), "model file: header: invalid JSON at byte");
  expect_bad(raw_file(R"({"a": tru})"), "invalid JSON at byte 10: syntax error while parsing value - invalid literal");
  expect_bad(raw_file("{\"\xff\":1}"), "invalid JSON");  // not UTF-8
}

TEST(ModelFileCorrupt, HeaderIsNotAnObject) {
  expect_bad(raw_file("[1,2]"), "header: got first byte '[', expected a JSON object starting with '{'");
  expect_bad(raw_file(" {}"), "got first byte ' '");
  expect_bad(raw_file("", 0, false), "header: got 0 bytes");
  expect_bad(raw_file("{} []"), "invalid JSON");
}

TEST(ModelFileCorrupt, NestingTooDeep) {
  expect_bad(raw_file("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}"),
             "nesting deeper than 64 levels");
}

TEST(ModelFileCorrupt, DuplicateNamesAndKeys) {
  const std::string w = entry("w", "F32", "[1]", 0, 4);
  expect_bad_header(metadata() + "," + w + "," + w, 4, "header: tensor 'w' appears twice, expected unique names");
  expect_bad_header(metadata() + R"(,"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]})", 4,
                    "key 'dtype' appears twice in 'w'");
}

TEST(ModelFileCorrupt, MessagesQuoteNamesOnOneShortLine) {
  // A name can be megabytes long and hold escaped control characters; the message must stay one readable line.
  const std::string name = "line\\nbreak" + std::string(5000, 'x');
  const auto bytes = raw_file("{" + metadata() + "," + entry(name, "F64", "[1]", 0, 8) + "}", 8);
  try {
    read_model(bytes.data(), bytes.size());
    ADD_FAILURE() << "F64 accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_LT(m.size(), 200u) << m;
    EXPECT_NE(m.find("tensor 'line?break" + std::string(50, 'x') + "...': dtype"), std::string::npos) << m;
  }
}

// ---- corrupt files: the metadata -------------------------------------------------------------------------------

TEST(ModelFileCorrupt, MetadataMissingOrMalformed) {
  expect_bad_header(entry("w", "F32", "[1]", 0, 4), 4, "header has no __metadata__");
  expect_bad_header(R"("__metadata__":[1])", 0, "__metadata__: got [1], expected an object mapping strings to strings");
  expect_bad_header(R"("__metadata__":{"format":"inductive","format_version":1})", 0,
                    "__metadata__ 'format_version': got 1, expected a string");
  expect_bad_header(R"("__metadata__":{"format":"inductive","format_version":"1"})", 0,
                    "__metadata__ has no 'model' entry");
}

TEST(ModelFileCorrupt, WrongFormatName) {
  expect_bad_header(R"("__metadata__":{"format":"pt"})", 0, "format: got \"pt\", expected \"inductive\"");
}

TEST(ModelFileCorrupt, FormatVersionNewerThanThisBuild) {
  const auto bytes = read_file_bytes(fixture("future_version.safetensors"));
  expect_bad(bytes, "file is format_version 99; this build reads up to 1", ErrorCode::kUnsupportedVersion);
  expect_bad(raw_file("{" + metadata("123456789012") + "}"), "file is format_version 123456789012",
             ErrorCode::kUnsupportedVersion);
  expect_bad(raw_file("{" + metadata("0") + "}"), "file is format_version 0; versions start at 1",
             ErrorCode::kUnsupportedVersion);
}

TEST(ModelFileCorrupt, FormatVersionNotAnInteger) {
  for (const char* v : {"1.5", "one", "", "-1", "01", " 1"}) {
    expect_bad(raw_file("{" + metadata(v) + "}"),
               "format_version: got \"" + std::string(v) + "\", expected a decimal integer");
  }
}

TEST(ModelFileCorrupt, ModelProducerOrConfigInvalid) {
  const std::string base = R"("__metadata__":{"format":"inductive","format_version":"1",)";
  expect_bad_header(base + R"("model":"","config":"{}","producer":"p"})", 0, "model: got \"\"");
  expect_bad_header(base + R"("model":"m","config":"{}","producer":""})", 0, "producer: got \"\"");
  expect_bad_header(base + R"("model":"m","config":"[1]","producer":"p"})", 0,
                    "config: got a JSON array, expected an object");
  expect_bad_header(base + R"("model":"m","config":"{x","producer":"p"})", 0, "config: invalid JSON at byte");
  expect_bad_header(base + R"("model":"m","config":"{\"a\":1,\"a\":2}","producer":"p"})", 0,
                    "config: key 'a' appears twice");
  expect_bad_header(base + R"("model":"m","config":"{\"a\":1e999}","producer":"p"})", 0,
                    "config: invalid JSON at byte 10: number overflow parsing '1e999'");
}

// ---- corrupt files: tensor entries -----------------------------------------------------------------------------

TEST(ModelFileCorrupt, DTypesInductiveDoesNotUse) {
  expect_bad(read_file_bytes(fixture("wrong_dtype.safetensors")),
             "tensor 'w': dtype: got \"F64\", expected \"F32\" or \"I32\"");
  expect_bad_header(metadata() + "," + entry("w", "BF16", "[2]", 0, 4), 4, "dtype: got \"BF16\"");
}

TEST(ModelFileCorrupt, ShapesThatCannotBe) {
  expect_bad_header(metadata() + "," + entry("w", "F32", "[2,-3]", 0, 4), 4,
                    "'w': shape [2,-3]: got dimension -3, expected >= 0");
  expect_bad_header(metadata() + "," + entry("w", "F32", "[2.5]", 0, 4), 4, "got dimension 2.5");
  expect_bad_header(metadata() + "," + entry("w", "F32", "4", 0, 4), 4, "'w': shape: got 4, expected an array");
  expect_bad_header(metadata() + "," + entry("w", "F32", "[9223372036854775808]", 0, 4), 4, "below 2^63");
  expect_bad_header(metadata() + "," + entry("w", "F32", "[4611686018427387904,4]", 0, 4), 4,
                    "'w': shape [4611686018427387904, 4] overflows");
  expect_bad_header(metadata() + "," + entry("w", "F32", "[4294967296,4294967296]", 0, 4), 4, "overflows");
}

TEST(ModelFileCorrupt, TensorEntriesWithMissingOrExtraKeys) {
  expect_bad_header(metadata() + R"(,"w":{"dtype":"F32","shape":[1]})", 4, "'w': has no 'data_offsets'");
  expect_bad_header(metadata() + R"(,"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1})", 4,
                    "'w': got keys data_offsets, dtype, shape, x, expected only");
  expect_bad_header(metadata() + R"(,"w":[1])", 0, "tensor 'w': got [1], expected an object");
  expect_bad_header(metadata() + "," + entry("", "F32", "[1]", 0, 4), 4, "empty name");
}

// ---- schemas ---------------------------------------------------------------------------------------------------

// A kind only these tests use: config {"n": k} (k >= 1) implies "w" F32 [k, 2] and "ids" I32 [k].
void register_test_schema() {
  static const bool once = [] {
    ModelSchema s;
    s.model = "model-file-test-kind";
    s.validate_config = [](const json& config, int) {
      INDUCTIVE_CHECK(config.contains("n") && config["n"].is_number_integer() && config["n"].get<int>() >= 1,
                      ErrorCode::kInvalidArgument, "n: got ", config.value("n", json()).dump(), ", expected >= 1");
    };
    s.tensors = [](const json& config, int) {
      const int64_t n = config["n"].get<int64_t>();
      return std::vector<TensorSpec>{{"w", DType::kF32, {n, 2}}, {"ids", DType::kI32, {n}}};
    };
    register_model_schema(s);
    return true;
  }();
  (void)once;
}

ModelContents schema_model(int n, std::vector<int64_t> w_shape) {
  static const std::vector<float> w(64, 1.0f);
  static const std::vector<int32_t> ids(64, 3);
  ModelContents c;
  c.model = "model-file-test-kind";
  c.config = {{"n", n}};
  c.tensors = {{"w", DType::kF32, std::move(w_shape), w.data()}, {"ids", DType::kI32, {n}, ids.data()}};
  return c;
}

// Bypasses the schema on write (no schema for "x-unchecked"), then relabels the kind, so read_model sees the file.
std::vector<uint8_t> unchecked_bytes(ModelContents c) {
  const std::string kind = c.model;
  c.model = std::string(kind.size(), 'x');
  auto bytes = write_model(c);
  const std::string from = "\"model\":\"" + c.model + "\"", to = "\"model\":\"" + kind + "\"";
  const auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  std::copy(to.begin(), to.end(), at);
  return bytes;
}

TEST(ModelFileSchema, RegisteredKindsAreCheckedOnReadAndWrite) {
  register_test_schema();
  ASSERT_NE(find_model_schema("model-file-test-kind"), nullptr);
  EXPECT_EQ(find_model_schema("no-such-kind"), nullptr);
  const auto good = write_model(schema_model(3, {3, 2}));
  EXPECT_EQ(read_model(good.data(), good.size()).f32("w", {3, 2})[5], 1.0f);

  expect_bad(unchecked_bytes(schema_model(3, {2, 3})),
             "tensor 'w' has wrong shape: got [2, 3], expected [3, 2] from the config");
  ModelContents missing = schema_model(3, {3, 2});
  missing.tensors.pop_back();
  expect_bad(unchecked_bytes(missing), "model 'model-file-test-kind' needs tensor 'ids' (I32 [3]), which is missing");
  ModelContents extra = schema_model(3, {3, 2});
  extra.tensors.push_back({"zz", DType::kF32, {1}, extra.tensors[0].data});
  expect_bad(unchecked_bytes(extra), "tensor 'zz' is not part of model 'model-file-test-kind'");
  expect_bad(unchecked_bytes(schema_model(0, {0, 2})), "config of model 'model-file-test-kind': n: got 0");

  expect_error(
      [] {
        write_model(schema_model(3, {2, 3}));
      },
      ErrorCode::kInvalidArgument,
      "write_model: refusing to write an invalid file: model file: tensor 'w' has wrong shape");
}

// ---- writing ---------------------------------------------------------------------------------------------------

TEST(ModelFile, WriteRejectsContentsItCouldNotReadBack) {
  const float x = 1.0f;
  auto with = [](auto edit) {
    ModelContents c = sample();
    edit(c);
    return c;
  };
  expect_error([&] { write_model(with([](ModelContents& c) { c.model.clear(); })); }, ErrorCode::kInvalidArgument,
               "model kind is empty");
  expect_error([&] { write_model(with([](ModelContents& c) { c.config = json::array(); })); },
               ErrorCode::kInvalidArgument, "config: got a JSON array, expected an object");
  expect_error([&] { write_model(with([](ModelContents& c) { c.format_version = kFormatVersion + 1; })); },
               ErrorCode::kInvalidArgument, "format_version: got 2, expected 1 to 1");
  auto add = [&](const char* name) {
    return with([&](ModelContents& c) { c.tensors.push_back({name, DType::kF32, {1}, &x}); });
  };
  expect_error([&] { write_model(add("weight")); }, ErrorCode::kInvalidArgument, "tensor 'weight' is given twice");
  expect_error([&] { write_model(add("__metadata__")); }, ErrorCode::kInvalidArgument,
               "tensor name: got \"__metadata__\"");
  expect_error([&] { write_model(with([](ModelContents& c) { c.tensors[0].data = nullptr; })); },
               ErrorCode::kInvalidArgument, "'weight': data is null, expected 24 bytes");
  expect_error([&] { write_model(with([](ModelContents& c) { c.tensors[0].shape = {-1}; })); },
               ErrorCode::kInvalidArgument, "'weight': shape [-1]");
  expect_error([&] { write_model(with([](ModelContents& c) { c.config["x"] = std::nan(""); })); },
               ErrorCode::kInvalidArgument, "config does not survive JSON");
  expect_error([&] { write_model(with([](ModelContents& c) { c.config["x"] = "\xff"; })); },
               ErrorCode::kInvalidArgument, "not valid UTF-8");
}

TEST(ModelFile, SaveIsAtomicAndReadsBack) {
  const std::string path = inductive::testing::temp_path("inductive_model_file_test.safetensors");
  save_model_file(path, sample());
  const auto bytes = read_file_bytes(path);
  EXPECT_EQ(bytes, write_model(sample()));

  // An invalid model is refused before the file is touched: the previous file survives whole.
  ModelContents bad = sample();
  bad.model.clear();
  expect_error([&] { save_model_file(path, bad); }, ErrorCode::kInvalidArgument, "model kind is empty");
  EXPECT_EQ(read_file_bytes(path), bytes);
  std::remove(path.c_str());

  const std::string nowhere = "/nonexistent-inductive-dir/model.safetensors";
  expect_error([&] { save_model_file(nowhere, sample()); }, ErrorCode::kIo, "/nonexistent-inductive-dir");
  EXPECT_EQ(std::fopen(nowhere.c_str(), "rb"), nullptr) << "nothing left behind";
  expect_error([&] { read_file_bytes(nowhere); }, ErrorCode::kIo, nowhere + ": cannot open file");
}

}  // namespace
}  // namespace inductive
