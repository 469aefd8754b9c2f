// gzip (RFC 1952) and raw deflate (RFC 1951) decoding, written for this library so that the native and the
// WebAssembly builds read .gz datasets with the same code (see inductive/gzip.h).
//
// Huffman codes are decoded canonically, one bit at a time against per-length counts: simple and plenty fast for
// datasets (tens of MB/s); correctness over speed.
#include <algorithm>
#include <array>
#include <cstring>

#include "inductive/error.h"
#include "inductive/files.h"
#include "inductive/gzip.h"

namespace inductive {
namespace {

constexpr int kMaxBits = 15;

struct Huffman {
  std::array<uint16_t, kMaxBits + 1> count{};
  std::vector<uint16_t> symbol;  // symbols sorted by (code length, value)
};

class Inflater {
 public:
  // Appends to `out`; back-references may reach back to `member_start` (the start of this gzip member).
  Inflater(const uint8_t* in, size_t size, size_t pos, std::vector<uint8_t>& out, size_t member_start,
           size_t max_output, const std::string& what)
      : in_(in), size_(size), pos_(pos), out_(out), member_start_(member_start), max_(max_output), what_(what) {}

  // Decodes one deflate stream; returns the byte offset just after it.
  size_t run() {
    bool last = false;
    while (!last) {
      last = bits(1) == 1;
      const int type = static_cast<int>(bits(2));
      if (type == 0)
        stored();
      else if (type == 1)
        fixed();
      else if (type == 2)
        dynamic();
      else
        fail("invalid deflate block type 3");
    }
    bit_count_ = 0;  // the trailer starts at the next byte boundary
    return pos_;
  }

 private:
  [[noreturn]] void fail(const char* problem) const {
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, what_, ": corrupt gzip data: ", problem, " (at byte ", pos_, ")");
  }

  uint32_t bits(int need) {
    while (bit_count_ < need) {
      if (pos_ >= size_) fail("unexpected end of compressed data");
      bit_buf_ |= static_cast<uint32_t>(in_[pos_++]) << bit_count_;
      bit_count_ += 8;
    }
    const uint32_t v = bit_buf_ & ((1u << need) - 1u);
    bit_buf_ >>= need;
    bit_count_ -= need;
    return v;
  }

  void emit(uint8_t b) {
    if (out_.size() >= max_) fail("output larger than the allowed maximum");
    out_.push_back(b);
  }

  void stored() {
    bit_buf_ = 0;
    bit_count_ = 0;
    if (size_ - pos_ < 4) fail("truncated stored block header");
    const unsigned len = in_[pos_] | (in_[pos_ + 1] << 8), nlen = in_[pos_ + 2] | (in_[pos_ + 3] << 8);
    pos_ += 4;
    if (len != (~nlen & 0xffffu)) fail("stored block length check failed");
    if (size_ - pos_ < len) fail("truncated stored block");
    if (out_.size() + len > max_) fail("output larger than the allowed maximum");
    out_.insert(out_.end(), in_ + pos_, in_ + pos_ + len);
    pos_ += len;
  }

  // Which incomplete codes a table may be (zlib's rules, inftrees.c, which the gzip fuzzer holds us to): the
  // code-length code must be complete; literal/length and distance codes may be incomplete only as a single code
  // of length 1; the fixed block's distance code (30 of 32 five-bit codes) is incomplete by definition. A set with
  // no code at all is accepted (decoding with it then fails).
  enum class Completeness { kCodeLengths, kLiteralsOrDistances, kFixed };

  // Canonical code from code lengths; rejects over-subscribed sets and the incomplete ones `rule` forbids.
  Huffman build(const uint8_t* lengths, int n, Completeness rule) {
    Huffman h;
    h.symbol.assign(static_cast<size_t>(n), 0);
    for (int s = 0; s < n; ++s) ++h.count[lengths[s]];
    h.count[0] = 0;
    int left = 1, longest = 0;
    for (int len = 1; len <= kMaxBits; ++len) {
      left = 2 * left - h.count[len];
      if (left < 0) fail("over-subscribed Huffman code");
      if (h.count[len] > 0) longest = len;
    }
    if (left > 0 && longest > 0 && rule != Completeness::kFixed && (rule == Completeness::kCodeLengths || longest != 1))
      fail(rule == Completeness::kCodeLengths ? "incomplete code-lengths code" : "incomplete Huffman code");
    std::array<uint16_t, kMaxBits + 2> offs{};
    for (int len = 1; len <= kMaxBits; ++len) offs[len + 1] = offs[len] + h.count[len];
    for (int s = 0; s < n; ++s)
      if (lengths[s] != 0) h.symbol[offs[lengths[s]]++] = static_cast<uint16_t>(s);
    return h;
  }

  int decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= kMaxBits; ++len) {
      code |= static_cast<int>(bits(1));
      const int count = h.count[len];
      if (code - first < count) return h.symbol[index + (code - first)];
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    fail("invalid Huffman code");
  }

  void codes(const Huffman& lit, const Huffman& dist) {
    static constexpr uint16_t kLenBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                              31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr uint8_t kLenExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                              2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                               33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                               1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                               6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
      const int sym = decode(lit);
      if (sym < 256) {
        emit(static_cast<uint8_t>(sym));
        continue;
      }
      if (sym == 256) return;
      const int li = sym - 257;
      if (li >= 29) fail("invalid length symbol");
      const size_t len = kLenBase[li] + bits(kLenExtra[li]);
      const int di = decode(dist);
      if (di >= 30) fail("invalid distance symbol");
      const size_t d = kDistBase[di] + bits(kDistExtra[di]);
      if (d > out_.size() - member_start_) fail("distance reaches before the start of the data");
      if (out_.size() + len > max_) fail("output larger than the allowed maximum");
      for (size_t k = 0; k < len; ++k) out_.push_back(out_[out_.size() - d]);  // overlapping copies are intended
    }
  }

  void fixed() {
    std::array<uint8_t, 288 + 30> len{};
    for (int s = 0; s < 144; ++s) len[s] = 8;
    for (int s = 144; s < 256; ++s) len[s] = 9;
    for (int s = 256; s < 280; ++s) len[s] = 7;
    for (int s = 280; s < 288; ++s) len[s] = 8;
    for (int s = 0; s < 30; ++s) len[288 + s] = 5;
    codes(build(len.data(), 288, Completeness::kFixed), build(len.data() + 288, 30, Completeness::kFixed));
  }

  void dynamic() {
    const int nlen = static_cast<int>(bits(5)) + 257, ndist = static_cast<int>(bits(5)) + 1,
              ncode = static_cast<int>(bits(4)) + 4;
    if (nlen > 286 || ndist > 30) fail("too many length or distance codes");
    static constexpr uint8_t kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    std::array<uint8_t, 19> cl{};
    for (int k = 0; k < ncode; ++k) cl[kOrder[k]] = static_cast<uint8_t>(bits(3));
    const Huffman clh = build(cl.data(), 19, Completeness::kCodeLengths);
    std::array<uint8_t, 286 + 30> len{};
    int k = 0;
    while (k < nlen + ndist) {
      const int sym = decode(clh);
      if (sym < 16) {
        len[k++] = static_cast<uint8_t>(sym);
        continue;
      }
      uint8_t value = 0;
      int repeat = 0;
      if (sym == 16) {
        if (k == 0) fail("length repeat with no previous length");
        value = len[k - 1];
        repeat = 3 + static_cast<int>(bits(2));
      } else if (sym == 17) {
        repeat = 3 + static_cast<int>(bits(3));
      } else {
        repeat = 11 + static_cast<int>(bits(7));
      }
      if (k + repeat > nlen + ndist) fail("code lengths overflow their table");
      while (repeat-- > 0) len[k++] = value;
    }
    if (len[256] == 0) fail("no end-of-block code");
    codes(build(len.data(), nlen, Completeness::kLiteralsOrDistances),
          build(len.data() + nlen, ndist, Completeness::kLiteralsOrDistances));
  }

  const uint8_t* in_;
  size_t size_, pos_;
  std::vector<uint8_t>& out_;
  size_t member_start_;
  size_t max_;
  const std::string& what_;
  uint32_t bit_buf_ = 0;
  int bit_count_ = 0;
};

uint32_t crc32(const uint8_t* data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

bool is_gzip(const uint8_t* bytes, size_t size) { return size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b; }

std::vector<uint8_t> gunzip(const uint8_t* bytes, size_t size, const std::string& what, size_t max_output) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  int member = 0;
  while (pos < size) {
    // Trailing zero padding after the last member is tolerated (some tools write it), as gzip(1) does.
    if (member > 0 && std::all_of(bytes + pos, bytes + size, [](uint8_t b) { return b == 0; })) break;
    INDUCTIVE_CHECK(size - pos >= 18 && is_gzip(bytes + pos, size - pos), ErrorCode::kBadModelFile, what,
                    ": not a gzip stream at byte ", pos, ": expected magic 1f 8b");
    INDUCTIVE_CHECK(bytes[pos + 2] == 8, ErrorCode::kBadModelFile, what, ": gzip compression method ",
                    int(bytes[pos + 2]), ", expected 8 (deflate)");
    const uint8_t flags = bytes[pos + 3];
    INDUCTIVE_CHECK((flags & 0xE0) == 0, ErrorCode::kBadModelFile, what, ": gzip header has reserved flags set");
    size_t p = pos + 10;
    auto need = [&](size_t k) {
      INDUCTIVE_CHECK(size - p >= k, ErrorCode::kBadModelFile, what, ": truncated gzip header");
    };
    if (flags & 0x04) {  // FEXTRA
      need(2);
      const size_t xlen = bytes[p] | (bytes[p + 1] << 8);
      p += 2;
      need(xlen);
      p += xlen;
    }
    for (uint8_t bit : {uint8_t(0x08), uint8_t(0x10)})  // FNAME, FCOMMENT: zero-terminated
      if (flags & bit) {
        while (p < size && bytes[p] != 0) ++p;
        need(1);
        ++p;
      }
    if (flags & 0x02) {  // FHCRC: the low 16 bits of the CRC-32 of the header so far, checked as zlib does
      need(2);
      const uint32_t want = bytes[p] | (bytes[p + 1] << 8), got = crc32(bytes + pos, p - pos) & 0xFFFF;
      INDUCTIVE_CHECK(want == got, ErrorCode::kBadModelFile, what, ": gzip header CRC-16 mismatch: got ", got,
                      ", expected ", want);
      p += 2;
    }
    const size_t start = out.size();
    Inflater inf(bytes, size, p, out, start, max_output, what);
    p = inf.run();
    INDUCTIVE_CHECK(size - p >= 8, ErrorCode::kBadModelFile, what, ": truncated gzip trailer");
    const uint32_t crc = le32(bytes + p), isize = le32(bytes + p + 4);
    const uint32_t got_crc = crc32(out.data() + start, out.size() - start);
    INDUCTIVE_CHECK(crc == got_crc, ErrorCode::kBadModelFile, what, ": gzip CRC-32 mismatch: got ", got_crc,
                    ", expected ", crc);
    INDUCTIVE_CHECK(isize == static_cast<uint32_t>(out.size() - start), ErrorCode::kBadModelFile, what,
                    ": gzip size mismatch: got ", out.size() - start, " bytes, trailer says ", isize, " (mod 2^32)");
    pos = p + 8;
    ++member;
  }
  INDUCTIVE_CHECK(member > 0, ErrorCode::kBadModelFile, what, ": empty gzip stream");
  return out;
}

bool dataset_file_exists(const std::string& path) { return file_exists(path) || file_exists(path + ".gz"); }

std::vector<uint8_t> read_dataset_bytes(const std::string& path) {
  // An absent file is looked for compressed; when neither exists the error names the file asked for.
  std::vector<uint8_t> bytes = read_file_bytes(!file_exists(path) && file_exists(path + ".gz") ? path + ".gz" : path);
  if (is_gzip(bytes.data(), bytes.size())) return gunzip(bytes.data(), bytes.size(), path);
  return bytes;
}

}  // namespace inductive
