// libFuzzer target, differential: our gzip inflater (core/src/data/gzip.cpp, used by the browser build, which has
// no zlib) against zlib on arbitrary bytes.
//
// zlib's verdict follows ours' documented rules: one or more gzip members, then nothing or only zero bytes. When
// zlib accepts, ours must accept with the same bytes; when zlib rejects, ours must throw inductive::Error. Outputs
// are capped at 16 MiB on both sides (a larger one is refused by ours and skipped here).
#include <algorithm>
#include <vector>

#include <zlib.h>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/gzip.h"

namespace {

constexpr size_t kCap = size_t{16} << 20;

// zlib's reading of the same rules; false on an error or an output over the cap (then `capped` is set).
bool zlib_gunzip(const uint8_t* data, size_t size, std::vector<uint8_t>& out, bool& capped) {
  size_t pos = 0;
  int members = 0;
  std::vector<uint8_t> buffer(1 << 16);
  while (pos < size) {
    if (members > 0 && std::all_of(data + pos, data + size, [](uint8_t b) { return b == 0; })) break;
    z_stream s{};
    if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) return false;
    s.next_in = const_cast<Bytef*>(data + pos);
    s.avail_in = static_cast<uInt>(size - pos);
    int rc = Z_OK;
    while (rc == Z_OK) {
      s.next_out = buffer.data();
      s.avail_out = static_cast<uInt>(buffer.size());
      rc = inflate(&s, Z_NO_FLUSH);
      out.insert(out.end(), buffer.data(), buffer.data() + (buffer.size() - s.avail_out));
      if (out.size() > kCap) {
        capped = true;
        inflateEnd(&s);
        return false;
      }
      if (rc == Z_BUF_ERROR && s.avail_in == 0) break;  // truncated input
    }
    const size_t used = (size - pos) - s.avail_in;
    inflateEnd(&s);
    if (rc != Z_STREAM_END) return false;
    pos += used;
    ++members;
  }
  return members > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  std::vector<uint8_t> theirs;
  bool capped = false;
  const bool zlib_ok = zlib_gunzip(data, size, theirs, capped);
  if (capped) return 0;
  std::vector<uint8_t> ours;
  bool ours_ok = true;
  try {
    ours = inductive::gunzip(data, size, "fuzz.gz", kCap);
  } catch (const inductive::Error&) {
    ours_ok = false;
  }
  if (zlib_ok && !ours_ok) finding("gzip_fuzz", "zlib inflates this stream, ours refuses it");
  if (!zlib_ok && ours_ok) finding("gzip_fuzz", "ours inflates a stream zlib refuses");
  if (zlib_ok && ours != theirs) finding("gzip_fuzz", "ours and zlib inflate to different bytes");
  return 0;
}
